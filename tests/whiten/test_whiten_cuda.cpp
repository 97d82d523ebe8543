// SPDX-License-Identifier: LGPL-2.1-or-later
// The CUDA whitening stage against the CPU reference on the same frame sequences, and the
// stage's device form through the streaming engine.
//
// Tolerances, and why:
// - shift: none: the per-pixel arithmetic is the same float operations in the same order on
//   both backends (the kernels are compiled without fused multiply-add); only the weights
//   differ, their double sums being added in another order (rows on the CPU, blocks on the
//   GPU): about 1e-12 relative, so as float they agree or differ by one unit in the last
//   place, and the prediction by under 1e-3 ADU. Integer outputs then differ by at most 1
//   (a rounding tie falling the other way) on at most 1e-3 of the pixels; float outputs by at
//   most 1e-3 ADU (+ 1e-6 relative). An outlier test that falls the other way at its
//   threshold changes that pixel's history and sigma: at most 1e-4 of the pixels may exceed
//   those bounds.
// - shift: resample: cuFFT and FFTW transforms differ at float rounding, the shift by about
//   1e-6 px, the aligned frame by up to ~1e-2 ADU on steep star profiles: integer outputs
//   |diff| <= 1 except 1e-3 of the pixels, at most 2 % at 1; float outputs within 0.05 ADU
//   except 1e-3 of the pixels.
// - WhitenStats: shifts to 1e-3 px, sum a^2 to 1e-4 relative, history_used / refit / warmup /
//   reference_changed / shift_rejected / excluded / despiked exactly, rejected within 1e-4 of the
//   pixels.
// - reject: objects (shift: resample): the box sums add the same floats in the same order, so
//   they differ only as the residuals do (above); a box test that falls the other way at its
//   threshold changes the decision of up to 9 pixels (the dilation), so rejected within 1e-3 of
//   the pixels, the outputs as for resample.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "pipeline/backend.hpp"
#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/sky/sky_generator.hpp"
#include "pipeline/whiten/whiten_stage.hpp"
#include "whiten/whiten_sequence.hpp"

using namespace starsift;
using namespace starsift::test;
using Catch::Contains;

namespace {

const BackendChoice& gpu() {
  static const BackendChoice choice = resolve_backend(Backend::Cuda, 0);
  return choice;
}

struct Tolerance {
  double integer_ones = 1e-3;  // fraction of pixels allowed to differ by 1 (integer outputs)
  double float_abs = 1e-3;     // float outputs: |diff| <= float_abs + float_rel |value|
  double float_rel = 1e-6;
  double beyond = 1e-4;         // fraction allowed beyond those bounds (outlier-test flips)
  double shift = 1e-3;          // px
  double weight_sq_rel = 1e-4;  // relative, sum a^2
  double rejected = 1e-4;       // fraction of pixels, WhitenStats::rejected
};

Tolerance resample_tolerance() {
  Tolerance t;
  t.integer_ones = 2e-2;
  t.float_abs = 0.05;
  t.beyond = 1e-3;
  return t;
}

Tolerance objects_tolerance() {
  Tolerance t = resample_tolerance();
  t.rejected = 1e-3;
  return t;
}

// Frames 0..count-1 made by `frame(t)` through a CUDA stage's process(), every frame's output
// and stats.
WhitenRun run_cuda(const WhitenParams& params, const FrameShape& shape, int count,
                   const std::function<TestImage(int)>& frame) {
  auto stage = make_whiten_stage(params, gpu());
  REQUIRE(stage->backend() == Backend::Cuda);
  stage->configure(shape);
  const FrameShape out_shape = stage->output_shape(shape);
  WhitenRun run;
  for (int t = 0; t < count; ++t) {
    const TestImage in = frame(t);
    TestImage out(out_shape.width, out_shape.height, out_shape.format, 12);  // padded rows
    stage->process(in.cview(), out.view());
    run.out.push_back(to_plane(out));
    run.stats.push_back(stage->last_stats());
    CHECK(run.stats.back().frame == static_cast<std::uint64_t>(t));
  }
  return run;
}

WhitenRun run_cuda(const WhitenParams& params, const SkySequence& sky, int count) {
  return run_cuda(params, sky.shape(), count, [&](int t) { return sky.frame(t); });
}

void compare_frame(const Plane& cpu, const Plane& cuda, bool integer_out, const Tolerance& tol,
                   int t) {
  REQUIRE(cpu.pixels.size() == cuda.pixels.size());
  const double pixels = static_cast<double>(cpu.pixels.size());
  long long ones = 0, beyond = 0;
  double worst = 0.0;
  for (std::size_t i = 0; i < cpu.pixels.size(); ++i) {
    const double a = cpu.pixels[i], b = cuda.pixels[i];
    if (std::isnan(a) && std::isnan(b)) continue;
    const double d = std::abs(a - b);
    worst = std::max(worst, d);
    if (integer_out) {
      if (d > 1.0)
        ++beyond;
      else if (d == 1.0)
        ++ones;
    } else if (!(d <= tol.float_abs + tol.float_rel * std::abs(a))) {
      ++beyond;
    }
  }
  INFO("frame " << t << ": " << ones << " pixels off by 1, " << beyond
                << " beyond the bound, largest difference " << worst);
  CHECK(ones <= tol.integer_ones * pixels);
  CHECK(beyond <= tol.beyond * pixels);
}

void compare_stats(const WhitenStats& cpu, const WhitenStats& cuda, double pixels,
                   const Tolerance& tol, int t) {
  INFO("frame " << t);
  CHECK(cuda.frame == cpu.frame);
  CHECK(cuda.history_used == cpu.history_used);
  CHECK(cuda.warmup == cpu.warmup);
  CHECK(cuda.refit == cpu.refit);
  CHECK(cuda.reference_changed == cpu.reference_changed);
  CHECK(cuda.shift_rejected == cpu.shift_rejected);
  CHECK(cuda.excluded == cpu.excluded);
  CHECK(cuda.despiked == cpu.despiked);
  CHECK(std::abs(cuda.shift_x - cpu.shift_x) <= tol.shift);
  CHECK(std::abs(cuda.shift_y - cpu.shift_y) <= tol.shift);
  CHECK(std::abs(cuda.shift_peak - cpu.shift_peak) <= 1e-3);
  CHECK(std::abs(cuda.weight_sq_sum - cpu.weight_sq_sum) <=
        tol.weight_sq_rel * std::abs(cpu.weight_sq_sum) + 1e-12);
  CHECK(std::abs(cuda.noise_floor - cpu.noise_floor) <= 1e-4 * cpu.noise_floor);
  CHECK(std::abs(cuda.gamma - cpu.gamma) <= 1e-6 * std::abs(cpu.gamma) + 1e-12);
  const double rejected_diff =
      std::abs(static_cast<double>(cuda.rejected) - static_cast<double>(cpu.rejected));
  CHECK(rejected_diff <= tol.rejected * pixels + 1.0);
}

void check_frames_against_reference(const WhitenParams& params, const FrameShape& shape, int count,
                                    const std::function<TestImage(int)>& frame,
                                    const Tolerance& tol = {}) {
  const WhitenRun cpu = run_whiten(params, shape, count, frame);
  const WhitenRun cuda = run_cuda(params, shape, count, frame);
  const bool integer_out = whiten_output_shape(params, shape).format != PixelFormat::Gray32F;
  const double pixels = static_cast<double>(shape.width) * shape.height;
  for (int t = 0; t < count; ++t) {
    compare_frame(cpu.out[t], cuda.out[t], integer_out, tol, t);
    compare_stats(cpu.stats[t], cuda.stats[t], pixels, tol, t);
  }
}

void check_against_reference(const WhitenParams& params, const SkySequence& sky, int count,
                             const Tolerance& tol = {}) {
  check_frames_against_reference(
      params, sky.shape(), count, [&](int t) { return sky.frame(t); }, tol);
}

SkySequence star_sky(int width, int height, PixelFormat format = PixelFormat::Gray16,
                     int bit_depth = 16) {
  SkySequence sky;
  sky.scene = make_star_scene(width, height, width * height / 200, 17, 30.0, 3000.0);
  sky.noise = 10.0;
  sky.format = format;
  sky.bit_depth = bit_depth;
  return sky;
}

// Output frames (as planes) of the device form through the streaming engine at `depth`.
std::vector<Plane> run_engine(const WhitenParams& params, const SkySequence& sky, int count,
                              int depth) {
  std::vector<std::unique_ptr<FilterStage>> stages;
  stages.push_back(make_whiten_stage(params, gpu()));
  auto engine = make_streaming_chain(std::move(stages), gpu(), depth);
  engine->configure(sky.shape());
  std::vector<Plane> out;
  auto take = [&]() {
    const FinishedFrame f = engine->wait_oldest();
    TestImage copy(f.output.width, f.output.height, f.output.format);
    for (int y = 0; y < f.output.height; ++y)
      std::memcpy(copy.view().row(y), f.output.row(y), f.output.row_bytes());
    out.push_back(to_plane(copy));
    REQUIRE(f.tag == out.size() - 1);
    engine->pop();
  };
  for (int t = 0; t < count; ++t) {
    if (engine->in_flight() == engine->depth()) take();
    const TestImage in = sky.frame(t);
    engine->submit(in.cview(), static_cast<std::uint64_t>(t));
  }
  while (engine->in_flight() > 0) take();
  return out;
}

bool identical(const Plane& a, const Plane& b) {
  return a.pixels.size() == b.pixels.size() &&
         std::memcmp(a.pixels.data(), b.pixels.data(), a.pixels.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("CUDA whitening: static and cloudy skies match the reference", "[whiten][cuda]") {
  SkySequence sky = star_sky(96, 64);
  WhitenParams p = classic_params();
  p.history = 8;
  SECTION("static") {
    check_against_reference(p, sky, 24);
  }
  SECTION("transparency changes") {
    sky.transparency = 0.03;
    check_against_reference(p, sky, 24);
  }
  SECTION("fit past") {
    sky.transparency = 0.03;
    p.fit = WhitenFit::Past;
    check_against_reference(p, sky, 24);
  }
}

TEST_CASE("CUDA whitening: jitter, shift none and resample", "[whiten][cuda]") {
  SkySequence sky = star_sky(128, 96);
  sky.jitter = 1.5;
  WhitenParams p = classic_params();
  p.history = 8;
  SECTION("none") {
    check_against_reference(p, sky, 20);
  }
  SECTION("resample") {
    p.shift = WhitenShift::Resample;
    p.shift_window = 64;
    check_against_reference(p, sky, 20, resample_tolerance());
  }
  SECTION("resample, reference changes under drift") {
    p.shift = WhitenShift::Resample;
    p.shift_window = 64;
    p.shift_max = 2.0;
    sky.jitter = 0.0;
    for (int t = 0; t < 16; ++t) sky.shifts.push_back({0.37 * t, -0.21 * t});
    check_against_reference(p, sky, 16, resample_tolerance());
  }
  SECTION("resample, fit past, reject none") {
    p.shift = WhitenShift::Resample;
    p.shift_window = 64;
    p.fit = WhitenFit::Past;
    p.reject = WhitenReject::None;
    check_against_reference(p, sky, 16, resample_tolerance());
  }
}

TEST_CASE("CUDA whitening: a half history, both shift modes and fits", "[whiten][cuda]") {
  // The stored values are the reference's half_history_value() on both backends, and every sum
  // reads them back as those floats: the backends agree as with a float history. 16 bits: the
  // samples are halved into binary16's range; 12 bits: not.
  for (int bits : {16, 12}) {
    SkySequence sky = star_sky(128, 96, PixelFormat::Gray16, bits);
    sky.jitter = 1.2;
    sky.hot_pixels = random_pixels(128, 96, 12, 5);
    sky.hot_level = 1500.0;
    sky.movers = {{3, 20.0, 30.0, 2.0, 1.0, 300.0}};
    WhitenParams p = classic_params();
    p.history = 8;
    p.history_format = WhitenHistoryFormat::Half;
    p.output = WhitenOutput::Float;
    for (WhitenShift shift : {WhitenShift::None, WhitenShift::Resample}) {
      for (WhitenFit fit : {WhitenFit::Current, WhitenFit::Past}) {
        INFO(bits << " bits, shift " << to_string(shift) << ", fit " << to_string(fit));
        p.shift = shift;
        p.shift_window = 64;
        p.fit = fit;
        check_against_reference(
            p, sky, 18, shift == WhitenShift::Resample ? resample_tolerance() : Tolerance{});
      }
    }
  }
}

TEST_CASE("CUDA whitening: resample with hot pixels, and a noise peak on a sparse field",
          "[whiten][cuda]") {
  WhitenParams p = classic_params();
  p.history = 8;
  p.shift = WhitenShift::Resample;
  SECTION("hot pixels under jitter: the despiked window") {
    SkySequence sky = star_sky(128, 96);
    sky.jitter = 1.5;
    sky.hot_pixels = random_pixels(128, 96, 128 * 96 / 500, 3);
    sky.hot_level = 3000.0;
    p.shift_window = 64;
    check_against_reference(p, sky, 16, resample_tolerance());
  }
  SECTION("a far noise peak not taken (docs/quality.md's sparse field)") {
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
    p.history = 20;
    const FrameShape shape{512, 512, PixelFormat::Gray16, sp.bit_depth};
    const auto frame = [&](int t) {
      TestImage in(512, 512, PixelFormat::Gray16);
      SkyTruth truth;
      generator.render(static_cast<std::uint64_t>(t), in.view(), truth);
      return in;
    };
    // Frame 21's highest peak is the far noise peak; the CPU takes the near one.
    const WhitenRun cpu = run_whiten(p, shape, 24, frame);
    REQUIRE(cpu.stats[21].shift_rejected);
    check_frames_against_reference(p, shape, 24, frame, resample_tolerance());
  }
  SECTION("a real jump and reference changes") {
    SkySequence sky = star_sky(128, 96);
    p.shift_window = 64;
    p.shift_max = 4.0;
    for (int t = 0; t < 14; ++t)
      sky.shifts.push_back(t < 5 ? std::pair{0.2 * t, -0.1 * t} : std::pair{5.6, -2.9});
    check_against_reference(p, sky, 14, resample_tolerance());
  }
}

TEST_CASE("CUDA whitening: despike of hot and dead pixels, both shift modes, on and off",
          "[whiten][cuda]") {
  // Hot pixels (0.2 %, some side by side by chance, and one pair placed), dead pixels (0 ADU)
  // and, for GRAY32F, a NaN sample: the spike test reads the same input samples on both
  // backends and decides with the same float operations, so the counts agree exactly.
  struct Case {
    PixelFormat format;
    int bit_depth;
  };
  for (const Case c : {Case{PixelFormat::Gray16, 12}, Case{PixelFormat::Gray8, 8},
                       Case{PixelFormat::Gray32F, 32}}) {
    SkySequence sky = star_sky(128, 96, c.format, c.bit_depth);
    sky.scene.sky = c.format == PixelFormat::Gray8 ? 60.0 : 400.0;
    sky.noise = c.format == PixelFormat::Gray8 ? 3.0 : 10.0;
    sky.jitter = 1.5;
    sky.hot_pixels = random_pixels(128, 96, 128 * 96 / 500, 5);
    sky.hot_pixels.push_back(50 * 128 + 70);
    sky.hot_pixels.push_back(50 * 128 + 71);
    sky.hot_level = c.format == PixelFormat::Gray8 ? 150.0 : 3000.0;
    const auto dead = random_pixels(128, 96, 6, 9);
    const auto frame = [&](int t) {
      TestImage in = sky.frame(t);
      for (const std::size_t i : dead)
        in.set_key(static_cast<int>(i % 128), static_cast<int>(i / 128), 0, 0);
      if (c.format == PixelFormat::Gray32F) {
        const float nan = std::numeric_limits<float>::quiet_NaN();
        std::memcpy(in.sample_ptr(20 + t, 30, 0), &nan, sizeof nan);
      }
      return in;
    };
    for (WhitenShift shift : {WhitenShift::None, WhitenShift::Resample}) {
      for (bool despike : {true, false}) {
        INFO(to_string(c.format) << " shift " << to_string(shift) << " despike " << despike);
        WhitenParams p = classic_params();
        p.history = 8;
        p.shift = shift;
        p.shift_window = 64;
        p.despike = despike;
        const FrameShape shape = sky.shape();
        const WhitenRun cpu = run_whiten(p, shape, 16, frame);
        CHECK((cpu.stats[15].despiked > 0) == despike);
        check_frames_against_reference(
            p, shape, 16, frame,
            shift == WhitenShift::Resample ? resample_tolerance() : Tolerance{});
      }
    }
  }
}

TEST_CASE("CUDA whitening: despiked samples in every output and warm-up mode", "[whiten][cuda]") {
  SkySequence sky = star_sky(96, 64, PixelFormat::Gray16, 12);
  sky.jitter = 1.0;
  sky.hot_pixels = random_pixels(96, 64, 20, 7);
  sky.hot_level = 2000.0;
  for (WhitenOutput output : {WhitenOutput::Residual, WhitenOutput::Significance,
                              WhitenOutput::Float, WhitenOutput::Snr, WhitenOutput::Sigma}) {
    for (WhitenWarmup warmup :
         {WhitenWarmup::Passthrough, WhitenWarmup::Zeros, WhitenWarmup::Partial}) {
      for (WhitenShift shift : {WhitenShift::None, WhitenShift::Resample}) {
        INFO("output " << to_string(output) << " warmup " << to_string(warmup) << " shift "
                       << to_string(shift));
        WhitenParams p = classic_params();
        p.history = 4;
        p.output = output;
        p.warmup = warmup;
        p.shift = shift;
        p.shift_window = 64;
        Tolerance tol = shift == WhitenShift::Resample ? resample_tolerance() : Tolerance{};
        // snr = residual / sigma_{t-1}, and in the first frames sigma is the |residual| of one
        // or two frames, near 0 at some pixels (snr in the hundreds and beyond), where the
        // backends' residuals, equal to ~1e-5 ADU, give quotients apart by a few per cent. The
        // residual (float) and sigma outputs, compared to the tight bounds, are its factors.
        if (output == WhitenOutput::Snr) tol.float_rel = 0.05;
        // Significance is that quotient in 64 levels per sigma (12 bits), clamped at +-32
        // sigma: the near-0 sigmas of the first frames clamp on both backends; a quotient apart
        // by a few per cent at a moderate snr is a few levels.
        if (output == WhitenOutput::Significance) tol.beyond = 2e-3;
        check_against_reference(p, sky, 8, tol);
      }
    }
  }
}

TEST_CASE("CUDA whitening: reject: objects under jitter, faint slow movers and hot pixels",
          "[whiten][cuda]") {
  // Peak SNR 5 movers at 0.3-0.6 px/frame on a star field of FWHM 3 px (the quality
  // benchmark's sky), one across a tile corner (32, 32), one along the frame's left edge, one
  // from the bottom right corner; a bright fast one; hot pixels (despiked: no measurement). The
  // object test is active from frame 5 (sigma trusted after 4 frames), so most frames run the
  // objects pass. 200 x 150 is no multiple of the strips' 120 columns and 32 rows.
  WhitenParams p = classic_params();
  p.history = 8;
  p.shift = WhitenShift::Resample;
  p.shift_window = 64;
  p.reject = WhitenReject::Objects;
  struct Case {
    int width, height;
    PixelFormat format;
    int bit_depth;
    WhitenOutput output;
  };
  for (const Case c : {Case{200, 150, PixelFormat::Gray16, 16, WhitenOutput::Residual},
                       Case{200, 150, PixelFormat::Gray16, 12, WhitenOutput::Float},
                       Case{128, 96, PixelFormat::Gray32F, 32, WhitenOutput::Snr},
                       // Rows of no multiple of 4 pixels: the strips' sample-at-a-time path.
                       Case{203, 149, PixelFormat::Gray16, 12, WhitenOutput::Significance}}) {
    INFO(c.width << "x" << c.height << " " << to_string(c.format) << ", output "
                 << to_string(c.output));
    SkySequence sky = star_sky(c.width, c.height, c.format, c.bit_depth);
    sky.scene.sky = 400.0;
    sky.scene.psf_sigma = 3.0 / 2.3548;
    sky.jitter = 1.0;
    sky.movers = {{2, 27.0, 29.0, 0.5, 0.3, 50.0},
                  {3, 1.5, 40.0, 0.2, 0.6, 50.0},
                  {4, c.width - 2.0, c.height - 2.5, -0.4, -0.3, 60.0},
                  {6, 60.0, 20.0, 2.0, 1.5, 400.0}};
    sky.hot_pixels = random_pixels(c.width, c.height, c.width * c.height / 1000, 13);
    sky.hot_level = 2000.0;
    p.output = c.output;
    const int frames = 24;
    // The scene exercises the object test: it rejects more than the per-pixel test alone.
    const auto frame = [&](int t) { return sky.frame(t); };
    WhitenParams mask = p;
    mask.reject = WhitenReject::Mask;
    const WhitenRun cpu_objects = run_whiten(p, sky.shape(), frames, frame);
    const WhitenRun cpu_mask = run_whiten(mask, sky.shape(), frames, frame);
    std::uint64_t by_objects = 0, by_mask = 0;
    for (int t = 0; t < frames; ++t) {
      by_objects += cpu_objects.stats[t].rejected;
      by_mask += cpu_mask.stats[t].rejected;
    }
    INFO("rejected over the run: " << by_objects << " (objects), " << by_mask << " (mask)");
    REQUIRE(by_objects > by_mask + 100);
    Tolerance tol = objects_tolerance();
    // snr divides by a sigma of one or two frames' residuals in the first frames (see the
    // despike case above).
    if (c.output == WhitenOutput::Snr) tol.float_rel = 0.05;
    check_against_reference(p, sky, frames, tol);
  }
}

TEST_CASE("CUDA whitening: shift-noise in the significance outputs, both rejections",
          "[whiten][cuda]") {
  // The registration's variance from x's four neighbours, at tile edges and the frame's edges
  // too (130 x 70 is no multiple of the tiles), with bright stars (large gradients), hot
  // pixels and a NaN-free integer frame; on shift: none the term is off on both backends.
  SkySequence sky = star_sky(130, 70, PixelFormat::Gray16, 12);
  sky.scene.psf_sigma = 1.0;
  sky.jitter = 1.5;
  sky.hot_pixels = random_pixels(130, 70, 9, 21);
  sky.hot_level = 2000.0;
  for (const WhitenReject reject : {WhitenReject::Mask, WhitenReject::Objects}) {
    for (const WhitenOutput output : {WhitenOutput::Significance, WhitenOutput::Snr}) {
      for (const WhitenShift shift : {WhitenShift::None, WhitenShift::Resample}) {
        if (reject == WhitenReject::Objects && shift == WhitenShift::None) continue;  // refused
        INFO("reject " << to_string(reject) << ", output " << to_string(output) << ", shift "
                       << to_string(shift));
        WhitenParams p = classic_params();
        p.history = 6;
        p.shift = shift;
        p.shift_window = 64;
        p.reject = reject;
        p.output = output;
        p.shift_noise = 0.05;
        Tolerance tol = reject == WhitenReject::Objects  ? objects_tolerance()
                        : shift == WhitenShift::Resample ? resample_tolerance()
                                                         : Tolerance{};
        // As in the despike case: sigma of one or two frames at first.
        if (output == WhitenOutput::Snr) tol.float_rel = 0.05;
        if (output == WhitenOutput::Significance) tol.beyond = 2e-3;
        check_against_reference(p, sky, 16, tol);
      }
    }
  }
}

TEST_CASE("CUDA whitening: a mover, with and without rejection", "[whiten][cuda]") {
  SkySequence sky = star_sky(96, 64);
  sky.movers = {{3, 10.0, 12.0, 2.5, 1.5, 400.0}};
  WhitenParams p = classic_params();
  p.history = 6;
  for (WhitenReject reject : {WhitenReject::Mask, WhitenReject::None}) {
    INFO("reject " << to_string(reject));
    p.reject = reject;
    check_against_reference(p, sky, 24);
  }
}

TEST_CASE("CUDA whitening: saturated stars leave the fit on both backends", "[whiten][cuda]") {
  SkySequence sky = star_sky(96, 64, PixelFormat::Gray16, 12);
  sky.scene.stars.push_back({30.0, 20.0, 20000.0});  // clipped at 4095 in every frame
  sky.scene.stars.push_back({60.3, 41.7, 3600.0});   // clipped in some frames only
  sky.transparency = 0.05;
  WhitenParams p = classic_params();
  p.history = 6;
  check_against_reference(p, sky, 20);
  p.fit = WhitenFit::Past;
  check_against_reference(p, sky, 20);
}

TEST_CASE("CUDA whitening: excluded pixels in every block, more than a block's list holds",
          "[whiten][cuda]") {
  // Saturated samples at random places (1e-3 of each frame's pixels: with 9 stored frames ~1 %
  // of the pixels are excluded; no despike, which would take isolated ones for spikes and keep
  // them in the fit at their neighbours' level), hot pixels and, in every fourth frame, four
  // saturated rows. The excluded-pixel pass's blocks own 32768 pixels (32 rows)
  // each here, the last a partial one: every block finds hundreds of excluded pixels, and the
  // band's block over 4096 (2048 on the fit rows of fit-subsample 2), several times the 1024 it
  // lists before adding their products. Float output: a wrong excluded sum moves the weights, and
  // with them the output, by far more than 1e-3 ADU.
  constexpr int kWidth = 1024, kHeight = 1000;
  SkySequence sky = star_sky(kWidth, kHeight, PixelFormat::Gray16, 12);
  sky.transparency = 0.02;
  sky.hot_pixels = random_pixels(kWidth, kHeight, kWidth * kHeight / 2000, 11);
  sky.hot_level = 3000.0;
  const int count = 14;
  std::vector<TestImage> frames;
  for (int t = 0; t < count; ++t) {
    TestImage in = sky.frame(t);
    for (const std::size_t i :
         random_pixels(kWidth, kHeight, kWidth * kHeight / 1000, 100 + static_cast<unsigned>(t)))
      in.set_key(static_cast<int>(i % kWidth), static_cast<int>(i / kWidth), 0, 4095);
    if (t % 4 == 1) {
      for (int y = 300; y < 304; ++y)
        for (int x = 0; x < kWidth; ++x) in.set_key(x, y, 0, 4095);
    }
    frames.push_back(std::move(in));
  }
  const auto frame = [&](int t) { return frames[t]; };
  const FrameShape shape = sky.shape();
  WhitenParams p = classic_params();
  p.history = 8;
  p.output = WhitenOutput::Float;
  p.despike = false;
  SECTION("fit current") {
    const WhitenRun cpu = run_whiten(p, shape, count, frame);
    REQUIRE(cpu.stats.back().refit);
    CHECK(cpu.stats.back().excluded > 8000u);
    check_frames_against_reference(p, shape, count, frame);
  }
  SECTION("fit past, fit-subsample 2") {
    p.fit = WhitenFit::Past;
    p.fit_subsample = 2;
    const WhitenRun cpu = run_whiten(p, shape, count, frame);
    REQUIRE(cpu.stats.back().refit);
    CHECK(cpu.stats.back().excluded > 4000u);
    check_frames_against_reference(p, shape, count, frame);
  }
}

TEST_CASE("CUDA whitening: every warm-up mode, fit and output", "[whiten][cuda]") {
  SkySequence sky = star_sky(64, 40);
  sky.transparency = 0.02;
  WhitenParams p = classic_params();
  p.history = 4;
  for (WhitenWarmup warmup :
       {WhitenWarmup::Passthrough, WhitenWarmup::Zeros, WhitenWarmup::Partial}) {
    for (WhitenFit fit : {WhitenFit::Current, WhitenFit::Past}) {
      for (WhitenOutput output : {WhitenOutput::Residual, WhitenOutput::Significance,
                                  WhitenOutput::Float, WhitenOutput::Snr, WhitenOutput::Sigma}) {
        INFO("warmup " << to_string(warmup) << ", fit " << to_string(fit) << ", output "
                       << to_string(output));
        p.warmup = warmup;
        p.fit = fit;
        p.output = output;
        Tolerance tol;
        if (output == WhitenOutput::Significance) tol.beyond = 2e-3;  // as above
        check_against_reference(p, sky, 10, tol);
      }
    }
  }
}

TEST_CASE("CUDA whitening: refit interval, fit subsample, long histories", "[whiten][cuda]") {
  SkySequence sky = star_sky(80, 48);
  sky.transparency = 0.02;
  WhitenParams p = classic_params();
  p.history = 5;
  SECTION("refit-interval 3") {
    p.refit_interval = 3;
    check_against_reference(p, sky, 16);
  }
  SECTION("fit-subsample 3") {
    p.fit_subsample = 3;
    check_against_reference(p, sky, 12);
  }
  SECTION("fit-subsample 3, half history: the dot products visit the fit rows' pairs") {
    // fit: current with half history reads pairs: an even width lists the fit rows' pairs,
    // an odd one (pairs straddle rows) walks every pair and loads those on a fit row.
    p.fit_subsample = 3;
    p.history_format = WhitenHistoryFormat::Half;
    check_against_reference(p, sky, 12);
    SkySequence odd = star_sky(81, 47);
    odd.transparency = 0.02;
    check_against_reference(p, odd, 12);
  }
  SECTION("history beyond the register schedule") {
    p.history = 30;  // kWhitenRegisterLags is 24: the spilling schedule
    check_against_reference(p, sky, 36);
    p.fit = WhitenFit::Past;
    check_against_reference(p, sky, 36);
  }
}

TEST_CASE("CUDA whitening: GRAY8, GRAY16 and GRAY32F in", "[whiten][cuda]") {
  WhitenParams p = classic_params();
  p.history = 5;
  SECTION("GRAY8") {
    SkySequence sky = star_sky(72, 40, PixelFormat::Gray8, 8);
    sky.scene.sky = 60.0;
    sky.noise = 3.0;
    check_against_reference(p, sky, 12);
  }
  SECTION("GRAY16 at 14 bits, float output") {
    p.output = WhitenOutput::Float;
    check_against_reference(p, star_sky(72, 40, PixelFormat::Gray16, 14), 12);
  }
  SECTION("GRAY32F, residual and snr") {
    const SkySequence sky = star_sky(72, 40, PixelFormat::Gray32F, 32);
    check_against_reference(p, sky, 12);
    p.output = WhitenOutput::Snr;
    check_against_reference(p, sky, 12);
  }
}

TEST_CASE("CUDA whitening: the device form through the engine, depth 1 and 3",
          "[whiten][cuda][engine]") {
  SkySequence sky = star_sky(96, 64);
  sky.jitter = 1.0;
  sky.movers = {{2, 10.0, 12.0, 2.5, 1.5, 400.0}};
  WhitenParams p = classic_params();
  p.history = 6;
  for (WhitenShift shift : {WhitenShift::None, WhitenShift::Resample}) {
    INFO("shift " << to_string(shift));
    p.shift = shift;
    p.shift_window = 64;
    const int frames = 20;
    const std::vector<Plane> one = run_engine(p, sky, frames, 1);
    const std::vector<Plane> three = run_engine(p, sky, frames, 3);
    const WhitenRun host = run_cuda(p, sky, frames);
    REQUIRE(one.size() == static_cast<std::size_t>(frames));
    REQUIRE(three.size() == static_cast<std::size_t>(frames));
    for (int t = 0; t < frames; ++t) {
      INFO("frame " << t);
      CHECK(identical(one[t], three[t]));     // same kernels, same order: the same bits
      CHECK(identical(one[t], host.out[t]));  // the host form runs the same device code
    }
  }
}

TEST_CASE("CUDA whitening: reset, live and restarting parameters, new shapes",
          "[whiten][cuda][stage]") {
  SkySequence sky = star_sky(64, 48);
  sky.transparency = 0.02;
  WhitenParams p = classic_params();
  p.history = 4;
  auto cuda = make_whiten_stage(p, gpu());
  auto cpu = make_whiten_stage(p, BackendChoice{Backend::Cpu, 0, "test"});
  auto step = [&](const SkySequence& s, int t) {
    const TestImage in = s.frame(t);
    const FrameShape out_shape = cpu->output_shape(s.shape());
    TestImage a(out_shape.width, out_shape.height, out_shape.format);
    TestImage b(out_shape.width, out_shape.height, out_shape.format);
    cpu->process(in.cview(), a.view());
    cuda->process(in.cview(), b.view());
    compare_frame(to_plane(a), to_plane(b), out_shape.format != PixelFormat::Gray32F, Tolerance{},
                  t);
    compare_stats(cpu->last_stats(), cuda->last_stats(),
                  static_cast<double>(s.scene.width) * s.scene.height, Tolerance{}, t);
  };
  cpu->configure(sky.shape());
  cuda->configure(sky.shape());
  for (int t = 0; t < 6; ++t) step(sky, t);
  CHECK(cuda->last_stats().frame == 5);

  // reset_state(): the next frame starts a new history.
  cpu->reset_state();
  cuda->reset_state();
  CHECK(cuda->last_stats().frame == 0);
  step(sky, 6);
  CHECK(cuda->last_stats().frame == 0);
  CHECK(cuda->last_stats().history_used == 0);
  for (int t = 7; t < 12; ++t) step(sky, t);

  // A live change keeps the history.
  p.gamma = 1e-2;
  p.gain = 2.0;
  cpu->set_params(p);
  cuda->set_params(p);
  step(sky, 12);
  CHECK(cuda->last_stats().frame == 6);
  CHECK(cuda->last_stats().refit);
  // despike too: off from the next frame, and on again.
  p.despike = false;
  cpu->set_params(p);
  cuda->set_params(p);
  step(sky, 13);
  CHECK(cuda->last_stats().frame == 7);
  CHECK(cuda->last_stats().despiked == 0);
  p.despike = true;
  cpu->set_params(p);
  cuda->set_params(p);

  // A change of history restarts it.
  p.history = 3;
  cpu->set_params(p);
  cuda->set_params(p);
  step(sky, 13);
  CHECK(cuda->last_stats().frame == 0);
  for (int t = 14; t < 18; ++t) step(sky, t);

  // A new output kind changes the output shape: configure again.
  p.output = WhitenOutput::Float;
  cpu->set_params(p);
  cuda->set_params(p);
  cpu->configure(sky.shape());
  cuda->configure(sky.shape());
  for (int t = 18; t < 22; ++t) step(sky, t);

  // Frames of a new shape after configure.
  SkySequence other = star_sky(50, 30, PixelFormat::Gray8, 8);
  other.scene.sky = 80.0;
  other.noise = 3.0;
  cpu->configure(other.shape());
  cuda->configure(other.shape());
  for (int t = 0; t < 6; ++t) step(other, t);
  const TestImage wrong = sky.frame(0);
  TestImage out(sky.scene.width, sky.scene.height, PixelFormat::Gray32F);
  CHECK_THROWS_AS(cuda->process(wrong.cview(), out.view()), Error);
}

TEST_CASE("CUDA whitening: reject: objects with shift: none is refused, with resample taken",
          "[whiten][cuda][stage]") {
  WhitenParams objects;
  objects.reject = WhitenReject::Objects;
  objects.shift = WhitenShift::None;
  const auto refused = [](const std::function<void()>& action) {
    REQUIRE_THROWS_WITH(
        action(),
        Contains("whiten reject objects with shift none is not implemented on the CUDA backend") &&
            Contains("neighbours' residuals") &&
            Contains("allowed: reject: objects with shift: resample"));
  };
  refused([&] { make_whiten_stage(objects, gpu()); });
  auto stage = make_whiten_stage(WhitenParams{}, gpu());  // the defaults: objects, resample
  refused([&] { stage->set_params(objects); });
  CHECK(stage->params() == WhitenParams{});
  stage->configure({64, 48, PixelFormat::Gray16, 16});
  refused([&] { stage->set_params(objects); });
  CHECK(stage->params() == WhitenParams{});
  // With shift: resample it is taken, at construction and as a new parameter (a new history).
  WhitenParams resample = objects;
  resample.shift = WhitenShift::Resample;
  resample.shift_window = 32;
  REQUIRE_NOTHROW(make_whiten_stage(resample, gpu()));
  REQUIRE_NOTHROW(stage->set_params(resample));
  CHECK(stage->params() == resample);
  const SkySequence sky = star_sky(64, 48);
  for (int t = 0; t < 8; ++t) {
    const TestImage in = sky.frame(t);
    TestImage out(64, 48, sky.format);
    stage->process(in.cview(), out.view());
  }
  CHECK(stage->last_stats().frame == 7);
}

// The engine hands each frame's stats back with it: copied on the device after the frame,
// before the next frame (on another slot's stream) may overwrite them, and downloaded with it.
TEST_CASE("CUDA whitening: each frame's stats come back with it from the engine",
          "[whiten][cuda][stage][engine]") {
  SkySequence sky = star_sky(96, 64);
  sky.jitter = 0.6;
  WhitenParams p = classic_params();
  p.history = 4;
  p.shift = WhitenShift::Resample;
  p.shift_window = 32;
  const int frames = 14;
  const WhitenRun expected = run_cuda(p, sky, frames);
  for (int depth : {1, 3, 8}) {
    std::vector<std::unique_ptr<FilterStage>> stages;
    stages.push_back(make_whiten_stage(p, gpu()));
    auto engine = make_streaming_chain(std::move(stages), gpu(), depth);
    engine->configure(sky.shape());
    std::vector<TestImage> inputs;
    for (int t = 0; t < frames; ++t) inputs.push_back(sky.frame(t));
    int seen = 0;
    auto take = [&] {
      const FinishedFrame done = engine->wait_oldest();
      REQUIRE(done.results.size() == 1);
      REQUIRE(done.results[0].header().count == 1);
      const WhitenStats stats = *done.results[0].view.records<WhitenStats>();
      INFO("depth " << depth << ", frame " << done.tag);
      CHECK(stats.frame == done.tag);
      const WhitenStats& want = expected.stats[done.tag];
      CHECK(stats.history_used == want.history_used);
      CHECK(stats.weight_sq_sum == want.weight_sq_sum);
      CHECK(stats.shift_x == want.shift_x);
      CHECK(stats.shift_y == want.shift_y);
      CHECK(stats.rejected == want.rejected);
      TestImage got(done.output.width, done.output.height, done.output.format);
      for (int y = 0; y < got.height; ++y) {
        std::memcpy(got.view().row(y), done.output.row(y), done.output.row_bytes());
      }
      CHECK(to_plane(got).pixels == expected.out[done.tag].pixels);
      engine->pop();
      ++seen;
    };
    for (int t = 0; t < frames; ++t) {
      if (engine->in_flight() == depth) take();
      engine->submit(inputs[t].cview(), static_cast<std::uint64_t>(t));
    }
    while (engine->in_flight() > 0) take();
    CHECK(seen == frames);
  }
}

// Small and quick, for compute-sanitizer (memcheck, racecheck, synccheck):
//   compute-sanitizer --tool memcheck build/tests/starsift_gpu_tests "[whiten-sanitizer]"
TEST_CASE("CUDA whitening: frames narrower or lower than the strips, and wider than one",
          "[whiten][cuda]") {
  // The strip passes take 4 columns a lane and 120 a warp: frames of a few pixels each way
  // (every lane's columns partly or wholly outside the frame, every pixel on an edge), and
  // frames that span several warps' strips with a width of no multiple of 4.
  WhitenParams p = classic_params();
  p.history = 4;
  struct Case {
    int width, height;
    WhitenShift shift;
  };
  for (const Case c : {Case{1, 9, WhitenShift::None}, Case{3, 17, WhitenShift::None},
                       Case{5, 2, WhitenShift::None}, Case{7, 1, WhitenShift::None},
                       Case{17, 16, WhitenShift::Resample}, Case{253, 19, WhitenShift::Resample}}) {
    INFO(c.width << "x" << c.height << " shift " << to_string(c.shift));
    SkySequence sky = star_sky(c.width, c.height, PixelFormat::Gray16, 12);
    sky.jitter = c.shift == WhitenShift::Resample ? 0.8 : 0.0;
    sky.hot_pixels = random_pixels(c.width, c.height, 1 + c.width * c.height / 100, 7);
    sky.hot_level = 2000.0;
    p.shift = c.shift;
    p.shift_window = 16;
    p.reject = c.shift == WhitenShift::Resample ? WhitenReject::Objects : WhitenReject::Mask;
    check_against_reference(p, sky, 10,
                            c.shift == WhitenShift::Resample ? objects_tolerance() : Tolerance{});
  }
}

TEST_CASE("CUDA whitening: one small run of every path", "[whiten][cuda][whiten-sanitizer]") {
  SkySequence sky = star_sky(37, 29, PixelFormat::Gray16, 12);  // odd sizes: partial warps
  sky.jitter = 0.8;
  sky.scene.stars.push_back({18.0, 14.0, 9000.0});  // clipped
  WhitenParams p = classic_params();
  p.history = 3;
  for (WhitenShift shift : {WhitenShift::None, WhitenShift::Resample}) {
    for (WhitenFit fit : {WhitenFit::Current, WhitenFit::Past}) {
      p.shift = shift;
      p.shift_window = 16;
      p.fit = fit;
      const WhitenRun run = run_cuda(p, sky, 7);
      CHECK(run.stats.back().history_used == 3);
    }
  }
  p.history_format = WhitenHistoryFormat::Half;
  for (WhitenShift shift : {WhitenShift::None, WhitenShift::Resample}) {
    p.shift = shift;
    const WhitenRun run = run_cuda(p, sky, 7);
    CHECK(run.stats.back().history_used == 3);
  }
  p.history_format = WhitenHistoryFormat::Float;
  // reject: objects: the object test runs from frame 5 (fit current) or 6 (past).
  p.shift = WhitenShift::Resample;
  p.reject = WhitenReject::Objects;
  for (WhitenFit fit : {WhitenFit::Current, WhitenFit::Past}) {
    p.fit = fit;
    const WhitenRun run = run_cuda(p, sky, 8);
    CHECK(run.stats.back().history_used == 3);
  }
}
