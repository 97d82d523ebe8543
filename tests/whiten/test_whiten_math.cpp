// SPDX-License-Identifier: LGPL-2.1-or-later
// The building blocks of whitening: the Cholesky solve, the regularised weights, the bicubic
// shift, and phase correlation's sub-pixel accuracy on star fields.
#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "pipeline/whiten/cholesky.hpp"
#include "pipeline/whiten/despike.hpp"
#include "pipeline/whiten/phase_correlation.hpp"
#include "pipeline/whiten/phase_peak.hpp"
#include "pipeline/whiten/pixel_rules.hpp"
#include "pipeline/whiten/reference.hpp"
#include "pipeline/whiten/resample.hpp"
#include "pipeline/whiten/weights.hpp"
#include "support/star_scene.hpp"
#include "whiten/whiten_sequence.hpp"

using namespace starsift;
using namespace starsift::test;

TEST_CASE("finite_float() on the host is std::isfinite for every exponent", "[whiten]") {
  // The host form tests the exponent's bits (so loops of it vectorise), the device form
  // v - v == 0: both must say what std::isfinite says. Every exponent and sign, with mantissas
  // at both ends and between.
  int checked = 0, finite = 0;
  for (std::uint32_t sign = 0; sign < 2; ++sign) {
    for (std::uint32_t exponent = 0; exponent < 256; ++exponent) {
      for (const std::uint32_t mantissa :
           {0u, 1u, 2u, 0x400000u, 0x2aaaaau, 0x7ffffeu, 0x7fffffu}) {
        const float v = std::bit_cast<float>(sign << 31 | exponent << 23 | mantissa);
        INFO("bits " << std::hex << std::bit_cast<std::uint32_t>(v));
        REQUIRE(finite_float(v) == std::isfinite(v));
        REQUIRE(finite_float(v) == (v - v == 0.0f));
        ++checked;
        finite += finite_float(v) ? 1 : 0;
      }
    }
  }
  CHECK(checked == 2 * 256 * 7);
  CHECK(finite == 2 * 255 * 7);  // all but the exponent of infinities and NaNs
}

TEST_CASE("Cholesky solves a positive definite system and refuses an indefinite one",
          "[whiten][math]") {
  // A = M^T M + I for a fixed M: positive definite.
  const int n = 5;
  std::mt19937 rng(3);
  std::normal_distribution<double> g;
  double m[n][n], a[n * n], x_true[n], b[n];
  for (auto& row : m)
    for (double& v : row) v = g(rng);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = i == j ? 1.0 : 0.0;
      for (int k = 0; k < n; ++k) s += m[k][i] * m[k][j];
      a[i * n + j] = s;
    }
  for (int i = 0; i < n; ++i) x_true[i] = i - 2.0;
  for (int i = 0; i < n; ++i) {
    b[i] = 0.0;
    for (int j = 0; j < n; ++j) b[i] += a[i * n + j] * x_true[j];
  }
  REQUIRE(cholesky_solve(a, n, n, b));
  for (int i = 0; i < n; ++i) CHECK(b[i] == Approx(x_true[i]).margin(1e-12));

  double indefinite[4] = {1.0, 2.0, 2.0, 1.0};
  double rhs[2] = {1.0, 1.0};
  CHECK_FALSE(cholesky_solve(indefinite, 2, 2, rhs));
  double nan_pivot[1] = {std::nan("")};
  CHECK_FALSE(cholesky_factor(nan_pivot, 1, 1));
}

TEST_CASE("whitening weights: ring order, regularisation and degenerate histories",
          "[whiten][math]") {
  // A 4-slot ring holding three frames in slots 2, 0, 3 (lags 1, 2, 3).
  const int ld = 4;
  std::vector<double> gram(ld * ld, 0.0);
  const double r_lag[3][3] = {{4.0, 1.0, 0.5}, {1.0, 3.0, 0.2}, {0.5, 0.2, 2.0}};
  const int slots[3] = {2, 0, 3};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) gram[slots[i] * ld + slots[j]] = r_lag[i][j];
  const double rhs[3] = {1.0, 2.0, 3.0};
  double work[9], a[3];
  const WhitenWeights w = solve_whiten_weights(gram.data(), ld, slots, 3, rhs, 0.0, work, a);
  CHECK(w.n == 3);
  CHECK(w.gamma == 0.0);
  CHECK_FALSE(w.regularised_more);
  for (int i = 0; i < 3; ++i) {  // R a = r
    double s = 0.0;
    for (int j = 0; j < 3; ++j) s += r_lag[i][j] * a[j];
    CHECK(s == Approx(rhs[i]).margin(1e-12));
  }
  CHECK(w.sum_sq == Approx(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]));

  // gamma is relative to tr(R) / n = 3.
  const WhitenWeights wg = solve_whiten_weights(gram.data(), ld, slots, 3, rhs, 0.1, work, a);
  CHECK(wg.gamma == Approx(0.3));
  for (int i = 0; i < 3; ++i) {
    double s = 0.3 * a[i];
    for (int j = 0; j < 3; ++j) s += r_lag[i][j] * a[j];
    CHECK(s == Approx(rhs[i]).margin(1e-12));
  }

  // Two identical frames with gamma 0: singular; gamma grows until it factors.
  std::vector<double> twin(ld * ld, 5.0);
  const int twin_slots[2] = {1, 2};
  const double twin_rhs[2] = {5.0, 5.0};
  const WhitenWeights wt =
      solve_whiten_weights(twin.data(), ld, twin_slots, 2, twin_rhs, 0.0, work, a);
  CHECK(wt.regularised_more);
  CHECK(wt.gamma > 0.0);
  CHECK(a[0] + a[1] == Approx(1.0).margin(1e-6));

  // An all-zero history predicts 0.
  std::vector<double> zero(ld * ld, 0.0);
  const WhitenWeights wz = solve_whiten_weights(zero.data(), ld, slots, 3, rhs, 0.0, work, a);
  CHECK(wz.sum_sq == 0.0);
  CHECK((a[0] == 0.0 && a[1] == 0.0 && a[2] == 0.0));
}

TEST_CASE("bicubic shift: whole pixels are exact, constants and ramps are kept", "[whiten][math]") {
  ThreadPool pool(2);
  Plane in(23, 17);
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(0.0f, 100.0f);
  for (float& v : in.pixels) v = u(rng);
  Plane out(23, 17);
  const ImageView out_view{reinterpret_cast<std::byte*>(out.pixels.data()), 23, 17, 23 * 4,
                           PixelFormat::Gray32F};

  // Whole-pixel shift: a copy with the border replicated.
  resample_shifted(in.view(), out_view, make_shift_kernel(2.0, -3.0), pool);
  for (int y = 0; y < 17; ++y)
    for (int x = 0; x < 23; ++x)
      REQUIRE(out.at(x, y) == in.at(std::clamp(x + 2, 0, 22), std::clamp(y - 3, 0, 16)));

  // The weights of any fraction sum to 1, so a constant stays; Keys' kernel reproduces
  // polynomials up to degree 2, so a ramp is shifted exactly away from the border.
  for (double f : {0.1, 0.25, 0.5, 0.77}) {
    const ShiftKernel k = make_shift_kernel(f, -f);
    float sx = 0, sy = 0;
    for (int i = 0; i < 4; ++i) {
      sx += k.wx[i];
      sy += k.wy[i];
    }
    CHECK(sx == Approx(1.0f).margin(1e-6));
    CHECK(sy == Approx(1.0f).margin(1e-6));
    Plane ramp(23, 17);
    for (int y = 0; y < 17; ++y)
      for (int x = 0; x < 23; ++x) ramp.at(x, y) = 3.0f * x - 2.0f * y + 0.05f * x * x;
    resample_shifted(ramp.view(), out_view, k, pool);
    for (int y = 3; y < 14; ++y)
      for (int x = 3; x < 20; ++x) {
        const double sxp = x + f, syp = y - f;
        REQUIRE(out.at(x, y) == Approx(3.0 * sxp - 2.0 * syp + 0.05 * sxp * sxp).margin(2e-4));
      }
  }
  CHECK(shifted_source_inside(make_shift_kernel(0.5, 0.0), 21, 0, 23, 17));
  CHECK_FALSE(shifted_source_inside(make_shift_kernel(0.5, 0.0), 22, 0, 23, 17));
  CHECK_FALSE(shifted_source_inside(make_shift_kernel(-0.5, 0.0), 0, 0, 23, 17));
  CHECK(shifted_source_inside(make_shift_kernel(0.0, 0.0), 22, 16, 23, 17));
}

TEST_CASE("bicubic shift: the unclamped inner columns equal sample_shifted() bit for bit",
          "[whiten][cpu]") {
  // resample_shifted() samples the columns whose taps all lie on the plane without clamps
  // (shift_row_inner()), the others through sample_shifted(): every pixel must be the latter's
  // value, whatever the width (narrower than the taps included) and the shift (past the edge
  // included).
  ThreadPool pool(2);
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> u(-50.0f, 4000.0f);
  for (const int w : {1, 2, 3, 4, 5, 7, 16, 33}) {
    for (const int h : {1, 4, 9}) {
      Plane in(w, h), out(w, h);
      for (float& v : in.pixels) v = u(rng);
      const ImageView out_view{reinterpret_cast<std::byte*>(out.pixels.data()), w, h,
                               static_cast<std::ptrdiff_t>(w * sizeof(float)),
                               PixelFormat::Gray32F};
      for (const double sx : {0.0, 0.3, -0.6, 1.5, -2.25, 3.9, -5.5, 40.2}) {
        const double sy = -0.7 * sx;
        const ShiftKernel k = make_shift_kernel(sx, sy);
        resample_shifted(in.view(), out_view, k, pool);
        auto read = [&](int x, int y) { return in.at(x, y); };
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < w; ++x) {
            INFO(w << "x" << h << " shift " << sx << " at " << x << "," << y);
            REQUIRE(out.at(x, y) == sample_shifted(k, x, y, w, h, read));
          }
      }
    }
  }
}

TEST_CASE("the peak refinement is exact on a sampled Gaussian", "[whiten][math]") {
  for (double c : {-0.49, -0.3, -0.05, 0.0, 0.12, 0.4}) {
    auto g = [&](double x) { return std::exp(-(x - c) * (x - c) / (2 * 1.4 * 1.4)); };
    CHECK(refine_peak(g(-1), g(0), g(1)) == Approx(c).margin(1e-12));
  }
  CHECK(refine_peak(1.0, 1.0, 1.0) == 0.0);  // flat: stays on the sample
  CHECK(refine_peak(-0.2, 1.0, 0.5) > 0.0);  // a non-positive neighbour: parabola on values
}

TEST_CASE("phase correlation recovers sub-pixel shifts of a star field to 0.05 px",
          "[whiten][math]") {
  const double shifts[][2] = {{0.0, 0.0}, {0.3, -0.2},    {-0.5, 0.5}, {1.27, -2.61}, {-3.42, 0.88},
                              {2.5, 3.5}, {-1.93, -1.07}, {5.2, -4.6}, {-7.3, 2.05}};
  for (int side : {64, 128}) {
    const StarScene scene = make_star_scene(side, side, side * side / 250, 21, 40.0, 4000.0);
    std::mt19937 rng(2);
    Plane ref = scene.render();
    add_noise(ref, 10.0, rng);
    PhaseCorrelator correlator(side);
    correlator.set_reference(ref.view());
    for (const auto& s : shifts) {
      if (side == 64 && std::hypot(s[0], s[1]) > 6.0) continue;  // a 64 px window: small shifts
      Plane frame = scene.render(s[0], s[1]);
      add_noise(frame, 10.0, rng);
      const ShiftEstimate e = correlator.estimate(frame.view());
      INFO("window " << side << " shift " << s[0] << ", " << s[1] << ": estimated " << e.dx << ", "
                     << e.dy << " peak " << e.peak);
      CHECK(std::abs(e.dx - s[0]) < 0.05);
      CHECK(std::abs(e.dy - s[1]) < 0.05);
      CHECK(e.peak > 0.3);
    }
  }
}

TEST_CASE("phase correlation of a frame with itself peaks at 0 with height 1", "[whiten][math]") {
  const StarScene scene = make_star_scene(96, 80, 30, 4);
  const Plane frame = scene.render();
  PhaseCorrelator correlator(64);  // the central 64 x 64 of a 96 x 80 frame
  correlator.set_reference(frame.view());
  const ShiftEstimate e = correlator.estimate(frame.view());
  CHECK(e.dx == Approx(0.0).margin(1e-6));
  CHECK(e.dy == Approx(0.0).margin(1e-6));
  CHECK(e.peak == Approx(1.0).margin(1e-3));
  // A later reference: the last frame's transform, reused.
  const Plane moved = scene.render(2.0, 1.0);
  const ShiftEstimate m = correlator.estimate(moved.view());
  CHECK(m.dx == Approx(2.0).margin(0.05));
  correlator.adopt_last_as_reference();
  const ShiftEstimate again = correlator.estimate(scene.render(3.0, 1.0).view());
  CHECK(again.dx == Approx(1.0).margin(0.05));
  CHECK(again.dy == Approx(0.0).margin(0.05));
}

namespace {

// window_despike() written out plainly: the finite neighbours inside the window, sorted.
float despike_by_sorting(const std::vector<float>& frame, int stride, int c, int r, int m) {
  const float self = frame[r * stride + c];
  if (!std::isfinite(self)) return self;
  std::vector<float> n;
  for (int y = r - 1; y <= r + 1; ++y)
    for (int x = c - 1; x <= c + 1; ++x) {
      if ((x == c && y == r) || x < 0 || y < 0 || x >= m || y >= m) continue;
      if (std::isfinite(frame[y * stride + x])) n.push_back(frame[y * stride + x]);
    }
  if (n.size() < 3) return self;
  std::sort(n.begin(), n.end());
  const float hi1 = n.back(), hi2 = n[n.size() - 2], lo1 = n[0], lo2 = n[1];
  if (self - hi2 > kDespikeRatio * (hi2 - lo1)) return hi2;
  if (lo2 - self > kDespikeRatio * (hi1 - lo2)) return lo2;
  return self;
}

}  // namespace

TEST_CASE("window_despike replaces hot and cold pixels and keeps stars", "[whiten][math]") {
  // A 24 x 24 window inside a 26-wide frame (the stride): sky with noise, a star, a hot
  // pixel, a pair of hot pixels, a cold pixel and non-finite samples.
  const int m = 24, stride = 26;
  std::vector<float> frame(static_cast<std::size_t>(stride) * m);
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(100.0f, 3.0f);
  for (float& v : frame) v = noise(rng);
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < m; ++c)
      frame[r * stride + c] += static_cast<float>(
          2000.0 * std::exp(-((c - 15) * (c - 15) + (r - 16) * (r - 16)) / (2 * 0.85 * 0.85)));
  frame[5 * stride + 4] += 3000.0f;  // hot
  frame[9 * stride + 9] += 800.0f;   // a hot pair
  frame[9 * stride + 10] += 1200.0f;
  frame[3 * stride + 18] -= 90.0f;  // cold
  const float nan = std::numeric_limits<float>::quiet_NaN();
  frame[12 * stride + 3] = nan;
  frame[20 * stride + 6] = std::numeric_limits<float>::infinity();
  for (int r = 0; r < m; ++r) frame[r * stride + 24] = frame[r * stride + 25] = 1e9f;  // unread
  for (int r = 0; r < m; ++r)
    for (int c = 0; c < m; ++c) {
      INFO("sample " << c << ", " << r);
      const float v = window_despike(frame.data(), stride, c, r, m);
      const float expected = despike_by_sorting(frame, stride, c, r, m);
      if (std::isnan(expected))
        CHECK(std::isnan(v));
      else
        CHECK(v == expected);
    }
  auto despiked = [&](int c, int r) { return window_despike(frame.data(), stride, c, r, m); };
  CHECK(despiked(4, 5) < 115.0f);  // the sky around it
  CHECK(despiked(9, 9) < 115.0f);
  CHECK(despiked(10, 9) < 115.0f);
  CHECK(despiked(18, 3) > 85.0f);
  CHECK(despiked(15, 16) == frame[16 * stride + 15]);  // a star of FWHM 2 keeps its core
  CHECK(std::isnan(despiked(3, 12)));
}

TEST_CASE("phase correlation measures the stars, not fixed hot pixels, to 0.05 px",
          "[whiten][math]") {
  // 0.2 % of the pixels hot at 3000 ADU, fixed on the sensor (some side by side): unfiltered,
  // the correlation peak stays near 0.
  const double shifts[][2] = {
      {0.3, -0.2}, {1.27, -2.61}, {-3.42, 0.88}, {2.5, 3.5}, {-1.93, -1.07}};
  const int side = 128;
  const StarScene scene = make_star_scene(side, side, side * side / 250, 21, 40.0, 4000.0);
  const std::vector<std::size_t> hot = random_pixels(side, side, side * side / 500, 5);
  std::mt19937 rng(2);
  auto frame_at = [&](double dx, double dy) {
    Plane p = scene.render(dx, dy);
    add_noise(p, 10.0, rng);
    for (const std::size_t i : hot) p.pixels[i] += 3000.0f;
    return p;
  };
  PhaseCorrelator correlator(side);
  correlator.set_reference(frame_at(0.0, 0.0).view());
  for (const auto& s : shifts) {
    const ShiftEstimate e = correlator.estimate(frame_at(s[0], s[1]).view());
    INFO("shift " << s[0] << ", " << s[1] << ": estimated " << e.dx << ", " << e.dy << " peak "
                  << e.peak);
    CHECK(std::abs(e.dx - s[0]) < 0.05);
    CHECK(std::abs(e.dy - s[1]) < 0.05);
  }
}

TEST_CASE("estimate_near finds the surface's peak near a given displacement", "[whiten][math]") {
  const StarScene scene = make_star_scene(128, 128, 60, 8, 40.0, 4000.0);
  std::mt19937 rng(4);
  Plane ref = scene.render();
  add_noise(ref, 10.0, rng);
  Plane frame = scene.render(5.3, -4.2);
  add_noise(frame, 10.0, rng);
  PhaseCorrelator correlator(128);
  correlator.set_reference(ref.view());
  const ShiftEstimate global = correlator.estimate(frame.view());
  CHECK(global.dx == Approx(5.3).margin(0.05));
  CHECK(global.dy == Approx(-4.2).margin(0.05));
  // Around the true displacement: the same peak, refined the same way.
  CHECK_FALSE(correlator.last_peak_far(4.6, -3.7));
  const std::optional<ShiftEstimate> same = correlator.estimate_near(4.6, -3.7);
  REQUIRE(same.has_value());
  CHECK(same->dx == global.dx);
  CHECK(same->dy == global.dy);
  CHECK(same->peak == global.peak);
  // Around 0: the highest local maximum of the 5 x 5 box there, if any, far lower.
  CHECK(correlator.last_peak_far(0.2, -0.3));
  const std::optional<ShiftEstimate> near = correlator.estimate_near(0.2, -0.3);
  if (near) {
    CHECK(std::abs(near->dx) <= kShiftNearRadius + 0.5);
    CHECK(std::abs(near->dy) <= kShiftNearRadius + 0.5);
    CHECK(near->peak < global.peak / kShiftStandOut);
  }
  // Just beside the peak (its flank in the box, the peak outside): no local maximum there
  // but noise, none as high as the flank.
  CHECK(correlator.last_peak_far(2.2, -4.1));
  const std::optional<ShiftEstimate> flank = correlator.estimate_near(2.2, -4.1);
  if (flank) CHECK(flank->peak < global.peak / kShiftStandOut);
}

TEST_CASE("the far-peak rule: far, standing out, confirmed", "[whiten][math]") {
  // Far: the peak's sample outside the 5 x 5 box around the previous displacement's pixel.
  CHECK_FALSE(shift_peak_far(2, 0, 0.0, 0.0));
  CHECK_FALSE(shift_peak_far(-2, 2, 0.4, -0.3));
  CHECK(shift_peak_far(3, 0, 0.4, -0.3));
  CHECK(shift_peak_far(-1, 3, 0.6, 0.4));
  // The sparse field of docs/quality.md: a noise peak of 0.033 against 0.025 near the
  // previous shift is not taken; a real jump on a star field (0.6 against 0.05) is.
  CHECK_FALSE(shift_far_peak_taken(0.033, 0.025, false));
  CHECK(shift_far_peak_taken(0.6, 0.05, false));
  CHECK(shift_far_peak_taken(0.033, 0.025, true));
  CHECK(shift_far_peak_confirmed(true, 8.9, -34.1, 9.3, -33.5));
  CHECK_FALSE(shift_far_peak_confirmed(true, 8.9, -34.1, 9.9, -33.5));
  CHECK_FALSE(shift_far_peak_confirmed(false, 8.9, -34.1, 8.9, -34.1));
}

TEST_CASE("despike: the interior form decides as the general one", "[whiten][cpu]") {
  // Integer samples as a camera gives them, with ties, spikes up and down, flat patches.
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> level(0, 4), noise(-30, 30), spike(0, 9);
  int spikes = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    float box[9];
    const int base = 1000 * level(rng);
    for (float& v : box) v = static_cast<float>(base + (trial % 7 == 0 ? 0 : noise(rng)));
    if (spike(rng) == 0) box[4] += 2000.0f;  // the centre up
    if (spike(rng) == 0) box[4] = 0.0f;      // or down
    if (spike(rng) == 0) box[spike(rng) % 9] += 5000.0f;
    auto read = [&](int x, int y) { return box[y * 3 + x]; };
    const DespikedSample general = despike_sample(read, 1, 1, 3, 3);
    const float neighbours[8] = {box[0], box[1], box[2], box[3], box[5], box[6], box[7], box[8]};
    const DespikedSample inner = despike_inner(box[4], neighbours);
    INFO("trial " << trial);
    REQUIRE(inner.spike == general.spike);
    REQUIRE(inner.value == general.value);
    // The CPU's row loop finds the extremes with selects, not fmaxf/fminf: the same values.
    const EightExtremes by_minmax = extremes_of_eight(neighbours, FloatMax{}, FloatMin{});
    const EightExtremes by_selects = extremes_of_eight(
        neighbours, [](float a, float b) { return a > b ? a : b; },
        [](float a, float b) { return a < b ? a : b; });
    REQUIRE(by_selects.hi1 == by_minmax.hi1);
    REQUIRE(by_selects.hi2 == by_minmax.hi2);
    REQUIRE(by_selects.lo1 == by_minmax.lo1);
    REQUIRE(by_selects.lo2 == by_minmax.lo2);
    spikes += general.spike;
  }
  CHECK(spikes > 1000);  // the cases above do exercise both outcomes
}

namespace {

// Whether f is exactly a binary16 value: within its normal range (or 0), and no bits beyond
// its 11 significant ones.
bool is_half_value(float f) {
  if (f == 0.0f) return true;
  const float a = std::abs(f);
  if (a < 6.103515625e-05f || a > 65504.0f) return false;
  int exponent = 0;
  const float mantissa = std::frexp(a, &exponent);  // a = mantissa * 2^exponent, [0.5, 1)
  const float scaled = std::ldexp(mantissa, 11);    // 11 significant bits: an integer
  return scaled == std::floor(scaled);
}

}  // namespace

TEST_CASE("half history values: binary16 values, nearest, in range", "[whiten][cpu]") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> level(-2000.0f, 70000.0f);
  for (const float scale : {1.0f, 0.5f}) {
    for (int i = 0; i < 100000; ++i) {
      const float v = level(rng);
      const float kept = half_history_value(v, scale);
      INFO("v " << v << " scale " << scale << " kept " << kept);
      REQUIRE(is_half_value(kept * scale));
      const float limit = 65504.0f / scale;
      if (std::abs(v) <= limit && std::abs(v * scale) >= 6.103515625e-05f) {
        // Nearest: within half a unit of the 11th significant bit.
        int exponent = 0;
        std::frexp(std::abs(v), &exponent);
        REQUIRE(std::abs(kept - v) <= std::ldexp(1.0f, exponent - 12));
      } else if (std::abs(v) > limit) {
        REQUIRE(std::abs(kept) == limit);
      }
    }
  }
  CHECK(half_history_value(1e-9f, 1.0f) == 0.0f);
  CHECK(half_history_value(65535.0f, 0.5f) == 65536.0f);  // 32767.5 -> 32768, a half value
  CHECK(half_history_value(1000.3f, 1.0f) == 1000.5f);    // steps of 0.5 in [512, 1024)
}

namespace {

// P(T > t) for Student's t with `dof` degrees of freedom, by Simpson's rule on x = t + u / (1 - u)
// (a direct integration of the density, independent of the approximation under test).
double student_tail(double t, double dof) {
  const double c = std::exp(std::lgamma((dof + 1.0) / 2.0) - std::lgamma(dof / 2.0)) /
                   std::sqrt(dof * 3.14159265358979323846);
  const auto density = [&](double x) {
    return c * std::pow(1.0 + x * x / dof, -(dof + 1.0) / 2.0);
  };
  const int n = 20000;
  const double end = 0.999999, h = end / n;
  double sum = 0.0;
  for (int i = 0; i <= n; ++i) {
    const double u = i * h, x = t + u / (1.0 - u), w = 1.0 / ((1.0 - u) * (1.0 - u));
    const double coef = (i == 0 || i == n) ? 1.0 : (i % 2 ? 4.0 : 2.0);
    sum += coef * density(x) * w;
  }
  return sum * h / 3.0;
}

}  // namespace

TEST_CASE("whitening's significance has Gaussian tails whatever sigma's degrees of freedom",
          "[whiten][math]") {
  // rho / sigma_{t-1} is Student-t; gaussian_significance() maps it to the z of equal tail.
  for (double dof : {5.0, 10.0, 20.0, 80.0, 159.0}) {
    for (double t : {3.0, 4.5, 6.0}) {
      const float z = gaussian_significance(static_cast<float>(t), static_cast<float>(dof));
      const double gauss = 0.5 * std::erfc(z / std::sqrt(2.0));
      const double student = student_tail(t, dof);
      INFO("dof " << dof << ", t " << t << ": z " << z << ", tails " << gauss << " / " << student);
      CHECK(gauss / student == Approx(1.0).margin(dof >= 20.0 && t <= 4.5 ? 0.01 : 0.08));
      // Symmetric, and below t: the raw ratio's tails are heavier.
      CHECK(gaussian_significance(static_cast<float>(-t), static_cast<float>(dof)) == -z);
      CHECK(z < t);
    }
  }
  // No sigma yet (dof 0) and 0 pass through; many degrees of freedom change little.
  CHECK(gaussian_significance(4.0f, 0.0f) == 4.0f);
  CHECK(gaussian_significance(0.0f, 10.0f) == 0.0f);
  CHECK(gaussian_significance(4.5f, 1e6f) == Approx(4.5f).epsilon(1e-4));
}

TEST_CASE("sigma's degrees of freedom follow its running mean, then its exponential average",
          "[whiten][math]") {
  const double frames = 80.0;
  CHECK(whiten_sigma_dof(0, frames) == 0.0);
  for (std::uint64_t k : {1u, 2u, 40u, 80u}) CHECK(whiten_sigma_dof(k, frames) == k);
  CHECK(whiten_sigma_dof(100000, frames) == Approx(2.0 * frames - 1.0).epsilon(1e-9));
  double previous = 0.0;
  for (std::uint64_t k = 1; k < 2000; k += 7) {
    const double dof = whiten_sigma_dof(k, frames);
    CHECK(dof >= previous);  // more frames, never fewer degrees of freedom
    previous = dof;
  }
  // The same by simulation: var_k = var_{k-1} + a_k (rho^2 - var_{k-1}), a_k = max(1/k, 1/T), on
  // unit Gaussian rho; Var(var_k) = 2 / dof.
  std::mt19937 rng(11);
  std::normal_distribution<double> g;
  for (std::uint64_t updates : {20u, 150u}) {
    const int runs = 20000;
    double sum = 0.0, sum2 = 0.0;
    for (int r = 0; r < runs; ++r) {
      double var = 0.0;
      for (std::uint64_t k = 1; k <= updates; ++k) {
        const double rho = g(rng);
        var += std::max(1.0 / static_cast<double>(k), 1.0 / frames) * (rho * rho - var);
      }
      sum += var;
      sum2 += var * var;
    }
    const double mean = sum / runs, spread = sum2 / runs - mean * mean;
    INFO(updates << " updates: mean " << mean << ", variance " << spread);
    CHECK(mean == Approx(1.0).margin(0.02));
    CHECK(2.0 / spread == Approx(whiten_sigma_dof(updates, frames)).epsilon(0.05));
  }
}

TEST_CASE("shift-noise: the registration's variance from the frame's gradient", "[whiten][math]") {
  // A ramp of 4 per px along x and 2 along y: |grad|^2 = 16 + 4 = 20, no curvature.
  CHECK(registration_variance(10.0f, 6.0f, 14.0f, 8.0f, 12.0f, 0.01f) == Approx(0.2f));
  // Off, or a centre that is no value: nothing.
  CHECK(registration_variance(10.0f, 6.0f, 14.0f, 8.0f, 12.0f, 0.0f) == 0.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(registration_variance(nan, 6.0f, 14.0f, 8.0f, 12.0f, 0.01f) == 0.0f);
  // A neighbour that is no value reads as the centre: half the difference on its axis, and
  // a curvature: left read as 10 gives gx 2, gy 2, a Laplacian of 4 (its square over 4: 4).
  CHECK(registration_variance(10.0f, nan, 14.0f, 8.0f, 12.0f, 0.01f) ==
        Approx(0.01f * (4.0f + 4.0f + 4.0f)));
  CHECK(registration_variance(10.0f, 6.0f, 14.0f, inf, 12.0f, 0.01f) ==
        Approx(0.01f * (16.0f + 1.0f + 1.0f)));
  // A star's peak: no gradient, all curvature (Laplacian -40: 400).
  CHECK(registration_variance(20.0f, 10.0f, 10.0f, 10.0f, 10.0f, 0.01f) == Approx(4.0f));
  // With nothing to add the significance's sigma is sigma's own, to the bit.
  WhitenNoiseConstants c;
  c.have_sigma = true;
  for (const float var : {0.0f, 1e-6f, 3.0f, 12345.678f}) {
    CHECK(significance_sigma(var, 0.0f, c) == pixel_sigma(var, c));
  }
  CHECK(significance_sigma(9.0f, 16.0f, c) == 5.0f);
  c.have_sigma = false;
  CHECK(significance_sigma(9.0f, 16.0f, c) == 0.0f);
}
