// The building blocks of whitening: the Cholesky solve, the regularised weights, the bicubic
// shift, and phase correlation's sub-pixel accuracy on star fields.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "pipeline/whiten/cholesky.hpp"
#include "pipeline/whiten/phase_correlation.hpp"
#include "pipeline/whiten/phase_peak.hpp"
#include "pipeline/whiten/resample.hpp"
#include "pipeline/whiten/weights.hpp"
#include "support/star_scene.hpp"

using namespace starsift;
using namespace starsift::test;

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
