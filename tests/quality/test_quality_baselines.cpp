// SPDX-License-Identifier: LGPL-2.1-or-later
// The quality benchmark's baselines (frame differencing, running median) and one cell run end
// to end on a tiny sky.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "app/quality/baselines.hpp"
#include "app/quality/cell_run.hpp"
#include "app/quality/methods.hpp"
#include "app/rng.hpp"
#include "pipeline/detect/psf_kernel.hpp"
#include "pipeline/sky/sky_generator.hpp"

using namespace starsift;
using namespace starsift::quality;

namespace {

// A still, noise-free star field with hot pixels and a sky gradient, in electrons.
Plane static_scene(int side) {
  SkyParams p;
  p.width = p.height = side;
  p.jitter = 0.0;
  p.movers = 0;
  p.hot_pixel_fraction = 1e-3;
  SkyGenerator sky(p, 1);
  Plane frame(side, side);
  SkyTruth truth;
  sky.render_expected(0, frame.view(), truth, kSkyAll);
  return frame;
}

float max_abs(const Plane& p) {
  float m = 0.0f;
  for (std::size_t i = 0; i < p.size(); ++i) m = std::max(m, std::fabs(p.data()[i]));
  return m;
}

}  // namespace

TEST_CASE("frame differencing and the running median of a still noise-free scene are zero",
          "[quality]") {
  const int side = 64;
  const Plane scene = static_scene(side);
  REQUIRE(max_abs(scene) > 100.0f);  // stars and hot pixels are there
  ThreadPool pool(2);

  FrameDifference diff(side, side);
  Plane residual(side, side, 123.0f);
  CHECK_FALSE(diff.process(scene, residual));  // no previous frame yet
  CHECK(residual.at(0, 0) == 123.0f);
  CHECK(diff.process(scene, residual));
  CHECK(max_abs(residual) == 0.0f);

  RunningMedian median(20, side, side);
  for (int k = 0; k < 20; ++k) CHECK_FALSE(median.process(scene, residual, pool));
  CHECK(median.process(scene, residual, pool));
  CHECK(max_abs(residual) == 0.0f);
}

TEST_CASE("the running median is the median of the last n frames", "[quality]") {
  const int w = 5, h = 3;
  ThreadPool pool(2);
  app::Rng rng(9);
  for (const int n : {1, 4, 5}) {
    RunningMedian median(n, w, h);
    std::vector<Plane> frames;
    Plane residual(w, h);
    for (int k = 0; k < n + 4; ++k) {
      Plane f(w, h);
      for (std::size_t i = 0; i < f.size(); ++i) f.data()[i] = static_cast<float>(rng.normal());
      const bool ready = median.process(f, residual, pool);
      CHECK(ready == (k >= n));
      if (ready) {
        for (std::size_t i = 0; i < f.size(); ++i) {
          std::vector<float> last;
          for (int j = 1; j <= n; ++j) last.push_back(frames[frames.size() - j].data()[i]);
          std::sort(last.begin(), last.end());
          const float m = n % 2 ? last[n / 2] : 0.5f * (last[n / 2 - 1] + last[n / 2]);
          CHECK(residual.data()[i] == Approx(f.data()[i] - m).margin(1e-6));
        }
      }
      frames.push_back(f);
    }
  }
}

TEST_CASE("the baselines' noise floors", "[quality]") {
  CHECK(difference_noise_floor() == Approx(std::sqrt(2.0)));
  // The large-n variance of a median, pi / 2n, is close at n = 20; exact for n = 1 (the mean).
  CHECK(median_noise_floor(20) == Approx(std::sqrt(1.0 + 3.141592653589793 / 40.0)).epsilon(0.005));
  CHECK(median_noise_floor(1) == Approx(std::sqrt(2.0)).epsilon(0.005));
}

TEST_CASE("bicubic interpolation's variance gain", "[quality]") {
  CHECK(interpolation_variance_gain(make_shift_kernel(0.0, 0.0)) == Approx(1.0));
  CHECK(interpolation_variance_gain(make_shift_kernel(-3.0, 2.0)) == Approx(1.0));
  // Keys' taps at half a pixel: -1/16, 9/16, 9/16, -1/16, whose squares sum to 0.640625.
  CHECK(interpolation_variance_gain(make_shift_kernel(0.5, 0.0)) == Approx(0.640625));
  CHECK(interpolation_variance_gain(make_shift_kernel(1.5, -0.5)) == Approx(0.640625 * 0.640625));
}

namespace {

// The rms residual of `kind` over the interior of the last of `frames` frames of a bright,
// jittering, noisy star field with no movers.
double star_field_residual_rms(MethodKind kind, double jitter) {
  SkyParams p;
  p.width = p.height = 128;
  p.jitter = jitter;
  p.movers = 0;
  p.hot_pixel_fraction = 0.0;
  p.star_density = 2.0e4;  // per Mpix: ~330 stars, so their residuals dominate when misaligned
  p.star_flux_min *= 4.0;
  SkyGenerator sky(p, 1);
  const FrameShape shape{p.width, p.height, PixelFormat::Gray16, p.bit_depth};
  const auto method = make_method(kind, 8, shape, BackendChoice{});
  std::vector<std::uint16_t> frame(static_cast<std::size_t>(p.width) * p.height);
  const ImageView view{reinterpret_cast<std::byte*>(frame.data()), p.width, p.height,
                       static_cast<std::ptrdiff_t>(p.width * sizeof(std::uint16_t)),
                       PixelFormat::Gray16};
  Plane adu(p.width, p.height);
  ThreadPool pool(2);
  SkyTruth truth;
  bool ready = false;
  for (int k = 0; k < 16; ++k) {
    sky.render(static_cast<std::uint64_t>(k), view, truth);
    for (std::size_t i = 0; i < frame.size(); ++i) adu.data()[i] = frame[i];
    ready = method->process(const_view(view), adu, pool);
  }
  REQUIRE(ready);
  double sum2 = 0.0;
  int n = 0;
  for (int y = 16; y < p.height - 16; ++y) {
    for (int x = 16; x < p.width - 16; ++x) {
      sum2 += static_cast<double>(method->residual().at(x, y)) * method->residual().at(x, y);
      ++n;
    }
  }
  return std::sqrt(sum2 / n);
}

// A grid of one cell small enough to run in a test: 96² frames, history 4, 6 warm-up frames,
// movers of peak SNR 20 at 1 px/frame. The tests that run a cell end to end vary only how
// long it is scored, how many movers it has and what it runs, so they share the rest.
QualityConfig tiny_grid(int scored_frames, int movers) {
  QualityConfig config;
  config.size = 96;
  config.history = 4;
  config.warmup_frames = 6;
  config.scored_frames = scored_frames;
  config.movers = movers;
  config.snrs = {20.0};
  config.speeds = {1.0};
  return config;
}

// The kernel the harness scores `scene`'s sky with, for its grid's first cell.
PsfKernel kernel_for(const QualityConfig& config, const SceneSpec& scene) {
  const SkyParams sky = sky_params_for(config, scene, make_cells(config).front());
  return make_psf_kernel(sky::Psf(sky.psf, sky.fwhm, sky.moffat_beta));
}

}  // namespace

TEST_CASE("aligned baselines follow the jitter that spoils the unaligned ones", "[quality]") {
  for (const auto& [plain, aligned] :
       {std::pair{MethodKind::Difference, MethodKind::DifferenceAligned},
        std::pair{MethodKind::RunningMedian, MethodKind::RunningMedianAligned}}) {
    INFO(method_name(plain));
    // Still: alignment measures no shift and changes nothing.
    const double still_plain = star_field_residual_rms(plain, 0.0);
    const double still_aligned = star_field_residual_rms(aligned, 0.0);
    // (phase correlation of noise measures a few hundredths of a pixel; the interpolation
    // smooths the noise a little)
    CHECK(still_aligned == Approx(still_plain).epsilon(0.05));
    // Jittering: the stars' residuals dominate without alignment and go with it, down to
    // close to the still field's noise.
    const double shaken_plain = star_field_residual_rms(plain, 1.0);
    const double shaken_aligned = star_field_residual_rms(aligned, 1.0);
    CHECK(shaken_plain > 3.0 * still_plain);
    CHECK(shaken_aligned < 2.0 * still_plain);
  }
}

TEST_CASE("one cell of the grid runs end to end on a tiny sky", "[quality]") {
  QualityConfig config = tiny_grid(2, 6);
  config.validate();
  const SceneSpec scene = config.scenes().front();
  const PsfKernel kernel = kernel_for(config, scene);
  ThreadPool pool(2);
  PictureFrame picture;
  const CellResult r = run_cell(config, scene, make_cells(config).front(), kernel, pool, &picture);
  REQUIRE(r.methods.size() == std::size(kAllMethods));
  REQUIRE_FALSE(r.trials.empty());
  CHECK(r.area_mpix_frames == Approx(2.0 * 80 * 80 / 1.0e6));
  for (const MethodSamples& m : r.methods) {
    CHECK(m.best.size() == r.trials.size());
    CHECK(m.noise_ratio.size() == 2);
    // Movers of peak SNR 20 stand far above any threshold: almost every one has a peak.
    const auto found =
        std::count_if(m.best.begin(), m.best.end(), [](float b) { return b > 6.0f; });
    CHECK(found >= static_cast<long>(0.8 * static_cast<double>(r.trials.size())));
  }
  for (const MoverTrial& t : r.trials) {
    // ideal = peak SNR * sqrt(sum P^2) / P_peak (sigma taken where the mover is).
    CHECK(t.ideal_snr == Approx(20.0 * std::sqrt(kernel.full_norm2) / kernel.peak).epsilon(0.06));
    CHECK(t.filter_snr < t.ideal_snr);
  }
  CHECK(picture.residuals.size() == std::size(kAllMethods));
  CHECK(picture.frame == config.warmup_frames);

  // The shipped chains, at each threshold: every trial scored; movers of peak SNR 20 are
  // found in most frames at 5 sigma, and tracked.
  REQUIRE(r.chains.size() == std::size(kAllChains));
  for (const ChainSamples& chain : r.chains) {
    REQUIRE(chain.at.size() == config.chain_thresholds.size());
    const auto five = static_cast<std::size_t>(
        std::find(config.chain_thresholds.begin(), config.chain_thresholds.end(), 5.0) -
        config.chain_thresholds.begin());
    REQUIRE(five < chain.at.size());
    for (const ChainAtThreshold& at : chain.at) CHECK(at.hit.size() == r.trials.size());
    const auto& hit = chain.at[five].hit;
    CHECK(std::count(hit.begin(), hit.end(), 1) >= static_cast<long>(0.8 * hit.size()));
  }
}

TEST_CASE("the harness runs the shipped chain alone", "[quality]") {
  QualityConfig config = tiny_grid(5, 4);
  config.methods.clear();
  config.chains = {ChainKind::Defaults};
  config.chain_thresholds = {5.0};
  config.validate();
  const SceneSpec scene = config.scenes().back();
  ThreadPool pool(2);
  const CellResult r =
      run_cell(config, scene, make_cells(config).front(), kernel_for(config, scene), pool);
  CHECK(r.methods.empty());
  REQUIRE(r.chains.size() == 1);
  const ChainSamples& chain = r.chains.front();
  REQUIRE(chain.at.size() == 1);
  // Movers of peak SNR 20 inside the interior for 5 frames: a track follows most of them.
  REQUIRE_FALSE(chain.track_movers.empty());
  const auto& tracked = chain.at.front().tracked;
  CHECK(std::count(tracked.begin(), tracked.end(), 1) >= static_cast<long>(tracked.size() / 2));
}

TEST_CASE("bad pixels are replaced by the median of their good neighbours", "[quality]") {
  const int w = 5, h = 4;
  std::vector<std::uint16_t> frame(w * h, 100);
  frame[1 * w + 1] = 4000;  // a hot pixel with a hot neighbour
  frame[1 * w + 2] = 3000;
  frame[0 * w + 0] = 90;  // its good neighbours: 90, 100 x 5, 110, 120
  frame[2 * w + 2] = 110;
  frame[2 * w + 0] = 120;
  frame[3 * w + 4] = 5000;  // in the corner: three neighbours
  frame[2 * w + 4] = 7;
  const std::vector<std::size_t> bad{1 * w + 1, 1 * w + 2, 3 * w + 4};
  std::vector<unsigned char> mask(w * h, 0);
  for (const std::size_t p : bad) mask[p] = 1;
  repair_bad_pixels(frame, w, h, bad, mask);
  // (1, 1): 7 good neighbours 90, 100, 100, 120, 100, 100, 110 -> lower median 100.
  CHECK(frame[1 * w + 1] == 100);
  CHECK(frame[1 * w + 2] == 100);
  // (4, 3): neighbours 100, 7, 100 -> 100.
  CHECK(frame[3 * w + 4] == 100);
  CHECK(frame[0] == 90);  // good pixels untouched
}
