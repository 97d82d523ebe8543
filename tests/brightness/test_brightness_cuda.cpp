// SPDX-License-Identifier: LGPL-2.1-or-later
// The CUDA brightness correction (launch_brightness, the stage) against brightness_reference():
// GRAY8, GRAY16_LE at 12 and 16 bits, GRAY32F, RGBA and BGRx; odd sizes; pitches that take the
// vector loads and pitches that do not; every stretch; alpha and row padding untouched; the
// percentile's lo and hi.
//
// Mode local from sigma 8 (Auto) computes B on LuminanceBlur's small plane: there the
// launcher is held against the CPU's fast path (BrightnessCpu), B itself against
// LuminanceBlur (launch_brightness_blur); below sigma 8, or with a `blur` path named, against
// the reference.
//
// Tolerances (brightness.cuh, brightness_pixel.hpp), on v (the corrected value, in the
// format's units) before the stretch:
//  - the blur's exact sums (launch_gauss's fused path, Auto up to sigma 4, or Separable):
//    1e-5 of the range (the power in float, the blur's float sums in another order);
//  - the full plane's recursion (Recursive, or Auto between sigma 4 and 8): plus 0.51 strength
//    kRecursionBlurError of the range, the largest dC/dB (2 ln 2 strength / e) times the
//    recursion's error in B;
//  - the small plane against the CPU's fast path: 1e-5 of the range (the power: the CPU's
//    polynomial against exp2f/log2f; Y in the last place) plus 0.51 strength small_blur_error()
//    (B: the same tents and order, bit for bit on the host, test_brightness_small_plane.cpp;
//    Y's last place carried through the sums and the small plane's blur summed in another
//    order).
// An output sample then differs by that times the stretch's scale (times up to 1 / kLumaB for
// a colour channel: a pure blue pixel's blue is 13.9 times its luma), plus one count where it
// rounds the other way (on about twice that error's share of the samples). The percentile's
// lo and hi: exactly the reference's when v is the reference's (strength 0 or alpha 0: step 3
// of brightness_pixel.hpp), within one sensor value with the exact sums (every v within one of
// its rounding); the frame is then held against the reference stretched by the GPU's own lo
// and hi (a fixed stretch is the same map), within the tolerance above.
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "brightness_frames.hpp"
#include "cuda/brightness/brightness.cuh"
#include "cuda/cuda_check.hpp"
#include "pipeline/brightness/brightness_cpu.hpp"
#include "pipeline/brightness/brightness_stage.hpp"
#include "pipeline/brightness/luminance_blur.hpp"
#include "pipeline/gauss/params.hpp"
#include "support/device_copy.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

// The recursion's B against the exact blur's, of Y's range: 1.4e-4 on the CPU's recursion at
// a 0.1..0.9 step, the GPU's within 5e-5 of the CPU's (gauss.cuh).
constexpr double kRecursionBlurError = 2.5e-4;

struct Case {
  PixelFormat format;
  int bits;
};
const Case kCases[] = {{PixelFormat::Gray8, 8},   {PixelFormat::Gray16, 12},
                       {PixelFormat::Gray16, 16}, {PixelFormat::Gray32F, 32},
                       {PixelFormat::Rgba, 8},    {PixelFormat::Bgrx, 8}};

double max_of(const Case& c) {
  return brightness_sample_max({1, 1, c.format, c.bits});
}

std::string name_of(const Case& c) {
  if (c.format == PixelFormat::Gray16) return "GRAY16_LE/" + std::to_string(c.bits);
  return std::string(to_string(c.format));
}

struct Scratch {
  explicit Scratch(std::size_t size) : bytes(size) {
    cuda::check(cudaMalloc(&ptr, bytes), "cudaMalloc scratch");
  }
  ~Scratch() { cudaFree(ptr); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::size_t bytes;
  void* ptr = nullptr;
};

// Row padding: `vector`, a pitch of whole 16-byte words (every group of four pixels one
// aligned load); else a pitch of whole pixel words that is not a multiple of four pixels
// (from the second row on, groups take the pixel-at-a-time path). `extra` words more, so
// input and output differ in pitch.
int padding(PixelFormat format, int width, bool vector, int extra) {
  const int bpp = bytes_per_pixel(format);
  const int row = width * bpp;
  if (vector) return (16 - row % 16) % 16 + 16 * extra;
  int words = 1 + extra;
  if ((width + words) % 4 == 0) ++words;
  return words * bpp;
}

struct Run {
  TestImage out;
  cuda::BrightnessStretchRange range;
  bool padding_ok = false;
};

Run run_cuda(const BrightnessParams& p, const FrameShape& shape, const TestImage& in, bool vector,
             cuda::GaussPath path = cuda::GaussPath::Auto) {
  DeviceCopy d_in(in, padding(in.format, in.width, vector, 0));
  const TestImage blank(in.width, in.height, in.format);
  DeviceCopy d_out(blank, padding(in.format, in.width, vector, 1));
  Scratch scratch(cuda::brightness_scratch_bytes(p, shape));
  cuda::check(cuda::launch_brightness(p, shape, const_view(d_in.view()), d_out.view(), scratch.ptr,
                                      scratch.bytes, nullptr, path),
              "launch_brightness");
  cuda::check(cudaDeviceSynchronize(), "sync");
  Run r{d_out.download(), {}, d_out.padding_untouched()};
  cuda::check(cudaMemcpy(&r.range, cuda::brightness_stretch_range(scratch.ptr), sizeof r.range,
                         cudaMemcpyDeviceToHost),
              "stretch range");
  return r;
}

struct Agreement {
  double worst = 0.0;  // the largest |difference| of a colour sample
  long differing = 0;
  long samples = 0;
  bool alpha_same = true;  // byte 3 of colour frames: the input's
};

Agreement compare(const TestImage& got, const TestImage& want, const TestImage& in) {
  const FormatInfo& info = format_info(got.format);
  Agreement a;
  for (int y = 0; y < got.height; ++y) {
    for (int x = 0; x < got.width; ++x) {
      for (int c = 0; c < info.color_channels; ++c) {
        const double d = std::abs(value_at(got, x, y, c) - value_at(want, x, y, c));
        a.worst = std::max(a.worst, d);
        a.differing += d != 0.0;
        ++a.samples;
      }
      for (int c = info.color_channels; c < info.channels; ++c) {
        a.alpha_same &= value_at(got, x, y, c) == value_at(in, x, y, c);
      }
    }
  }
  return a;
}

// Whether B comes from LuminanceBlur's small plane: mode local, Auto, from sigma 8.
bool small_plane(const BrightnessParams& p, cuda::GaussPath path) {
  return p.mode == BrightnessMode::Local && path == cuda::GaussPath::Auto &&
         LuminanceBlur::downsample_factor(p.sigma) > 1;
}

// The small plane's blur on the launcher's side against LuminanceBlur's, of Y's range. The
// tents are the same floats summed in the same order, so B differs by Y's last place (the
// GPU's Y is the reference's double quotient rounded, the CPU's a float product: 2 ulp) and
// what it moves: at most a last place (2^-24 of values below 1) per operation of the tents'
// sums, 4 f + 4 each way, and of the interpolation, 6: (8 f + 16) 2^-24 in all; and by the
// blur of the small plane: the exact sums, within 2 (2 r + 1) 2^-24 in float (r =
// ceil(4 sigma_s) taps each side, two axes, in another order), or where either takes the
// recursion (sigma_s >= 25, as on a frame one pixel wide) the GPU's within 5e-5 of the CPU's
// (gauss.cuh). 9.7e-6 at sigma 40, 1.5e-5 at sigma 100: worst cases, the rounding errors of
// one sum rarely all leaning the same way.
double small_blur_error(const BrightnessParams& p, const FrameShape& shape) {
  const int factor = LuminanceBlur::downsample_factor(p.sigma);
  const auto sigma_s = [&](int pixels) {
    const int samples = LuminanceBlur::small_samples(pixels, factor);
    const double spacing = samples > 1 ? static_cast<double>(pixels - 1) / (samples - 1) : 1.0;
    return LuminanceBlur::small_sigma(p.sigma, spacing);
  };
  const double sigma = std::max(sigma_s(shape.width), sigma_s(shape.height));
  const double y_error = (8.0 * factor + 16.0) * 0x1p-24;
  if (sigma >= GaussParams::kRecursiveFromSigma) return y_error + 5e-5;
  const double taps = 2.0 * std::ceil(GaussParams::kRadiusPerSigma * sigma) + 1.0;
  return y_error + 2.0 * taps * 0x1p-24;
}

// Whether B comes from launch_gauss's recursion on the full plane (Auto: beyond the fused
// path's radii, below the small plane's sigma).
bool recursive_blur(const BrightnessParams& p, cuda::GaussPath path) {
  if (small_plane(p, path)) return false;
  GaussParams g;
  g.sigma_x = g.sigma_y = p.sigma;
  if (path == cuda::GaussPath::Auto) path = cuda::gauss_exact_path(g);  // as brightness asks
  return path == cuda::GaussPath::Recursive;
}

// What the output may differ by from the reference's: `worst` for any sample; `share`, the
// share of samples that may differ at all (v within its error of a rounding boundary: about
// twice the error in counts; a systematic difference would move half of them or more).
struct Tolerance {
  double worst;
  double share;
};

// v's error, of the range, before the stretch.
double value_error(const BrightnessParams& p, const FrameShape& shape, cuda::GaussPath path) {
  // Mode clahe: the mapped plane is the reference's, v its float rounding.
  const bool clahe = p.mode == BrightnessMode::Clahe;
  double error = clahe ? 1e-6 : 1e-5;
  if (!clahe && recursive_blur(p, path)) error += 0.51 * p.strength * kRecursionBlurError;
  if (small_plane(p, path)) error += 0.51 * p.strength * small_blur_error(p, shape);
  return error;
}

// `scale` the stretch's.
Tolerance tolerance(const BrightnessParams& p, const FrameShape& shape, cuda::GaussPath path,
                    double scale) {
  const FormatInfo& info = format_info(shape.format);
  const double max = brightness_sample_max(shape);
  double error = value_error(p, shape, path) * max * scale;
  if (info.color_channels == 3) error /= kLumaB;
  if (info.is_float) return {error + 1e-6, 1.0};
  return {1.0 + std::floor(error), std::min(1.0, 2.0 * error + 0.01)};
}

bool within(const Agreement& a, const Tolerance& t) {
  return a.worst <= t.worst && a.differing <= 3 + static_cast<long>(t.share * a.samples);
}

// Dark left, bright right, a bright square in the dark: the blur's steepest edges.
TestImage edges_frame(PixelFormat format, int width, int height, double max) {
  TestImage frame(width, height, format);
  const bool is_float = format_info(format).is_float;
  fill_with(frame, [&](int x, int y, int c) {
    const bool square = x > width / 8 && x < width / 4 && y > height / 3 && y < height / 2;
    const double v = (x >= width / 2 || square ? 0.9 : 0.1) * max + 7 * c;
    return is_float ? v : std::floor(v);
  });
  return frame;
}

TestImage random_frame(const Case& c, int width, int height, std::uint32_t seed) {
  TestImage frame(width, height, c.format);
  const FrameShape shape = shape_of(frame, c.bits);
  fill_random(frame, brightness_sample_max(shape), seed);
  if (c.format == PixelFormat::Gray16 && c.bits < 16 && width * height > 4) {
    // Values above the bit depth's maximum count as the maximum.
    set_value(frame, 0, 0, 0, 65535);
    set_value(frame, width - 1, height - 1, 0, (1 << c.bits) + 3);
  }
  return frame;
}

// The CPU's fast path, what the small plane is held against.
TestImage cpu_fast_of(const BrightnessParams& params, const FrameShape& shape,
                      const TestImage& in) {
  static ThreadPool pool(2);
  TestImage out(in.width, in.height, in.format);
  BrightnessCpu().run(params, shape, in.cview(), out.view(), pool);
  return out;
}

// What the launcher's output is held against: the CPU's fast path where B is its small plane,
// else the reference.
TestImage expected_of(const BrightnessParams& p, const FrameShape& shape, const TestImage& in,
                      cuda::GaussPath path) {
  return small_plane(p, path) ? cpu_fast_of(p, shape, in) : reference_of(p, shape, in);
}

// The values of rank brightness_percentile_rank(low / high) of `values`.
std::pair<double, double> ranked(std::vector<double> values, double low, double high) {
  std::sort(values.begin(), values.end());
  return {values[brightness_percentile_rank(low, values.size()) - 1],
          values[brightness_percentile_rank(high, values.size()) - 1]};
}

// The values the reference's percentile ranks (the CPU's fast path's where `path` is Auto and
// B its small plane), for grey frames: its output with no stretch (integer frames: v rounded
// to a sensor value; GRAY32F: v, within 0..1 already).
std::vector<double> reference_values(BrightnessParams p, const FrameShape& shape,
                                     const TestImage& in,
                                     cuda::GaussPath path = cuda::GaussPath::Separable) {
  p.stretch = BrightnessStretch::None;
  const TestImage plain = expected_of(p, shape, in, path);
  std::vector<double> values;
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) values.push_back(value_at(plain, x, y, 0));
  return values;
}

// For colour frames at strength 0 (or alpha 0): v = 255 Y, Y the reference's luma, rounded.
std::vector<double> colour_values(const TestImage& in) {
  const bool bgr = in.format == PixelFormat::Bgra || in.format == PixelFormat::Bgrx;
  std::vector<double> values;
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x) {
      const double r = value_at(in, x, y, bgr ? 2 : 0);
      const double g = value_at(in, x, y, 1);
      const double b = value_at(in, x, y, bgr ? 0 : 2);
      const auto lum = static_cast<float>((kLumaR * r + kLumaG * g + kLumaB * b) / 255.0);
      values.push_back(gauss_round(static_cast<float>(static_cast<double>(lum) * 255.0), 255.0f));
    }
  return values;
}

// The reference (the CPU's fast path, as above) with the percentile stretch replaced by the
// GPU's lo and hi (the fixed stretch maps them alike), or no stretch where the GPU found none.
TestImage reference_stretched_by(BrightnessParams p, const FrameShape& shape, const TestImage& in,
                                 const cuda::BrightnessStretchRange& range,
                                 cuda::GaussPath path = cuda::GaussPath::Separable) {
  if (range.high > range.low) {
    p.stretch = BrightnessStretch::Fixed;
    p.stretch_min = range.low;
    p.stretch_max = range.high;
  } else {
    p.stretch = BrightnessStretch::None;
  }
  return expected_of(p, shape, in, path);
}

double scale_of(const BrightnessParams& p, const FrameShape& shape,
                const cuda::BrightnessStretchRange& range) {
  const double max = brightness_sample_max(shape);
  switch (p.stretch) {
    case BrightnessStretch::Fixed:
      return max / (p.stretch_max - p.stretch_min);
    case BrightnessStretch::Percentile:
      return range.high > range.low ? max / (static_cast<double>(range.high) - range.low) : 1.0;
    case BrightnessStretch::None:
      break;
  }
  return 1.0;
}

}  // namespace

TEST_CASE("CUDA brightness against the reference: formats, sizes, pitches, exact blur",
          "[brightness][cuda]") {
  const int shapes[][2] = {{1, 1}, {3, 2}, {37, 29}, {133, 70}, {301, 150}};
  std::uint32_t seed = 1;
  int cases = 0;
  for (const Case& c : kCases)
    for (const auto& s : shapes)
      for (const bool vector : {true, false})
        for (const auto& [sigma, strength, alpha, path] :
             {std::tuple{3.0, 1.0, 1.0, cuda::GaussPath::Auto},  // fused
              std::tuple{12.0, 4.0, 0.5, cuda::GaussPath::Separable},
              std::tuple{2.0, 0.0, 1.0, cuda::GaussPath::Auto}}) {
          BrightnessParams p;
          p.sigma = sigma;
          p.strength = strength;
          p.alpha = alpha;
          const double max = max_of(c);
          const TestImage in = (seed % 2) ? random_frame(c, s[0], s[1], seed)
                                          : edges_frame(c.format, s[0], s[1], max);
          ++seed;
          const FrameShape shape = shape_of(in, c.bits);
          const Run got = run_cuda(p, shape, in, vector, path);
          const TestImage want = reference_of(p, shape, in);
          const Agreement a = compare(got.out, want, in);
          INFO(name_of(c) << " " << s[0] << "x" << s[1] << (vector ? " vector" : " odd pitch")
                          << " sigma " << sigma << " strength " << strength << " alpha " << alpha
                          << ": worst " << a.worst << ", " << a.differing << "/" << a.samples
                          << " differ");
          REQUIRE(!recursive_blur(p, path));
          REQUIRE(within(a, tolerance(p, shape, path, 1.0)));
          REQUIRE(a.alpha_same);
          REQUIRE(got.padding_ok);
          if (strength == 0.0 && !format_info(c.format).is_float) {
            // The identity: Y^1, v = Y max, the samples themselves (colour: times Y / Y).
            REQUIRE(a.worst == 0.0);
          }
          ++cases;
        }
  REQUIRE(cases == 6 * 5 * 2 * 3);
}

TEST_CASE("CUDA brightness at sigma 40 on the full plane: the recursion, and the exact sums",
          "[brightness][cuda]") {
  for (const Case& c : kCases) {
    const double max = max_of(c);
    for (const bool edges : {true, false}) {
      const TestImage in =
          edges ? edges_frame(c.format, 301, 203, max) : random_frame(c, 301, 203, 77);
      const FrameShape shape = shape_of(in, c.bits);
      for (const double strength : {1.0, 4.0}) {
        BrightnessParams p;
        p.sigma = 40.0;
        p.strength = strength;
        const TestImage want = reference_of(p, shape, in);
        // A path named: the full plane (Auto takes the small plane at this sigma, below).
        for (const cuda::GaussPath path :
             {cuda::GaussPath::Recursive, cuda::GaussPath::Separable}) {
          const Run got = run_cuda(p, shape, in, true, path);
          const Agreement a = compare(got.out, want, in);
          INFO(name_of(c) << (edges ? " edges" : " noise") << " strength " << strength << " "
                          << to_string(path) << ": worst " << a.worst << ", " << a.differing << "/"
                          << a.samples << " differ");
          CHECK(within(a, tolerance(p, shape, path, 1.0)));
          CHECK(a.alpha_same);
        }
      }
    }
  }
}

TEST_CASE("CUDA brightness, fixed stretch", "[brightness][cuda]") {
  for (const Case& c : kCases) {
    const TestImage in = random_frame(c, 157, 101, 9);
    const FrameShape shape = shape_of(in, c.bits);
    const double max = brightness_sample_max(shape);
    BrightnessParams p;
    p.sigma = 6.0;
    p.stretch = BrightnessStretch::Fixed;
    p.stretch_min = 0.2 * max;
    p.stretch_max = 0.7 * max;
    for (const bool vector : {true, false}) {
      const Run got = run_cuda(p, shape, in, vector);
      const Agreement a = compare(got.out, reference_of(p, shape, in), in);
      INFO(name_of(c) << (vector ? " vector" : " odd pitch") << ": worst " << a.worst);
      CHECK(within(a, tolerance(p, shape, cuda::GaussPath::Auto, scale_of(p, shape, got.range))));
      CHECK(a.alpha_same);
      CHECK(got.padding_ok);
    }
  }
}

TEST_CASE("CUDA brightness, mode clahe, against the reference", "[brightness][cuda]") {
  // launch_clahe's plane is clahe_reference()'s, so v is the reference's up to float rounding.
  // At alpha 1 on grey frames v rounds to the mapped value itself: the percentile's histogram
  // is the reference's, and so are lo and hi.
  const Case cases[] = {{PixelFormat::Gray8, 8},
                        {PixelFormat::Gray16, 12},
                        {PixelFormat::Gray16, 16},
                        {PixelFormat::Rgba, 8},
                        {PixelFormat::Bgrx, 8}};
  const int shapes[][2] = {{37, 29}, {301, 150}};
  std::uint32_t seed = 700;
  for (const Case& c : cases)
    for (const auto& s : shapes)
      for (const bool vector : {true, false})
        for (const auto& [tiles_x, tiles_y, clip, alpha, stretch] :
             {std::tuple{8, 8, 2.0, 1.0, BrightnessStretch::None},
              std::tuple{3, 5, 0.0, 0.5, BrightnessStretch::None},
              std::tuple{4, 4, 3.0, 1.0, BrightnessStretch::Percentile}}) {
          const TestImage in = (seed % 2) ? random_frame(c, s[0], s[1], seed)
                                          : edges_frame(c.format, s[0], s[1], max_of(c));
          ++seed;
          const FrameShape shape = shape_of(in, c.bits);
          BrightnessParams p;
          p.mode = BrightnessMode::Clahe;
          p.tiles_x = tiles_x;
          p.tiles_y = tiles_y;
          p.clip_limit = clip;
          p.alpha = alpha;
          p.stretch = stretch;
          const Run got = run_cuda(p, shape, in, vector);
          const Agreement a = compare(got.out, reference_of(p, shape, in), in);
          INFO(name_of(c) << " " << s[0] << "x" << s[1] << (vector ? " vector" : " odd pitch")
                          << " tiles " << tiles_x << "x" << tiles_y << " clip " << clip << " alpha "
                          << alpha << " " << to_string(stretch) << ": worst " << a.worst << ", "
                          << a.differing << "/" << a.samples << " differ");
          if (stretch == BrightnessStretch::Percentile &&
              format_info(c.format).color_channels == 1) {
            const auto [want_low, want_high] =
                ranked(reference_values(p, shape, in), p.low_percentile, p.high_percentile);
            REQUIRE(got.range.low == static_cast<float>(want_low));
            REQUIRE(got.range.high == static_cast<float>(want_high));
          }
          REQUIRE(
              within(a, tolerance(p, shape, cuda::GaussPath::Auto, scale_of(p, shape, got.range))));
          REQUIRE(a.alpha_same);
          REQUIRE(got.padding_ok);
        }
}

TEST_CASE("CUDA brightness, percentile: the reference's lo and hi where v is the reference's",
          "[brightness][cuda]") {
  // Strength 0 (C = Y) and alpha 0 (v = Y max): v is the reference's v exactly, so the
  // histograms are the same and so are lo and hi. Sizes from one block's histogram to many
  // (GRAY16 at 16 bits: global atomics; the others: shared memory).
  const int shapes[][2] = {{5, 3}, {301, 150}, {1000, 700}};
  std::uint32_t seed = 100;
  for (const Case& c : kCases)
    for (const auto& s : shapes)
      for (const bool alpha_zero : {false, true})
        for (const auto& [low, high] : {std::pair{0.5, 99.5}, std::pair{0.0, 100.0},
                                        std::pair{7.0, 93.0}, std::pair{25.0, 75.0}}) {
          if (s[0] == 1000 && low != 0.5) continue;  // the large frame: once per format
          const TestImage in = random_frame(c, s[0], s[1], ++seed);
          const FrameShape shape = shape_of(in, c.bits);
          BrightnessParams p;
          p.sigma = 2.0;
          p.strength = alpha_zero ? 1.0 : 0.0;
          p.alpha = alpha_zero ? 0.0 : 1.0;
          p.stretch = BrightnessStretch::Percentile;
          p.low_percentile = low;
          p.high_percentile = high;
          const bool colour = format_info(c.format).color_channels == 3;
          const auto [want_low, want_high] =
              ranked(colour ? colour_values(in) : reference_values(p, shape, in), low, high);
          const Run got = run_cuda(p, shape, in, true);
          INFO(name_of(c) << " " << s[0] << "x" << s[1] << " percentiles " << low << ".." << high
                          << (alpha_zero ? " alpha 0" : " strength 0") << ": lo " << got.range.low
                          << " (want " << want_low << "), hi " << got.range.high << " (want "
                          << want_high << ")");
          REQUIRE(got.range.low == static_cast<float>(want_low));
          REQUIRE(got.range.high == static_cast<float>(want_high));
          const Agreement a = compare(got.out, reference_of(p, shape, in), in);
          INFO("worst " << a.worst << ", " << a.differing << "/" << a.samples << " differ");
          REQUIRE(
              within(a, tolerance(p, shape, cuda::GaussPath::Auto, scale_of(p, shape, got.range))));
          REQUIRE(a.alpha_same);
        }
}

TEST_CASE("CUDA brightness, percentile: rank p N / 100, and no stretch without a range",
          "[brightness][cuda]") {
  // 100 distinct values 0..99: 7 % is rank 7, the value 6; 93 % rank 93, the value 92.
  TestImage ramp(10, 10, PixelFormat::Gray8);
  fill_with(ramp, [](int x, int y, int) { return 10 * y + x; });
  BrightnessParams p;
  p.sigma = 1.0;
  p.strength = 0.0;
  p.stretch = BrightnessStretch::Percentile;
  p.low_percentile = 7.0;
  p.high_percentile = 93.0;
  const Run got = run_cuda(p, shape_of(ramp), ramp, false);
  CHECK(got.range.low == 6.0f);
  CHECK(got.range.high == 92.0f);
  CHECK(got.range.lo == 6.0f);
  CHECK(got.range.scale == Approx(255.0 / 86.0));
  CHECK(compare(got.out, reference_of(p, shape_of(ramp), ramp), ramp).worst <= 1.0);

  // One value everywhere: hi == lo, and the frame is left unstretched.
  for (const Case& c : kCases) {
    TestImage flat(64, 9, c.format);
    const double value = format_info(c.format).is_float ? 0.25 : 40.0;
    fill_with(flat, [&](int, int, int) { return value; });
    const FrameShape shape = shape_of(flat, c.bits);
    BrightnessParams q;
    q.stretch = BrightnessStretch::Percentile;
    // Strength 0: v = Y max whatever B, so one v everywhere (B from the small plane's sums of a
    // constant may differ in its last place, which GRAY32F's v could keep).
    q.strength = 0.0;
    const Run r = run_cuda(q, shape, flat, true);
    INFO(name_of(c));
    CHECK(r.range.low == r.range.high);
    CHECK(r.range.lo == 0.0f);
    CHECK(r.range.scale == 1.0f);
    CHECK(within(compare(r.out, expected_of(q, shape, flat, cuda::GaussPath::Auto), flat),
                 tolerance(q, shape, cuda::GaussPath::Auto, 1.0)));
  }
}

TEST_CASE("CUDA brightness, percentile: lo and hi within one value, the frame stretched by them",
          "[brightness][cuda]") {
  for (const Case& c : kCases) {
    for (const bool edges : {false, true}) {
      const double max = max_of(c);
      const TestImage in =
          edges ? edges_frame(c.format, 240, 130, max) : random_frame(c, 240, 130, 300);
      const FrameShape shape = shape_of(in, c.bits);
      BrightnessParams p;
      p.sigma = 9.0;
      p.strength = 1.5;
      p.alpha = 0.8;
      p.stretch = BrightnessStretch::Percentile;
      p.low_percentile = 2.0;
      p.high_percentile = 98.0;
      // The exact sums: v within 1e-5 of the range of the reference's, so each rounded value,
      // and any rank's, within one.
      const cuda::GaussPath path = cuda::GaussPath::Separable;
      const Run got = run_cuda(p, shape, in, !edges, path);
      const bool colour = format_info(c.format).color_channels == 3;
      INFO(name_of(c) << (edges ? " edges" : " noise") << ": lo " << got.range.low << ", hi "
                      << got.range.high);
      if (!colour) {
        const auto [want_low, want_high] = ranked(reference_values(p, shape, in), 2.0, 98.0);
        const double step = format_info(c.format).is_float ? 1e-5 : 1.0;
        INFO("want lo " << want_low << ", hi " << want_high);
        CHECK(std::abs(got.range.low - want_low) <= step);
        CHECK(std::abs(got.range.high - want_high) <= step);
      }
      CHECK(got.range.low >= 0.0f);
      CHECK(got.range.high <= static_cast<float>(max));
      const TestImage want = reference_stretched_by(p, shape, in, got.range);
      const Agreement a = compare(got.out, want, in);
      INFO("worst " << a.worst << ", " << a.differing << "/" << a.samples << " differ");
      CHECK(within(a, tolerance(p, shape, path, scale_of(p, shape, got.range))));
      CHECK(a.alpha_same);
    }
  }
}

// The sizes of the small plane's tests: one pixel, smaller than the factor (a small plane of
// two samples, or one, an axis), a line each way, odd sizes no factor divides.
const int kSmallPlaneSizes[][2] = {{1, 1}, {7, 5}, {5, 3}, {1, 40}, {40, 1}, {13, 9}, {1031, 517}};

TEST_CASE("CUDA brightness from sigma 8: B against LuminanceBlur's", "[brightness][cuda]") {
  static ThreadPool pool(2);
  std::uint32_t seed = 900;
  for (const Case& c : kCases)
    for (const auto& s : kSmallPlaneSizes)
      for (const double sigma : {8.0, 16.0, 40.0, 100.0}) {
        const bool vector = seed % 2 == 0;
        const TestImage in = (seed % 3) ? random_frame(c, s[0], s[1], seed)
                                        : edges_frame(c.format, s[0], s[1], max_of(c));
        ++seed;
        const FrameShape shape = shape_of(in, c.bits);
        BrightnessParams p;
        p.sigma = sigma;
        DeviceCopy d_in(in, padding(in.format, in.width, vector, 0));
        const TestImage blank(in.width, in.height, PixelFormat::Gray32F);
        DeviceCopy d_b(blank, padding(PixelFormat::Gray32F, in.width, vector, 1));
        Scratch scratch(cuda::brightness_scratch_bytes(p, shape));
        cuda::check(cuda::launch_brightness_blur(p, shape, const_view(d_in.view()), d_b.view(),
                                                 scratch.ptr, scratch.bytes, nullptr),
                    "launch_brightness_blur");
        cuda::check(cudaDeviceSynchronize(), "sync");
        const TestImage got = d_b.download();
        LuminanceBlur blur;
        blur.prepare(shape, sigma, in.cview(), pool);
        std::vector<float> row_scratch(static_cast<std::size_t>(in.width));
        double worst = 0.0;
        for (int y = 0; y < in.height; ++y) {
          const float* row = blur.row(y, row_scratch.data());
          for (int x = 0; x < in.width; ++x) {
            worst = std::max(worst, std::abs(value_at(got, x, y, 0) - row[x]));
          }
        }
        INFO(name_of(c) << " " << s[0] << "x" << s[1] << (vector ? " vector" : " odd pitch")
                        << " sigma " << sigma << ": worst |B - CPU's B| " << worst << " (bound "
                        << small_blur_error(p, shape) << ")");
        REQUIRE(worst <= small_blur_error(p, shape));
        REQUIRE(d_b.padding_untouched());
      }
}

TEST_CASE("CUDA brightness from sigma 8 against the CPU's fast path: formats, sizes, stretches",
          "[brightness][cuda]") {
  std::uint32_t seed = 1000;
  int cases = 0;
  for (const Case& c : kCases)
    for (const auto& s : kSmallPlaneSizes)
      for (const double sigma : {8.0, 16.0, 40.0, 100.0})
        for (const BrightnessStretch stretch :
             {BrightnessStretch::None, BrightnessStretch::Fixed, BrightnessStretch::Percentile}) {
          const bool vector = seed % 2 == 0;
          const double max = max_of(c);
          const TestImage in = (seed % 3) ? random_frame(c, s[0], s[1], seed)
                                          : edges_frame(c.format, s[0], s[1], max);
          BrightnessParams p;
          p.sigma = sigma;
          p.strength = seed % 4 == 1 ? 4.0 : 1.0;
          p.alpha = seed % 5 == 2 ? 0.5 : 1.0;
          p.stretch = stretch;
          p.stretch_min = 0.2 * max;
          p.stretch_max = 0.7 * max;
          p.low_percentile = 2.0;
          p.high_percentile = 98.0;
          ++seed;
          const FrameShape shape = shape_of(in, c.bits);
          const cuda::GaussPath path = cuda::GaussPath::Auto;
          REQUIRE(small_plane(p, path));
          const Run got = run_cuda(p, shape, in, vector, path);
          INFO(name_of(c) << " " << s[0] << "x" << s[1] << (vector ? " vector" : " odd pitch")
                          << " sigma " << sigma << " strength " << p.strength << " alpha "
                          << p.alpha << " " << to_string(stretch) << ": lo " << got.range.low
                          << ", hi " << got.range.high);
          // lo and hi: the CPU's within v's error, rounded (integer formats: one value more);
          // the frame then against the CPU's stretched by the GPU's.
          const bool percentile = stretch == BrightnessStretch::Percentile;
          if (percentile && format_info(c.format).color_channels == 1) {
            const auto [want_low, want_high] =
                ranked(reference_values(p, shape, in, path), p.low_percentile, p.high_percentile);
            const double error = value_error(p, shape, path) * max;
            const double step =
                format_info(c.format).is_float ? error + 1e-7 : 1.0 + std::floor(error);
            INFO("the CPU's lo " << want_low << ", hi " << want_high);
            REQUIRE(std::abs(got.range.low - want_low) <= step);
            REQUIRE(std::abs(got.range.high - want_high) <= step);
          }
          const TestImage want = percentile ? reference_stretched_by(p, shape, in, got.range, path)
                                            : cpu_fast_of(p, shape, in);
          const Agreement a = compare(got.out, want, in);
          INFO("worst " << a.worst << ", " << a.differing << "/" << a.samples << " differ");
          REQUIRE(within(a, tolerance(p, shape, path, scale_of(p, shape, got.range))));
          REQUIRE(a.alpha_same);
          REQUIRE(got.padding_ok);
          ++cases;
        }
  REQUIRE(cases == 6 * 7 * 4 * 3);
}

TEST_CASE("CUDA brightness refuses what it cannot do", "[brightness][cuda]") {
  TestImage img(40, 20, PixelFormat::Gray16);
  DeviceCopy a(img, 2), b(img, 2);
  const FrameShape shape = shape_of(img, 12);
  BrightnessParams p;
  Scratch scratch(cuda::brightness_scratch_bytes(p, shape));
  CHECK(cuda::launch_brightness(p, shape, const_view(a.view()), b.view(), nullptr, 0, nullptr) ==
        cudaErrorInvalidValue);
  CHECK(cuda::launch_brightness(p, shape, const_view(a.view()), b.view(), scratch.ptr,
                                scratch.bytes - 1, nullptr) == cudaErrorInvalidValue);
  // A GRAY16 row that starts between two samples.
  DeviceCopy odd(img, 1);
  CHECK(cuda::launch_brightness(p, shape, const_view(odd.view()), b.view(), scratch.ptr,
                                scratch.bytes, nullptr) == cudaErrorInvalidValue);
  // Mode clahe needs sensor values: not GRAY32F.
  TestImage floats(40, 20, PixelFormat::Gray32F);
  DeviceCopy fa(floats, 0), fb(floats, 0);
  const FrameShape float_shape = shape_of(floats);
  p.mode = BrightnessMode::Clahe;
  Scratch more(cuda::brightness_scratch_bytes(p, float_shape) + (1 << 20));
  CHECK(cuda::launch_brightness(p, float_shape, const_view(fa.view()), fb.view(), more.ptr,
                                more.bytes, nullptr) == cudaErrorInvalidValue);
  CHECK(cudaGetLastError() == cudaSuccess);  // nothing was launched
}

TEST_CASE("CUDA brightness stage: host frames, device frames, live changes of mode",
          "[brightness][cuda][stage]") {
  BrightnessParams p;
  auto stage = make_brightness_stage(p, resolve_backend(Backend::Cuda, 0));
  REQUIRE(stage->backend() == Backend::Cuda);
  for (const FrameShape& shape : {FrameShape{1024, 768, PixelFormat::Gray16, 12},
                                  FrameShape{641, 479, PixelFormat::Bgra, 8}}) {
    stage->configure(shape);
    TestImage in(shape.width, shape.height, shape.format, 36);
    fill_random(in, brightness_sample_max(shape), 5);
    struct Step {
      double sigma;
      BrightnessStretch stretch;
    };
    for (const Step& step :
         {Step{3.0, BrightnessStretch::None}, Step{40.0, BrightnessStretch::Fixed},
          Step{40.0, BrightnessStretch::Percentile}, Step{8.0, BrightnessStretch::Percentile}}) {
      p.sigma = step.sigma;
      p.stretch = step.stretch;
      p.stretch_min = 0.1 * brightness_sample_max(shape);
      p.stretch_max = 0.9 * brightness_sample_max(shape);
      stage->set_params(p);
      TestImage got(shape.width, shape.height, shape.format, 4);
      stage->process(in.cview(), got.view());
      INFO(to_string(shape.format)
           << " sigma " << step.sigma << " stretch " << to_string(step.stretch));
      // The launcher's pixels exactly (the percentile's lo and hi included), and the
      // reference's (the CPU's fast path's from sigma 8) within the tolerance where no
      // percentile can sit a value apart.
      CHECK(got.same_pixels(run_cuda(p, shape, in, true).out));
      if (step.stretch == BrightnessStretch::Percentile) continue;
      const Agreement a = compare(got, expected_of(p, shape, in, cuda::GaussPath::Auto), in);
      INFO("worst " << a.worst << ", " << a.differing << "/" << a.samples << " differ");
      const double scale = step.stretch == BrightnessStretch::Fixed ? 1.25 : 1.0;
      CHECK(within(a, tolerance(p, shape, cuda::GaussPath::Auto, scale)));
      CHECK(a.alpha_same);
    }
  }

  // A live change to mode clahe (the scratch grows at the next frame), of its grid, and back.
  const FrameShape shape{200, 100, PixelFormat::Gray16, 10};
  p = BrightnessParams{};
  stage->set_params(p);
  stage->configure(shape);
  TestImage in(shape.width, shape.height, shape.format);
  fill_random(in, 1023, 6);
  for (const auto& [mode, tiles] :
       {std::pair{BrightnessMode::Local, 8}, std::pair{BrightnessMode::Clahe, 4},
        std::pair{BrightnessMode::Clahe, 16}, std::pair{BrightnessMode::Local, 8}}) {
    p.mode = mode;
    p.tiles_x = p.tiles_y = tiles;
    p.sigma = 3.0;
    stage->set_params(p);
    TestImage out(shape.width, shape.height, shape.format);
    stage->process(in.cview(), out.view());
    const Agreement a = compare(out, reference_of(p, shape, in), in);
    INFO(to_string(mode) << " tiles " << tiles << ": worst " << a.worst);
    CHECK(within(a, tolerance(p, shape, cuda::GaussPath::Auto, 1.0)));
  }
  BrightnessParams clahe;
  clahe.mode = BrightnessMode::Clahe;
  CHECK(make_brightness_stage(clahe, resolve_backend(Backend::Cuda, 0))->backend() ==
        Backend::Cuda);

  // The device form: enqueue() on device frames gives process()'s pixels.
  const FrameShape device_shape{333, 211, PixelFormat::Rgba, 8};
  TestImage frame(device_shape.width, device_shape.height, device_shape.format);
  fill_random(frame, 255, 7);
  p = BrightnessParams{};
  p.stretch = BrightnessStretch::Percentile;
  stage->set_params(p);
  stage->configure(device_shape);
  TestImage host_out(device_shape.width, device_shape.height, device_shape.format);
  stage->process(frame.cview(), host_out.view());
  stage->configure_device(device_shape);
  DeviceCopy d_in(frame, 16), d_out(frame, 48);
  stage->enqueue(const_view(d_in.view()), d_out.view(), nullptr);
  cuda::check(cudaDeviceSynchronize(), "sync");
  CHECK(d_out.download().same_pixels(host_out));
}

TEST_CASE("CUDA brightness, percentile: frames in a row on one scratch select as fresh ones",
          "[brightness][cuda]") {
  // Up to 4096 bins the histogram's last block selects lo and hi, counting finished blocks
  // in the scratch: each frame must start that count afresh. Two frames alternate on one
  // scratch, each against its own run on a fresh scratch; the small plane (sigma 40) and the
  // full one (sigma 4).
  std::uint32_t seed = 1300;
  for (const Case& c : kCases)
    for (const double sigma : {4.0, 40.0}) {
      const TestImage frames[2] = {random_frame(c, 517, 263, seed),
                                   edges_frame(c.format, 517, 263, max_of(c))};
      ++seed;
      const FrameShape shape = shape_of(frames[0], c.bits);
      BrightnessParams p;
      p.sigma = sigma;
      p.stretch = BrightnessStretch::Percentile;
      p.low_percentile = 1.0;
      p.high_percentile = 99.0;
      const Run fresh[2] = {run_cuda(p, shape, frames[0], true),
                            run_cuda(p, shape, frames[1], true)};
      Scratch scratch(cuda::brightness_scratch_bytes(p, shape));
      for (int i = 0; i < 4; ++i) {
        const TestImage& in = frames[i % 2];
        DeviceCopy d_in(in, padding(in.format, in.width, true, 0));
        const TestImage blank(in.width, in.height, in.format);
        DeviceCopy d_out(blank, padding(in.format, in.width, true, 1));
        cuda::check(cuda::launch_brightness(p, shape, const_view(d_in.view()), d_out.view(),
                                            scratch.ptr, scratch.bytes, nullptr),
                    "launch_brightness");
        cuda::check(cudaDeviceSynchronize(), "sync");
        cuda::BrightnessStretchRange range;
        cuda::check(cudaMemcpy(&range, cuda::brightness_stretch_range(scratch.ptr), sizeof range,
                               cudaMemcpyDeviceToHost),
                    "stretch range");
        INFO(name_of(c) << " sigma " << sigma << " frame " << i);
        CHECK(range.low == fresh[i % 2].range.low);
        CHECK(range.high == fresh[i % 2].range.high);
        CHECK(d_out.download().same_pixels(fresh[i % 2].out));
      }
    }
}

TEST_CASE("CUDA brightness: tent tables kept across frames give what fresh ones give",
          "[brightness][cuda]") {
  // One scratch and one BrightnessTables record, sized for the larger frame: frames alternate
  // sigma (another small plane on the same frame), frame size (another layout), a frame of
  // mode clahe (which writes over the tables) and one below sigma 8 (which leaves them), each
  // against its run on a fresh scratch; the record must make the launcher rebuild the tables
  // exactly where they no longer hold.
  const Case c{PixelFormat::Rgba, 8};
  const TestImage big = random_frame(c, 517, 263, 1400);
  const TestImage small = edges_frame(c.format, 301, 97, max_of(c));
  struct Step {
    const TestImage* in;
    BrightnessMode mode;
    double sigma;
  };
  const Step steps[] = {
      {&big, BrightnessMode::Local, 40.0},   {&big, BrightnessMode::Local, 40.0},
      {&big, BrightnessMode::Local, 16.0},   {&big, BrightnessMode::Local, 40.0},
      {&small, BrightnessMode::Local, 40.0}, {&big, BrightnessMode::Local, 40.0},
      {&big, BrightnessMode::Clahe, 40.0},   {&big, BrightnessMode::Local, 40.0},
      {&big, BrightnessMode::Local, 4.0},    {&big, BrightnessMode::Local, 40.0},
      {&small, BrightnessMode::Local, 8.0},  {&small, BrightnessMode::Local, 100.0}};
  std::size_t bytes = 0;
  for (const Step& s : steps) {
    BrightnessParams p;
    p.mode = s.mode;
    bytes = std::max(bytes, cuda::brightness_scratch_bytes(p, shape_of(*s.in, c.bits)));
  }
  Scratch scratch(bytes);
  cuda::BrightnessTables tables;
  int i = 0;
  for (const Step& s : steps) {
    const FrameShape shape = shape_of(*s.in, c.bits);
    BrightnessParams p;
    p.mode = s.mode;
    p.sigma = s.sigma;
    p.stretch = BrightnessStretch::Percentile;
    const Run fresh = run_cuda(p, shape, *s.in, true);
    DeviceCopy d_in(*s.in, padding(c.format, s.in->width, true, 0));
    const TestImage blank(s.in->width, s.in->height, c.format);
    DeviceCopy d_out(blank, padding(c.format, s.in->width, true, 1));
    cuda::check(
        cuda::launch_brightness(p, shape, const_view(d_in.view()), d_out.view(), scratch.ptr,
                                scratch.bytes, nullptr, cuda::GaussPath::Auto, &tables),
        "launch_brightness");
    cuda::check(cudaDeviceSynchronize(), "sync");
    INFO("step " << i++ << ": " << s.in->width << "x" << s.in->height << " sigma " << s.sigma
                 << (s.mode == BrightnessMode::Clahe ? " clahe" : ""));
    CHECK(d_out.download().same_pixels(fresh.out));
    // Recorded by a launch from sigma 8, cleared by one of mode clahe.
    if (s.mode == BrightnessMode::Clahe) CHECK(tables.at == nullptr);
    if (s.sigma >= 8.0 && s.mode == BrightnessMode::Local) {
      CHECK(tables.at != nullptr);
      CHECK(tables.width == s.in->width);
    }
  }
}
