// SPDX-License-Identifier: LGPL-2.1-or-later
// The CPU reference of temporal whitening on synthetic star fields: the noise it leaves, the
// shifts it measures, what vanishes (stars) and what stays (movers), ghosts, warm-up, the two
// fits, restarts, and the outputs' consistency.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "pipeline/error.hpp"
#include "pipeline/sky/sky_generator.hpp"
#include "pipeline/whiten/despike.hpp"
#include "pipeline/whiten/pixel_rules.hpp"
#include "pipeline/whiten/reference.hpp"
#include "whiten/whiten_sequence.hpp"

using namespace starsift;
using namespace starsift::test;
using Catch::Contains;

namespace {

constexpr double kNoise = 10.0;

SkySequence still_sky(int side, PixelFormat format = PixelFormat::Gray32F, int bit_depth = 32) {
  SkySequence s;
  s.scene = make_star_scene(side, side, side * side / 200, 17, 30.0, 3000.0);
  s.noise = kNoise;
  s.format = format;
  s.bit_depth = bit_depth;
  return s;
}

WhitenParams params_with(WhitenOutput output, int history = WhitenParams::kDefaultHistory) {
  WhitenParams p = classic_params();
  p.output = output;
  p.history = history;
  return p;
}

// The residual rms over the interior of frames [first, last) relative to the floor
// kNoise * sqrt(1 + sum a^2) that frame's weights predict.
double noise_ratio(const WhitenRun& run, int first, int last, double noise = kNoise) {
  double ratio = 0.0;
  for (int t = first; t < last; ++t) {
    const Moments m = moments(run.out[t], 4);
    ratio += std::sqrt(m.std * m.std + m.mean * m.mean) / (noise * run.stats[t].noise_floor);
  }
  return ratio / (last - first);
}

}  // namespace

TEST_CASE("a static star field whitens to noise at the predicted floor", "[whiten][cpu]") {
  struct Case {
    PixelFormat format;
    int bit_depth;
  };
  for (const Case c : {Case{PixelFormat::Gray32F, 32}, Case{PixelFormat::Gray16, 16}}) {
    const SkySequence sky = still_sky(96, c.format, c.bit_depth);
    const WhitenRun run = run_whiten(params_with(WhitenOutput::Float), sky.shape(), 50,
                                     [&](int t) { return sky.frame(t); });
    // Integer frames add rounding noise (1/12 ADU^2) to each frame.
    const double noise =
        c.format == PixelFormat::Gray16 ? std::sqrt(kNoise * kNoise + 1.0 / 12) : kNoise;
    const double ratio = noise_ratio(run, 30, 50, noise);
    INFO(to_string(c.format) << ": residual / (sigma sqrt(1 + sum a^2)) = " << ratio << ", floor "
                             << run.stats[49].noise_floor);
    // Within 3 %: the current frame's own noise is fitted a little (20 of 9216 degrees of
    // freedom), and stars are not quite in the span of a regularised history.
    CHECK(ratio == Approx(1.0).margin(0.03));
    CHECK(run.stats[49].noise_floor == Approx(std::sqrt(1.0 + 1.0 / 20)).margin(0.01));
    CHECK(std::abs(moments(run.out[49]).mean) < 0.05 * kNoise);
    CHECK_FALSE(run.stats[49].warmup);
    CHECK(run.stats[49].history_used == 20);
  }
}

TEST_CASE("sigma converges to the residual noise and snr is residual over sigma", "[whiten][cpu]") {
  const SkySequence sky = still_sky(64);
  const auto frame = [&](int t) { return sky.frame(t); };
  const WhitenRun residual = run_whiten(params_with(WhitenOutput::Float), sky.shape(), 70, frame);
  const WhitenRun sigma = run_whiten(params_with(WhitenOutput::Sigma), sky.shape(), 70, frame);
  const WhitenRun snr = run_whiten(params_with(WhitenOutput::Snr), sky.shape(), 70, frame);
  const double expected = kNoise * residual.stats[69].noise_floor;
  // sigma averages ~40 frames' residuals per pixel: its mean is the noise level within a few %.
  CHECK(moments(sigma.out[69]).mean == Approx(expected).epsilon(0.05));
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) {
      const float s = sigma.out[69].at(x, y);
      REQUIRE(s > 0.0f);
      // The Gaussian equivalent of rho / sigma, sigma having averaged the 68 whitened frames
      // before (frames 1..68).
      const float dof = static_cast<float>(
          whiten_sigma_dof(68, params_with(WhitenOutput::Snr).effective_noise_frames()));
      REQUIRE(snr.out[69].at(x, y) == gaussian_significance(residual.out[69].at(x, y) / s, dof));
    }
  const Moments z = moments(snr.out[69]);
  CHECK(z.std == Approx(1.0).epsilon(0.1));
  // No sigma before the first whitened frame has been seen.
  CHECK(moments(sigma.out[0]).std == 0.0);
  CHECK(moments(sigma.out[1]).mean == 0.0);
  CHECK(moments(sigma.out[2]).mean > 0.0);
}

TEST_CASE("output: significance is offset + gain * snr in the input's format", "[whiten][cpu]") {
  // 12-bit frames: the automatic scale is 2^12 / 64 = 64 levels per sigma around 2048.
  const SkySequence sky = still_sky(64, PixelFormat::Gray16, 12);
  const auto frame = [&](int t) { return sky.frame(t); };
  const WhitenRun snr = run_whiten(params_with(WhitenOutput::Snr), sky.shape(), 50, frame);
  WhitenParams p = params_with(WhitenOutput::Significance);
  const WhitenRun significance = run_whiten(p, sky.shape(), 50, frame);
  const FrameShape out = whiten_output_shape(p, sky.shape());
  REQUIRE(out.format == PixelFormat::Gray16);
  REQUIRE(out.significance == SignificanceScale{2048.0, 64.0});
  int clamped = 0;
  for (int t : {0, 1, 5, 30, 49}) {
    for (int y = 0; y < 64; ++y)
      for (int x = 0; x < 64; ++x) {
        const float z = snr.out[t].at(x, y);
        const float expected = integer_output(z, 2048.0f, 64.0f, 4095.0f);
        INFO("frame " << t << " (" << x << ", " << y << ") snr " << z);
        REQUIRE(significance.out[t].at(x, y) == expected);
        clamped += expected == 0.0f || expected == 4095.0f;
      }
  }
  // Read back through the scale, the steady state is white noise of unit sigma.
  double sum = 0.0, sum2 = 0.0;
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) {
      const double z = (significance.out[49].at(x, y) - 2048.0) / 64.0;
      sum += z;
      sum2 += z * z;
    }
  const double mean = sum / 4096.0;
  CHECK(std::abs(mean) < 0.1);
  CHECK(std::sqrt(sum2 / 4096.0 - mean * mean) == Approx(1.0).epsilon(0.1));
  // Warm-up: without a fit the significance is 0, at the offset; beyond +-32 sigma clamped.
  CHECK(significance.out[0].at(10, 10) == 2048.0f);
  CHECK(clamped < 64 * 64);
}

TEST_CASE("shift: resample measures known shifts of both signs to 0.05 px", "[whiten][cpu]") {
  SkySequence sky = still_sky(128);
  // Frame 5 moves 9.5 px from the reference (> shift-max 8): it becomes the reference, and
  // frame 8 again (9.7 px from frame 5).
  sky.shifts = {{0.0, 0.0}, {0.4, -0.25}, {-1.3, 0.7}, {2.7, -3.1}, {-3.6, 2.2},
                {9.5, 0.3}, {10.2, 1.1},  {8.9, -0.6}, {-0.2, 0.4}, {0.35, -0.15}};
  WhitenParams p = params_with(WhitenOutput::Float, 4);
  p.shift = WhitenShift::Resample;
  const WhitenRun run = run_whiten(p, sky.shape(), 10, [&](int t) { return sky.frame(t); });
  for (int t = 0; t < 10; ++t) {
    const WhitenStats& s = run.stats[t];
    INFO("frame " << t << ": measured " << s.shift_x << ", " << s.shift_y << " true "
                  << sky.shifts[t].first << ", " << sky.shifts[t].second);
    // After a change of reference two estimates add up.
    const double tolerance = t >= 5 ? 0.08 : 0.05;
    CHECK(std::abs(s.shift_x - sky.shifts[t].first) < tolerance);
    CHECK(std::abs(s.shift_y - sky.shifts[t].second) < tolerance);
    CHECK(s.reference_changed == (t == 0 || t == 5 || t == 8));
    CHECK(s.shift_peak > 0.3);
  }
}

TEST_CASE("shift: resample measures the stars, not fixed hot pixels", "[whiten][cpu]") {
  SkySequence sky = still_sky(128);
  sky.jitter = 1.5;
  sky.hot_pixels = random_pixels(128, 128, 128 * 128 / 500, 3);  // 0.2 %
  sky.hot_level = 3000.0;
  WhitenParams p = params_with(WhitenOutput::Float, 4);
  p.shift = WhitenShift::Resample;
  const WhitenRun run = run_whiten(p, sky.shape(), 12, [&](int t) { return sky.frame(t); });
  for (int t = 1; t < 12; ++t) {
    const WhitenStats& s = run.stats[t];
    const auto [tx, ty] = sky.shift(t);
    INFO("frame " << t << ": measured " << s.shift_x << ", " << s.shift_y << " true " << tx << ", "
                  << ty);
    // Without the hot pixels every frame is within 0.05 px; a hot pixel on the flank of a
    // bright star sticks out less than the despike asks and stays (one frame: 0.07 px).
    CHECK(std::abs(s.shift_x - tx) < 0.08);
    CHECK(std::abs(s.shift_y - ty) < 0.08);
    CHECK_FALSE(s.shift_rejected);
  }
}

TEST_CASE("a noise peak on a sparse field does not become the shift reference", "[whiten][cpu]") {
  // docs/quality.md's reproducer: a still 512^2 field of ~50 stars, few of them bright, with
  // 64 faint movers; the correlation peak is 0.04-0.08 high, and in frame 21 a noise peak of
  // 0.033, 35 px away, is the highest. It used to become the reference, misregistering every
  // later frame by 35 px.
  SkyParams sp;
  sp.width = sp.height = 512;
  sp.seed = 2644632287095114242ull;
  sp.star_density = 200;
  sp.jitter = 0.0;
  sp.hot_pixel_fraction = 0.0;
  sp.movers = 64;
  sp.mover_snr_min = sp.mover_snr_max = 5.0;
  sp.mover_speed_min = sp.mover_speed_max = 3.5;
  SkyGenerator generator(sp, 1);
  const FrameShape shape{512, 512, PixelFormat::Gray16, sp.bit_depth};
  WhitenParams p = params_with(WhitenOutput::Float);
  p.shift = WhitenShift::Resample;
  const WhitenRun run = run_whiten(p, shape, 26, [&](int t) {
    TestImage in(512, 512, PixelFormat::Gray16);
    SkyTruth truth;
    generator.render(static_cast<std::uint64_t>(t), in.view(), truth);
    return in;
  });
  int rejected = 0;
  for (int t = 1; t < 26; ++t) {
    const WhitenStats& s = run.stats[t];
    INFO("frame " << t << ": measured " << s.shift_x << ", " << s.shift_y << " peak "
                  << s.shift_peak);
    CHECK_FALSE(s.reference_changed);
    // Sparse: the estimate scatters, but stays near the still field's 0.
    CHECK(std::hypot(s.shift_x, s.shift_y) < 1.5);
    rejected += s.shift_rejected ? 1 : 0;
  }
  CHECK(run.stats[21].shift_rejected);
  CHECK(rejected <= 3);
}

TEST_CASE("a real jump is followed on a field of faint stars", "[whiten][cpu]") {
  SkySequence sky;
  sky.scene = make_star_scene(128, 128, 12, 31, 60.0, 400.0);
  sky.noise = kNoise;
  for (int t = 0; t < 14; ++t)
    sky.shifts.push_back(t < 6 ? std::pair{0.0, 0.0} : std::pair{6.4, -3.3});
  WhitenParams p = params_with(WhitenOutput::Float, 4);
  p.shift = WhitenShift::Resample;
  const WhitenRun run = run_whiten(p, sky.shape(), 14, [&](int t) { return sky.frame(t); });
  for (int t = 0; t < 14; ++t) {
    const WhitenStats& s = run.stats[t];
    INFO("frame " << t << ": measured " << s.shift_x << ", " << s.shift_y << " peak "
                  << s.shift_peak << (s.shift_rejected ? " (rejected)" : ""));
    // Taken at once, or one frame later when the far peak is found again.
    if (t == 6) continue;
    CHECK(std::abs(s.shift_x - sky.shifts[t].first) < 0.3);
    CHECK(std::abs(s.shift_y - sky.shifts[t].second) < 0.3);
  }
}

namespace {

// 40 stars of peak 30 to `peak_max` on a 128² field, noise 5, jitter of up to 2 px a frame.
SkySequence jittered_stars(double peak_max, double psf_sigma) {
  SkySequence sky;
  sky.scene = make_star_scene(128, 128, 40, 23, 30.0, peak_max);
  sky.scene.psf_sigma = psf_sigma;
  sky.noise = 5.0;
  sky.jitter = 2.0;
  sky.seed = 8;
  return sky;
}

}  // namespace

TEST_CASE("under jitter, stars vanish with shift: resample and stay with shift: none",
          "[whiten][cpu]") {
  const SkySequence sky = jittered_stars(400.0, 1.5);
  double worst[2] = {0.0, 0.0};
  for (WhitenShift shift : {WhitenShift::None, WhitenShift::Resample}) {
    WhitenParams p = params_with(WhitenOutput::Float, 10);
    p.shift = shift;
    const WhitenRun run = run_whiten(p, sky.shape(), 30, [&](int t) { return sky.frame(t); });
    double& peak = worst[shift == WhitenShift::Resample];
    for (int t = 20; t < 30; ++t) {
      const auto [dx, dy] = sky.shift(t);
      for (const Star& star : sky.scene.stars) {
        const double x = star.x + dx, y = star.y + dy;
        if (x < 8 || y < 8 || x > 120 || y > 120) continue;  // the border has no history
        peak = std::max(peak, peak_near(run.out[t], x, y, 2) / sky.noise);
      }
    }
  }
  INFO("star residual peak / sigma: shift none " << worst[0] << ", resample " << worst[1]);
  // 25 pixels of noise around each of ~40 stars over 10 frames: 4.5 sigma is reached by noise
  // alone now and then; stars of up to 80 sigma leave at most a little more.
  CHECK(worst[1] < 6.0);
  CHECK(worst[0] > 20.0);
}

TEST_CASE("shift-noise lowers the significance of star residuals, not of the clear sky",
          "[whiten][cpu]") {
  // Bright stars under jitter leave resampling residuals; shift-noise divides them by the
  // error a registration of that many px leaves at each pixel, from the prediction's
  // derivatives: on the clear sky those are small, and the significance moves by well under a
  // per cent (measured: star peak 7.5 -> 4.0 sigma, the clear sky's sum of |z| 0.4 % lower at
  // 0.15 px).
  const SkySequence sky = jittered_stars(4000.0, 1.0);
  const auto run_with = [&](double shift_noise) {
    WhitenParams p = params_with(WhitenOutput::Snr, 10);
    p.shift = WhitenShift::Resample;
    p.shift_noise = shift_noise;
    return run_whiten(p, sky.shape(), 40, [&](int t) { return sky.frame(t); });
  };
  const WhitenRun off = run_with(0.0);
  const WhitenRun on = run_with(0.15);
  double star_off = 0.0, star_on = 0.0;
  std::vector<bool> near_star(128 * 128, false);
  for (const Star& star : sky.scene.stars) {
    for (int y = std::max(0, static_cast<int>(star.y) - 8);
         y < std::min(128, static_cast<int>(star.y) + 9); ++y) {
      for (int x = std::max(0, static_cast<int>(star.x) - 8);
           x < std::min(128, static_cast<int>(star.x) + 9); ++x) {
        near_star[static_cast<std::size_t>(y) * 128 + x] = true;
      }
    }
  }
  double sky_off = 0.0, sky_on = 0.0;
  for (int t = 30; t < 40; ++t) {
    const auto [dx, dy] = sky.shift(t);
    for (const Star& star : sky.scene.stars) {
      const double x = star.x + dx, y = star.y + dy;
      if (x < 8 || y < 8 || x > 120 || y > 120) continue;  // the border has no history
      star_off = std::max(star_off, peak_near(off.out[t], x, y, 2));
      star_on = std::max(star_on, peak_near(on.out[t], x, y, 2));
    }
    // The clear sky, away from every star and the border: the sum of |z|.
    for (int y = 10; y < 118; ++y) {
      for (int x = 10; x < 118; ++x) {
        if (near_star[static_cast<std::size_t>(y) * 128 + x]) continue;
        sky_off += std::fabs(off.out[t].at(x, y));
        sky_on += std::fabs(on.out[t].at(x, y));
      }
    }
  }
  INFO("star residual peak: shift-noise 0 " << star_off << " sigma, 0.15 px " << star_on
                                            << "; clear sky " << sky_off << " / " << sky_on);
  CHECK(star_off > 6.0);  // the residuals this scene leaves without the term
  CHECK(star_on < 0.6 * star_off);
  CHECK(sky_on <= sky_off);
  CHECK(sky_on > 0.99 * sky_off);
}

TEST_CASE("a mover survives whitening while the stars vanish", "[whiten][cpu]") {
  SkySequence sky = still_sky(96);
  sky.scene.psf_sigma = 1.5;
  const double amplitude = 20.0 * kNoise;
  sky.movers = {{30, 10.0, 20.0, 2.5, 1.5, amplitude}};
  const WhitenRun run = run_whiten(params_with(WhitenOutput::Float, 10), sky.shape(), 50,
                                   [&](int t) { return sky.frame(t); });
  for (int t = 32; t < 50; t += 3) {
    const Mover& m = sky.movers[0];
    // The mover's own brightest pixel, as rendered (pixel-integrated PSF).
    SkySequence alone = sky;
    alone.scene.stars.clear();
    alone.scene.sky = 0.0;
    const double truth = peak_near(alone.clean(t), m.x_at(t), m.y_at(t), 2);
    const double found = peak_near(run.out[t], m.x_at(t), m.y_at(t), 1);
    INFO("frame " << t << ": mover residual peak " << found << ", truth " << truth);
    CHECK(found == Approx(truth).margin(3.5 * kNoise));
  }
  double star_peak = 0.0;
  for (const Star& star : sky.scene.stars) {
    if (star.x < 6 || star.y < 6 || star.x > 89 || star.y > 89) continue;
    star_peak = std::max(star_peak, peak_near(run.out[45], star.x, star.y, 1) / kNoise);
  }
  CHECK(star_peak < 5.0);
}

TEST_CASE("reject: mask keeps movers out of the history; reject: none leaves ghosts",
          "[whiten][cpu]") {
  SkySequence sky = still_sky(96);
  sky.scene.psf_sigma = 1.5;
  // A bright mover, 4 px per frame: each place it visits is in the history for 5 frames.
  sky.movers = {{20, 8.0, 30.0, 4.0, 1.0, 30.0 * kNoise}};
  const int history = 5;
  double ghost[2] = {0.0, 0.0};
  for (WhitenReject reject : {WhitenReject::None, WhitenReject::Mask}) {
    WhitenParams p = params_with(WhitenOutput::Float, history);
    p.reject = reject;
    const WhitenRun run = run_whiten(p, sky.shape(), 38, [&](int t) { return sky.frame(t); });
    // The residual at the places the mover was 1..history frames ago, on average.
    double sum = 0.0;
    int count = 0;
    const Mover& m = sky.movers[0];
    for (int t = 22; t < 38; ++t) {
      for (int lag = 1; lag <= history && t - lag >= m.first; ++lag) {
        const int x = static_cast<int>(std::lround(m.x_at(t - lag)));
        const int y = static_cast<int>(std::lround(m.y_at(t - lag)));
        if (x < 2 || y < 2 || x > 93 || y > 93) continue;
        sum += run.out[t].at(x, y);
        ++count;
      }
    }
    ghost[reject == WhitenReject::Mask] = sum / count / kNoise;
    if (reject == WhitenReject::Mask) CHECK(run.stats[30].rejected > 0);
  }
  INFO("mean residual at the mover's past places / sigma: none " << ghost[0] << ", mask "
                                                                 << ghost[1]);
  // none: the history holds the mover with weight ~1/5 at each past place: ~ -0.2 * 30 * 0.87.
  CHECK(ghost[0] < -3.0);
  CHECK(std::abs(ghost[1]) < 0.5);
}

TEST_CASE("a lasting change is accepted into the history after `history` rejections",
          "[whiten][cpu]") {
  SkySequence sky = still_sky(64);
  // A star appears at frame 20 and stays.
  sky.movers = {{20, 32.0, 32.0, 0.0, 0.0, 50.0 * kNoise}};
  const WhitenRun run = run_whiten(params_with(WhitenOutput::Float, 8), sky.shape(), 60,
                                   [&](int t) { return sky.frame(t); });
  CHECK(peak_near(run.out[21], 32, 32, 1) > 30.0 * kNoise);  // new: in the residual
  CHECK(peak_near(run.out[59], 32, 32, 1) < 5.0 * kNoise);   // lasting: background by now
}

TEST_CASE("warm-up: passthrough, zeros and partial", "[whiten][cpu]") {
  const SkySequence sky = still_sky(48, PixelFormat::Gray16, 12);
  const int history = 4;
  const auto frame = [&](int t) { return sky.frame(t); };
  const float offset = 2048.0f;  // mid-range of 12 bits
  for (WhitenFit fit : {WhitenFit::Current, WhitenFit::Past}) {
    // The past fit needs one frame more: its target is the previous frame.
    const int warm = fit == WhitenFit::Past ? history + 1 : history;
    for (WhitenWarmup warmup :
         {WhitenWarmup::Passthrough, WhitenWarmup::Zeros, WhitenWarmup::Partial}) {
      WhitenParams p = params_with(WhitenOutput::Residual, history);
      p.warmup = warmup;
      p.fit = fit;
      const WhitenRun run = run_whiten(p, sky.shape(), warm + 2, frame);
      INFO(to_string(fit) << ", warmup " << to_string(warmup));
      for (int t = 0; t < warm + 2; ++t) {
        INFO("frame " << t);
        const WhitenStats& s = run.stats[t];
        CHECK(s.warmup == (t < warm));
        CHECK(s.history_used == std::min(std::max(t - (warm - history), 0), history));
        const Moments m = moments(run.out[t]);
        if (t >= warm) {  // whitened in every mode
          CHECK(m.mean == Approx(offset).margin(2.0));
          CHECK(m.std > 5.0);
          continue;
        }
        switch (warmup) {
          case WhitenWarmup::Passthrough:
            CHECK(run.out[t].pixels == to_plane(sky.frame(t)).pixels);
            break;
          case WhitenWarmup::Zeros:
            CHECK(m.mean == offset);
            CHECK(m.std == 0.0);
            break;
          case WhitenWarmup::Partial:
            if (s.history_used == 0) {  // nothing to predict from: the zero level
              CHECK(m.mean == offset);
              CHECK(m.std == 0.0);
            } else {
              CHECK(m.mean == Approx(offset).margin(2.0));
              CHECK(m.std > kNoise);  // fewer frames: more noise than the floor's 1.1 sigma
            }
            break;
        }
      }
    }
  }
}

TEST_CASE("warm-up of float, snr and sigma outputs", "[whiten][cpu]") {
  const SkySequence sky = still_sky(32);
  const auto frame = [&](int t) { return sky.frame(t); };
  for (WhitenOutput output : {WhitenOutput::Float, WhitenOutput::Snr, WhitenOutput::Sigma}) {
    WhitenParams p = params_with(output, 3);
    p.warmup = WhitenWarmup::Passthrough;
    const WhitenRun pass = run_whiten(p, sky.shape(), 2, frame);
    p.warmup = WhitenWarmup::Zeros;
    const WhitenRun zeros = run_whiten(p, sky.shape(), 2, frame);
    INFO(to_string(output));
    if (output == WhitenOutput::Float) {
      CHECK(pass.out[1].pixels == to_plane(sky.frame(1)).pixels);  // the input as float
    } else {
      CHECK(moments(pass.out[1]).std == 0.0);
      CHECK(moments(pass.out[1]).mean == 0.0);
    }
    CHECK(moments(zeros.out[1]).std == 0.0);
    CHECK(moments(zeros.out[1]).mean == 0.0);
  }
}

TEST_CASE("fit: current and fit: past both whiten; past solves from the Gram matrix alone",
          "[whiten][cpu]") {
  const SkySequence sky = still_sky(96);
  const auto frame = [&](int t) { return sky.frame(t); };
  WhitenParams p = params_with(WhitenOutput::Float, 10);
  const WhitenRun current = run_whiten(p, sky.shape(), 40, frame);
  p.fit = WhitenFit::Past;
  const WhitenRun past = run_whiten(p, sky.shape(), 40, frame);
  CHECK(noise_ratio(current, 25, 40) == Approx(1.0).margin(0.03));
  CHECK(noise_ratio(past, 25, 40) == Approx(1.0).margin(0.03));
  CHECK(current.stats[39].weight_sq_sum != past.stats[39].weight_sq_sum);

  // past: the weights for frame t fit frame t-1 from its own history; whitening frame t with
  // them equals fitting frame t-1 with the current fit (same sums) and predicting frame t.
  // The Gram matrix alone holds the sums only where no pixel is invalid: without despike,
  // which now and then takes a noise sample on the frame's edge for a spike.
  p.despike = false;
  ThreadPool pool(2);
  WhitenState state(p, sky.shape());
  for (int t = 0; t < 8; ++t) {
    const TestImage in = frame(t);
    TestImage out(in.width, in.height, PixelFormat::Gray32F);
    state.process(in.cview(), out.view(), pool);
  }
  // Frame 7's weights fit frame 6 from frames 5..0. Now that frame 7 is stored, frame 6 is
  // lag 2 and its history lags 3..8: the normal equations (R + gamma I) a = r must hold.
  const WhitenHistory& h = state.history();
  const std::vector<double>& a = state.weights();
  REQUIRE(a.size() == 6u);
  const int target = h.slot_of_lag(2);
  double residual_dot = 0.0;
  for (int k = 0; k < 6; ++k) {
    double ra = state.last_stats().gamma * a[k];
    for (int l = 0; l < 6; ++l) ra += h.gram_at(h.slot_of_lag(k + 3), h.slot_of_lag(l + 3)) * a[l];
    residual_dot = std::max(residual_dot, std::abs(ra - h.gram_at(target, h.slot_of_lag(k + 3))) /
                                              h.gram_at(target, target));
  }
  CHECK(residual_dot < 1e-9);
}

TEST_CASE("refit-interval reuses the weights between solves", "[whiten][cpu]") {
  const SkySequence sky = still_sky(48);
  WhitenParams p = params_with(WhitenOutput::Float, 4);
  p.refit_interval = 3;
  const WhitenRun run = run_whiten(p, sky.shape(), 16, [&](int t) { return sky.frame(t); });
  // Frames 1..4 grow the history (n changes: a solve each); then every third frame.
  for (int t = 0; t < 16; ++t) {
    INFO("frame " << t);
    const bool expected = (t >= 1 && t <= 4) || (t > 4 && (t - 4) % 3 == 0);
    CHECK(run.stats[t].refit == expected);
    if (!expected && t > 4) CHECK(run.stats[t].weight_sq_sum == run.stats[t - 1].weight_sq_sum);
  }
}

TEST_CASE("fit-subsample reads every k-th row and still whitens", "[whiten][cpu]") {
  const SkySequence sky = still_sky(96);
  WhitenParams p = params_with(WhitenOutput::Float, 10);
  p.fit_subsample = 4;
  const WhitenRun run = run_whiten(p, sky.shape(), 35, [&](int t) { return sky.frame(t); });
  CHECK(noise_ratio(run, 25, 35) == Approx(1.0).margin(0.04));
}

TEST_CASE("saturated pixels neither pull the weights nor show as residuals", "[whiten][cpu]") {
  // 16-bit frames, sky 1000 ADU, three stars clipped at 65535 and a transparency that changes
  // by 3 % per frame: the clipped plateaus do not scale with the rest. Counted in the fit, 75
  // clipped pixels (65535^2 each) would outweigh the whole sky and hold the weights' sum at 1
  // (measured: sky rms 1.22 sigma against a floor of 1.05). Stars at the edge of saturation are
  // clipped in some frames only: left out of those frames' sums alone (as zeros), they would
  // give each frame a different hole to fit (measured: 6.1 sigma); left out of every sum of
  // the window, they change nothing.
  const double noise = std::sqrt(kNoise * kNoise + 1.0 / 12);
  for (double peak : {1e6, 9e4}) {
    SkySequence sky = still_sky(96, PixelFormat::Gray16, 16);
    sky.transparency = 0.03;
    for (int i = 0; i < 3; ++i) sky.scene.stars.push_back({15.0 + 30 * i, 40.0 + 5 * i, peak});
    const WhitenRun run = run_whiten(params_with(WhitenOutput::Float, 10), sky.shape(), 35,
                                     [&](int t) { return sky.frame(t); });
    INFO("clipped stars of peak " << peak);
    // The sky far from the clipped stars stays at the floor.
    double ratio = 0.0;
    for (int t = 25; t < 35; ++t) {
      Plane band(96, 20);
      for (int y = 0; y < 20; ++y)
        for (int x = 0; x < 96; ++x) band.at(x, y) = run.out[t].at(x, 70 + y);
      const Moments m = moments(band, 2);
      ratio += std::sqrt(m.std * m.std + m.mean * m.mean) / (noise * run.stats[t].noise_floor) / 10;
    }
    CHECK(ratio == Approx(1.0).margin(0.03));
    CHECK(run.stats[34].excluded > 0);
    // Where the input is clipped the residual is 0: no measurement there.
    const TestImage last = sky.frame(34);
    int clipped = 0;
    for (int y = 0; y < 96; ++y)
      for (int x = 0; x < 96; ++x) {
        if (last.key(x, y, 0) != 65535) continue;
        ++clipped;
        REQUIRE(run.out[34].at(x, y) == 0.0f);
      }
    CHECK(clipped > 0);
    if (peak == 1e6) CHECK(noise_ratio(run, 25, 35, noise) == Approx(1.0).margin(0.03));
  }
}

TEST_CASE("residual output is offset + gain * residual, rounded and clamped", "[whiten][cpu]") {
  const SkySequence sky = still_sky(48, PixelFormat::Gray8, 8);
  const auto frame = [&](int t) {
    SkySequence dim = sky;
    dim.scene.sky = 40.0;
    dim.noise = 3.0;
    return dim.frame(t);
  };
  const FrameShape shape{48, 48, PixelFormat::Gray8, 8};
  WhitenParams p = params_with(WhitenOutput::Float, 4);
  const WhitenRun floats = run_whiten(p, shape, 8, frame);
  p.output = WhitenOutput::Residual;
  p.offset = 100.0;
  p.gain = 4.0;
  const WhitenRun ints = run_whiten(p, shape, 8, frame);
  for (int t = 0; t < 8; ++t)
    for (int y = 0; y < 48; ++y)
      for (int x = 0; x < 48; ++x) {
        const float expected =
            std::rint(std::clamp(100.0f + 4.0f * floats.out[t].at(x, y), 0.0f, 255.0f));
        REQUIRE(ints.out[t].at(x, y) == expected);
      }
}

TEST_CASE("results do not depend on the number of threads", "[whiten][cpu]") {
  SkySequence sky = still_sky(64);
  sky.jitter = 1.0;
  WhitenParams p = params_with(WhitenOutput::Float, 6);
  p.shift = WhitenShift::Resample;
  ThreadPool one(1), three(3);
  WhitenState a(p, sky.shape()), b(p, sky.shape());
  for (int t = 0; t < 12; ++t) {
    const TestImage in = sky.frame(t);
    TestImage out_a(64, 64, PixelFormat::Gray32F), out_b(64, 64, PixelFormat::Gray32F);
    a.process(in.cview(), out_a.view(), one);
    b.process(in.cview(), out_b.view(), three);
    REQUIRE(out_a.same_pixels(out_b));
  }
}

TEST_CASE("reset and parameter changes restart the history", "[whiten][cpu]") {
  const SkySequence sky = still_sky(32);
  ThreadPool pool(2);
  WhitenParams p = params_with(WhitenOutput::Float, 3);
  WhitenState state(p, sky.shape());
  TestImage out(32, 32, PixelFormat::Gray32F);
  for (int t = 0; t < 5; ++t) state.process(sky.frame(t).cview(), out.view(), pool);
  CHECK(state.last_stats().frame == 4);
  CHECK(state.last_stats().history_used == 3);

  // Live parameters: taken without a restart.
  WhitenParams live = p;
  live.gain = 2.0;
  live.gamma = 1e-3;
  live.warmup = WhitenWarmup::Zeros;
  live.despike = false;
  REQUIRE(state.can_update(live));
  state.update(live);
  state.process(sky.frame(5).cview(), out.view(), pool);
  CHECK(state.last_stats().frame == 5);

  // Anything else needs a new state.
  WhitenParams longer = live;
  longer.history = 4;
  CHECK_FALSE(state.can_update(longer));
  REQUIRE_THROWS_WITH(state.update(longer), Contains("need a new history"));

  state.reset();
  state.process(sky.frame(6).cview(), out.view(), pool);
  CHECK(state.last_stats().frame == 0);
  CHECK(state.last_stats().history_used == 0);
  CHECK(moments(to_plane(out)).std == 0.0);  // zeros warm-up: nothing to predict from
}

TEST_CASE("frames of another shape are refused", "[whiten][cpu]") {
  ThreadPool pool(1);
  WhitenState state(WhitenParams{}, {32, 32, PixelFormat::Gray16, 16});
  TestImage wrong(32, 31, PixelFormat::Gray16);
  TestImage out(32, 32, PixelFormat::Gray16);
  REQUIRE_THROWS_WITH(
      state.process(wrong.cview(), out.view(), pool),
      Contains("32x31 GRAY16_LE differs from the configured shape") && Contains("32x32 GRAY16_LE"));
  TestImage in(32, 32, PixelFormat::Gray16);
  TestImage float_out(32, 32, PixelFormat::Gray32F);
  REQUIRE_THROWS_WITH(state.process(in.cview(), float_out.view(), pool),
                      Contains("differs from the output shape"));
  REQUIRE_THROWS_AS(WhitenState(WhitenParams{}, {32, 32, PixelFormat::Bgrx, 8}), Error);
}

TEST_CASE("non-finite float samples stay out of the sums, the history and the output",
          "[whiten][cpu]") {
  const SkySequence sky = still_sky(48);
  ThreadPool pool(2);
  WhitenState state(params_with(WhitenOutput::Float, 5), sky.shape());
  TestImage out(48, 48, PixelFormat::Gray32F);
  for (int t = 0; t < 12; ++t) {
    TestImage in = sky.frame(t);
    const float bad[] = {std::numeric_limits<float>::quiet_NaN(),
                         std::numeric_limits<float>::infinity(),
                         -std::numeric_limits<float>::infinity()};
    for (int i = 0; i < 3; ++i) {
      const float v = bad[(t + i) % 3];
      std::memcpy(in.sample_ptr(5 + 7 * i + t, 9 + 3 * t, 0), &v, sizeof v);
    }
    state.process(in.cview(), out.view(), pool);
    INFO("frame " << t);
    REQUIRE(std::isfinite(state.last_stats().noise_floor));
    const Plane result = to_plane(out);
    for (const float v : result.pixels) REQUIRE(std::isfinite(v));
  }
  CHECK(state.last_stats().excluded > 0);
  CHECK(state.last_stats().noise_floor < 1.2);
}

namespace {

// Camera pixels of `sky` where the clean field is within 0.2 sigma of the sky level over the
// 7 x 7 box around them and under any shift of the jitter: `count` of them, spread along a
// diagonal, for hot pixels that lie on clear sky.
std::vector<std::pair<int, int>> clear_sky_pixels(const SkySequence& sky, int count) {
  SkySequence bare = sky;
  bare.hot_pixels.clear();
  bare.movers.clear();
  std::vector<std::pair<int, int>> out;
  const int w = sky.scene.width;
  for (int k = 8; k < w - 8 && static_cast<int>(out.size()) < count; k += 3) {
    const int x = k, y = (k * 7) % (w - 16) + 8;
    bool clear = true;
    for (int t = 0; t < 8 && clear; ++t) {
      const Plane p = bare.clean(t);
      for (int dy = -3; dy <= 3 && clear; ++dy)
        for (int dx = -3; dx <= 3; ++dx)
          if (std::abs(p.at(x + dx, y + dy) - sky.scene.sky) > 0.2 * sky.noise) clear = false;
    }
    if (clear) out.push_back({x, y});
  }
  return out;
}

// Samples of `in` that despike_sample() takes for spikes: within `radius` px of any of
// `points`, or (no points) anywhere at least one pixel from the edges (8 neighbours).
int spikes_near(const TestImage& in, const std::vector<std::pair<double, double>>& points = {},
                double radius = 0.0) {
  const Plane plane = to_plane(in);
  auto read = [&](int x, int y) { return plane.at(x, y); };
  int count = 0;
  for (int y = 1; y + 1 < in.height; ++y)
    for (int x = 1; x + 1 < in.width; ++x) {
      bool near = points.empty();
      for (const auto& [px, py] : points) near = near || std::hypot(x - px, y - py) <= radius;
      if (near) count += despike_sample(read, x, y, in.width, in.height).spike;
    }
  return count;
}

}  // namespace

TEST_CASE("despike: hot pixels, a hot pair and a dead pixel leave no residual", "[whiten][cpu]") {
  SkySequence sky = still_sky(96);
  sky.jitter = 1.2;
  const auto spots = clear_sky_pixels(sky, 4);
  REQUIRE(spots.size() == 4);
  const int w = sky.scene.width;
  auto index = [&](int x, int y) { return static_cast<std::size_t>(y) * w + x; };
  // One hot pixel, two side by side, another hot pixel; a dead pixel (0 ADU) on the fourth.
  sky.hot_pixels = {index(spots[0].first, spots[0].second), index(spots[1].first, spots[1].second),
                    index(spots[1].first + 1, spots[1].second),
                    index(spots[2].first, spots[2].second)};
  sky.hot_level = 3000.0;
  const auto dead = spots[3];
  const auto frame = [&](int t) {
    TestImage in = sky.frame(t);
    const float zero = 0.0f;
    std::memcpy(in.sample_ptr(dead.first, dead.second, 0), &zero, sizeof zero);
    return in;
  };
  std::vector<std::pair<int, int>> spikes = {spots[0], spots[1], spots[2], dead};
  spikes.push_back({spots[1].first + 1, spots[1].second});
  for (WhitenShift shift : {WhitenShift::None, WhitenShift::Resample}) {
    INFO("shift " << to_string(shift));
    sky.jitter = shift == WhitenShift::Resample ? 1.2 : 0.0;  // none: a still field
    WhitenParams p = params_with(WhitenOutput::Float, 8);
    p.shift = shift;
    const WhitenRun on = run_whiten(p, sky.shape(), 30, frame);
    SkySequence bare = sky;
    bare.hot_pixels.clear();
    const WhitenRun clean = run_whiten(p, sky.shape(), 30, [&](int t) { return bare.frame(t); });
    p.despike = false;
    const WhitenRun off = run_whiten(p, sky.shape(), 30, frame);
    double worst_on = 0.0, worst_off = 0.0;
    for (int t = 0; t < 30; ++t) {
      INFO("frame " << t);
      // The five spikes more than on the same frames without them (where ~1e-4 of the noise
      // samples, and ~1 % of those on the edge, stick out as far by chance).
      CHECK(on.stats[t].despiked == clean.stats[t].despiked + 5);
      CHECK(off.stats[t].despiked == 0);
      for (const auto& [x, y] : spikes) CHECK(on.out[t].at(x, y) == 0.0f);  // no measurement
      if (t < 20) continue;
      for (const auto& [x, y] : spikes) {
        worst_on = std::max(worst_on, peak_near(on.out[t], x, y, 3) / kNoise);
        worst_on = std::max(worst_on, -trough_near(on.out[t], x, y, 3) / kNoise);
        worst_off = std::max(worst_off, peak_near(off.out[t], x, y, 3) / kNoise);
        worst_off = std::max(worst_off, -trough_near(off.out[t], x, y, 3) / kNoise);
      }
    }
    INFO("largest |residual| / sigma within 3 px of the spikes: despike "
         << worst_on << ", without " << worst_off);
    // 49 pixels around each of 5 spikes over 10 frames: noise alone reaches ~4 sigma.
    CHECK(worst_on < 5.0);
    // Without despike the fixed spikes move on the aligned grid (resample) and stay in the
    // residual; on the camera's grid (none) they are part of the static scene.
    if (shift == WhitenShift::Resample) CHECK(worst_off > 20.0);
    // Elsewhere the same noise as without the spikes (star residuals of the resampling
    // included).
    CHECK(noise_ratio(on, 20, 30) == Approx(noise_ratio(clean, 20, 30)).margin(0.01));
  }
}

TEST_CASE("despike leaves stars of FWHM 1.5 px and faint movers alone", "[whiten][cpu]") {
  for (const double fwhm : {1.5, 2.0, 3.0}) {
    SkySequence sky;
    // Stars from peak SNR 20 (fainter ones of FWHM 1.5 px are despiked now and then, when the
    // noise flattens their neighbours: 1 of 1800 star-frames at peak SNR 5-2000), movers of
    // peak SNR 5 and 50.
    sky.scene = make_star_scene(96, 96, 60, 41, 20.0 * kNoise, 2000.0 * kNoise);
    sky.scene.psf_sigma = fwhm / 2.3548;
    sky.noise = kNoise;
    sky.jitter = 1.0;
    sky.movers = {{2, 10.0, 15.0, 2.0, 1.5, 5.0 * kNoise},
                  {2, 80.0, 20.0, -0.5, 1.0, 5.0 * kNoise},
                  {2, 20.0, 80.0, 3.5, -1.5, 50.0 * kNoise}};
    WhitenParams p = params_with(WhitenOutput::Float, 8);
    p.shift = WhitenShift::Resample;
    const WhitenRun run = run_whiten(p, sky.shape(), 30, [&](int t) { return sky.frame(t); });
    int at_sources = 0;
    std::uint64_t despiked = 0;
    for (int t = 0; t < 30; ++t) {
      std::vector<std::pair<double, double>> sources;
      const auto [dx, dy] = sky.shift(t);
      for (const Star& star : sky.scene.stars) sources.push_back({star.x + dx, star.y + dy});
      for (const Mover& m : sky.movers)
        if (m.present(t)) sources.push_back({m.x_at(t), m.y_at(t)});
      at_sources += spikes_near(sky.frame(t), sources, 2.0);
      despiked += run.stats[t].despiked;
    }
    INFO("FWHM " << fwhm << " px: " << at_sources << " samples despiked within 2 px of stars "
                 << "and movers in 30 frames, " << despiked << " in all");
    CHECK(at_sources == 0);
    // Elsewhere only noise that sticks out by chance: ~1.2e-4 of the samples with 8
    // neighbours, ~1 % of those on the edge (3 or 5 neighbours): ~5 a frame here.
    CHECK(despiked < 30 * 12);
  }
}

TEST_CASE("despike off despikes nothing; residual and passthrough outputs at a spike",
          "[whiten][cpu]") {
  SkySequence sky = still_sky(64, PixelFormat::Gray16, 12);
  sky.scene.sky = 200.0;
  for (WhitenShift shift : {WhitenShift::None, WhitenShift::Resample}) {
    WhitenParams p = params_with(WhitenOutput::Residual, 5);
    p.shift = shift;
    const WhitenRun on = run_whiten(p, sky.shape(), 12, [&](int t) { return sky.frame(t); });
    p.despike = false;
    const WhitenRun off = run_whiten(p, sky.shape(), 12, [&](int t) { return sky.frame(t); });
    for (int t = 0; t < 12; ++t) {
      INFO("frame " << t);
      CHECK(off.stats[t].despiked == 0);
      // Only noise that sticks out by chance: ~1e-4 of the samples, ~1 % of those on the edge.
      CHECK(on.stats[t].despiked <= 15);
    }
  }
  // A hot pixel: the residual output shows the offset there; passthrough shows the input.
  sky.hot_level = 2000.0;
  const auto spot = clear_sky_pixels(sky, 1);
  REQUIRE(spot.size() == 1);
  sky.hot_pixels = {static_cast<std::size_t>(spot[0].second) * 64 + spot[0].first};
  for (WhitenWarmup warmup : {WhitenWarmup::Passthrough, WhitenWarmup::Partial}) {
    for (WhitenOutput output : {WhitenOutput::Residual, WhitenOutput::Float}) {
      WhitenParams p = params_with(output, 5);
      p.warmup = warmup;
      const WhitenRun run = run_whiten(p, sky.shape(), 8, [&](int t) { return sky.frame(t); });
      const float offset = output == WhitenOutput::Residual ? 2048.0f : 0.0f;
      for (int t = 0; t < 8; ++t) {
        INFO("frame " << t << " warmup " << to_string(warmup) << " output " << to_string(output));
        CHECK(run.stats[t].despiked >= 1);
        const auto input = static_cast<float>(sky.frame(t).key(spot[0].first, spot[0].second, 0));
        const bool passing = warmup == WhitenWarmup::Passthrough && t < 5;
        CHECK(run.out[t].at(spot[0].first, spot[0].second) == (passing ? input : offset));
      }
    }
  }
}

namespace {

// The prediction frame t was whitened with, from the state after process(): its weights and
// the history frames one lag further back than they were (lag 1 is now frame t itself), summed
// as predict() does (float, lags in order).
float prediction_after(const WhitenState& state, int x, int y) {
  const WhitenHistory& h = state.history();
  float b = 0.0f;
  for (std::size_t k = 0; k < state.weights().size(); ++k) {
    const int slot = h.slot_of_lag(static_cast<int>(k) + 2);
    b += static_cast<float>(state.weights()[k]) * h.frame(slot).row_as<float>(y)[x];
  }
  return b;
}

float stored_after(const WhitenState& state, int x, int y) {
  const WhitenHistory& h = state.history();
  return h.frame(h.slot_of_lag(1)).row_as<float>(y)[x];
}

}  // namespace

TEST_CASE("reject: objects keeps a faint slow mover out of the history", "[whiten][cpu]") {
  SkySequence sky = still_sky(64);
  sky.scene.psf_sigma = 3.0 / 2.3548;  // FWHM 3 px, as the quality benchmark's sky
  // Peak SNR 5 at 0.5 px/frame: each pixel under the per-pixel 4 sigma test most of the time,
  // on nearly the same pixels for several frames.
  sky.movers = {{10, 14.0, 20.0, 0.45, 0.2, 5.0 * kNoise}};
  static ThreadPool pool(2);
  // Over frames 30..49: the mover's pixels (within 1 px of it) that store the prediction, out
  // of all of them.
  auto kept_by = [&](WhitenReject reject, int& pixels) {
    WhitenParams p = params_with(WhitenOutput::Float);
    p.reject = reject;
    WhitenState state(p, sky.shape());
    TestImage out(64, 64, PixelFormat::Gray32F);
    int kept = 0;
    pixels = 0;
    for (int t = 0; t < 50; ++t) {
      state.process(sky.frame(t).cview(), out.view(), pool);
      if (t < 30) continue;
      const Mover& m = sky.movers[0];
      const int x0 = static_cast<int>(std::lround(m.x_at(t)));
      const int y0 = static_cast<int>(std::lround(m.y_at(t)));
      for (int y = y0 - 1; y <= y0 + 1; ++y) {
        for (int x = x0 - 1; x <= x0 + 1; ++x) {
          ++pixels;
          kept += stored_after(state, x, y) == prediction_after(state, x, y);
        }
      }
    }
    return kept;
  };
  int pixels = 0;
  const int objects = kept_by(WhitenReject::Objects, pixels);
  const int mask = kept_by(WhitenReject::Mask, pixels);
  INFO("of " << pixels << " mover pixels the history stores the prediction at " << objects
             << " (objects), " << mask << " (mask)");
  CHECK(objects == pixels);
  // The per-pixel test alone lets most of them in: what reject: objects is for.
  CHECK(mask < pixels / 2);
}

TEST_CASE("reject: objects finds nothing more than mask where no box is significant",
          "[whiten][cpu]") {
  SkySequence sky = still_sky(64);
  sky.scene.psf_sigma = 1.5;
  sky.movers = {{12, 8.0, 30.0, 3.0, 1.0, 30.0 * kNoise}, {8, 40.0, 10.0, 0.3, 0.5, 5.0 * kNoise}};
  sky.jitter = 0.7;
  for (const WhitenShift shift : {WhitenShift::None, WhitenShift::Resample}) {
    WhitenParams mask = params_with(WhitenOutput::Float, 8);
    mask.shift = shift;
    WhitenParams objects = mask;
    objects.reject = WhitenReject::Objects;
    objects.reject_object_sigma = 1e30;  // no box sum reaches it
    WhitenParams other_k = mask;
    other_k.reject_object_sigma = 0.5;  // read by reject: objects only
    const auto frames = [&](int t) { return sky.frame(t); };
    const WhitenRun a = run_whiten(mask, sky.shape(), 40, frames);
    const WhitenRun b = run_whiten(objects, sky.shape(), 40, frames);
    const WhitenRun c = run_whiten(other_k, sky.shape(), 40, frames);
    std::uint64_t rejected = 0;
    for (int t = 0; t < 40; ++t) {
      INFO("shift " << to_string(shift) << ", frame " << t);
      REQUIRE(a.out[t].pixels == b.out[t].pixels);
      REQUIRE(a.out[t].pixels == c.out[t].pixels);
      CHECK(a.stats[t].rejected == b.stats[t].rejected);
      CHECK(a.stats[t].rejected == c.stats[t].rejected);
      rejected += a.stats[t].rejected;
    }
    CHECK(rejected > 0);  // the bright mover is rejected by the per-pixel test in all three
  }
}
