// SPDX-License-Identifier: LGPL-2.1-or-later
// The CUDA Gaussian against the CPU: the direct paths (fused, separable) against
// gauss_reference(), the recursive path against the CPU's recursion (GaussIir) and, like it,
// against the exact blur; every format, border and odd shape, padded strides on both sides.
//
// Tolerances (gauss.cuh): the direct paths sum the same weights in another order with fused
// multiply-adds, so an integer sample may round the other way (|difference| <= 1, and on
// under 2 % of samples), a float one differs by float rounding (1e-5 of the frame's range).
// The recursive path runs the CPU's recursion in chunks, each starting 6 sigma early, where
// the start-up has decayed to ~3e-5 of the state (as at the CPU's frame edges): integers
// within 1, floats within 5e-5 of the range. The decimated path approximates the exact blur:
// its bounds on a point source and a step are checked against gauss_reference().
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/gauss/gauss.cuh"
#include "pipeline/gauss/gauss_iir.hpp"
#include "pipeline/gauss/gauss_stage.hpp"
#include "pipeline/gauss/reference.hpp"
#include "pipeline/gauss/samples.hpp"
#include "support/device_copy.hpp"
#include "support/test_image.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

const PixelFormat kFormats[] = {PixelFormat::Gray8, PixelFormat::Gray16, PixelFormat::Gray32F,
                                PixelFormat::Rgba, PixelFormat::Bgrx};
const BorderMode kBorders[] = {BorderMode::Replicate, BorderMode::Reflect101, BorderMode::Constant};

// Every sample (alpha too) random over the format's range; floats in [0, 1000).
void fill_random(TestImage& img, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const int channels = format_info(img.format).channels;
  std::uniform_real_distribution<float> real(0.0f, 1000.0f);
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x)
      for (int c = 0; c < channels; ++c) {
        img.set_key(x, y, c,
                    format_info(img.format).is_float ? float_to_key(real(rng))
                                                     : rng() & max_key(img.format));
      }
}

struct Agreement {
  double worst = 0.0;  // the largest |difference|
  long differing = 0;  // samples that differ at all
  long samples = 0;
  bool alpha_same = true;  // alpha and padding bytes equal
  // A rounding flip needs a sum within float rounding of .5: rare (~1 % of random 16-bit
  // samples, whose float sums carry the fewest fraction bits). More than 5 % would be a
  // systematic difference, not rounding; a few samples of a tiny frame prove nothing.
  // (Float samples differ by float rounding almost everywhere: their tolerance says it all.)
  bool rare_flips(PixelFormat format) const {
    return format_info(format).is_float || differing <= 3 || differing <= samples / 20;
  }
};

Agreement compare(const TestImage& got, const TestImage& want) {
  using gauss_samples::read_sample;
  const FormatInfo& info = format_info(got.format);
  Agreement a;
  for (int y = 0; y < got.height; ++y)
    for (int x = 0; x < got.width; ++x) {
      for (int c = 0; c < info.color_channels; ++c) {
        const float g = read_sample(got.cview(), x, y, c), w = read_sample(want.cview(), x, y, c);
        const double d = std::abs(static_cast<double>(g) - w);
        a.worst = std::max(a.worst, d);
        a.differing += d != 0.0;
        ++a.samples;
      }
      for (int c = info.color_channels; c < info.channels; ++c) {
        a.alpha_same &= read_sample(got.cview(), x, y, c) == read_sample(want.cview(), x, y, c);
      }
    }
  return a;
}

// The tolerance of a format: one count for integers, 1e-5 of [0, 1000) for floats.
double tolerance(PixelFormat format) {
  return format_info(format).is_float ? 1e-2 : 1.0;
}

struct Scratch {
  explicit Scratch(std::size_t bytes) : bytes(bytes) {
    if (bytes) cuda::check(cudaMalloc(&ptr, bytes), "cudaMalloc scratch");
  }
  ~Scratch() { cudaFree(ptr); }
  std::size_t bytes;
  void* ptr = nullptr;
};

// Row padding that makes a pitch a multiple of 16 bytes (the fused path's vector words for
// gray frames), or an odd one (its shared-memory tiles).
int padding(const TestImage& img, bool aligned, int odd) {
  const int row = img.width * bytes_per_pixel(img.format);
  return aligned ? (16 - row % 16) % 16 + 16 : odd;
}

TestImage run_cuda(const GaussParams& p, const TestImage& in, cuda::GaussPath path,
                   bool* padding_ok = nullptr, bool aligned = false) {
  DeviceCopy d_in(in, padding(in, aligned, 12));
  TestImage blank(in.width, in.height, in.format);
  DeviceCopy d_out(blank, padding(blank, aligned, 20));
  Scratch scratch(cuda::gauss_scratch_bytes(path, in.width, in.height, in.format));
  cuda::check(cuda::launch_gauss(p, const_view(d_in.view()), d_out.view(), scratch.ptr,
                                 scratch.bytes, nullptr, path),
              "launch_gauss");
  cuda::check(cudaDeviceSynchronize(), "sync");
  if (padding_ok) *padding_ok = d_out.padding_untouched();
  return d_out.download();
}

// The parameters of a case of the every-format sweeps: sigmas along x and y, a border, and
// a constant border's value inside the format's range.
GaussParams params_of(std::pair<double, double> sigmas, BorderMode border, PixelFormat format) {
  GaussParams p;
  p.sigma_x = sigmas.first;
  p.sigma_y = sigmas.second;
  p.border = border;
  p.border_value = format_info(format).is_float ? 12.5 : 77;
  return p;
}

}  // namespace

TEST_CASE("CUDA Gaussian, direct paths, against the CPU reference", "[gauss][cuda]") {
  ThreadPool pool;
  // Odd sizes, and a frame wider than a strip and taller than a strip's rows.
  const int shapes[][2] = {{1, 1}, {1, 17}, {23, 1}, {37, 29}, {133, 70}, {301, 150}};
  std::uint32_t seed = 1;
  int cases = 0;
  for (cuda::GaussPath path : {cuda::GaussPath::Fused, cuda::GaussPath::Separable})
    for (bool aligned : {false, true})
      for (PixelFormat format : kFormats)
        for (BorderMode border : kBorders)
          for (const auto& s : shapes)
            for (const auto& sigmas :
                 {std::pair{0.5, 0.5}, std::pair{1.0, 0.75}, std::pair{1.0, 3.0},
                  std::pair{4.0, 0.0}, std::pair{2.0, 2.0}, std::pair{0.0, 1.5},
                  std::pair{2.5, 1.0}, std::pair{9.0, 6.0}}) {
              GaussParams p;
              p.sigma_x = sigmas.first;
              p.sigma_y = sigmas.second;
              p.border = border;
              p.border_value = format_info(format).is_float ? 12.5 : 77;
              if (path == cuda::GaussPath::Fused &&
                  std::max(p.effective_radius_x(), p.effective_radius_y()) >
                      cuda::kMaxFusedRadius) {
                continue;
              }
              TestImage in(s[0], s[1], format, 8);
              fill_random(in, ++seed);
              TestImage want(s[0], s[1], format);
              gauss_reference(p, in.cview(), want.view(), pool);
              bool padding_ok = false;
              const TestImage got = run_cuda(p, in, path, &padding_ok, aligned);
              const Agreement a = compare(got, want);
              INFO(to_string(path) << (aligned ? " aligned " : " odd pitch ") << to_string(format)
                                   << " sigma " << p.sigma_x << "/" << p.sigma_y << " "
                                   << to_string(border) << " " << s[0] << "x" << s[1] << " worst "
                                   << a.worst << " differing " << a.differing << "/" << a.samples);
              REQUIRE(a.worst <= tolerance(format));
              REQUIRE(a.rare_flips(format));
              REQUIRE(a.alpha_same);
              REQUIRE(padding_ok);
              ++cases;
            }
  INFO("cases " << cases);
  REQUIRE(cases > 700);
}

// The fused path's GRAY8 kernels, the block tile (radius 2) and the tensor cores (gauss_mma.cu),
// on a frame of some 800 tiles: inner tiles load their input without the border's rule, the
// edge tiles with it, and the last row and column of tiles are partial.
TEST_CASE("CUDA Gaussian, GRAY8 frames of many tiles, against the CPU reference", "[gauss][cuda]") {
  ThreadPool pool;
  std::uint32_t seed = 900;
  struct Case {
    std::pair<double, double> sigmas;
    cuda::GaussPath path;
  };
  // Radii 2 (the tile), 4 / 3, 12 / 16 / 8 and, beyond the other fused kernels, 20 and 24
  // (fused, and Auto's choice over the decimation).
  for (const Case& c :
       {Case{{0.5, 0.5}, cuda::GaussPath::Fused}, Case{{1.0, 0.75}, cuda::GaussPath::Auto},
        Case{{3.0, 3.0}, cuda::GaussPath::Fused}, Case{{1.0, 4.0}, cuda::GaussPath::Fused},
        Case{{2.0, 0.0}, cuda::GaussPath::Fused}, Case{{5.0, 5.0}, cuda::GaussPath::Auto},
        Case{{6.0, 4.5}, cuda::GaussPath::Fused}})
    for (BorderMode border : kBorders) {
      const GaussParams p = params_of(c.sigmas, border, PixelFormat::Gray8);
      TestImage in(2050, 1603, PixelFormat::Gray8, 8);
      fill_random(in, ++seed);
      TestImage want(in.width, in.height, in.format);
      gauss_reference(p, in.cview(), want.view(), pool);
      bool padding_ok = false;
      const TestImage got = run_cuda(p, in, c.path, &padding_ok, true);
      const Agreement a = compare(got, want);
      INFO(to_string(c.path) << " sigma " << p.sigma_x << "/" << p.sigma_y << " "
                             << to_string(border) << " worst " << a.worst << " differing "
                             << a.differing << "/" << a.samples);
      REQUIRE(a.worst <= 1.0);
      REQUIRE(a.rare_flips(PixelFormat::Gray8));
      REQUIRE(padding_ok);
    }
}

TEST_CASE("CUDA Gaussian, recursive path, against the CPU recursion", "[gauss][cuda]") {
  ThreadPool pool;
  // Long enough lines that the GPU cuts them into several chunks (recursion_for()).
  const int shapes[][2] = {{1, 1}, {300, 7}, {9, 400}, {517, 301}};
  std::uint32_t seed = 500;
  int cases = 0;
  for (PixelFormat format : kFormats)
    for (BorderMode border : kBorders)
      for (const auto& s : shapes)
        for (const auto& sigmas : {std::pair{3.0, 3.0}, std::pair{25.0, 4.0}, std::pair{0.0, 30.0},
                                   std::pair{50.0, 50.0}}) {
          const GaussParams p = params_of(sigmas, border, format);
          TestImage in(s[0], s[1], format, 4);
          fill_random(in, ++seed);
          TestImage want(s[0], s[1], format);
          GaussIir().run(p, in.cview(), want.view(), pool);
          const TestImage got = run_cuda(p, in, cuda::GaussPath::Recursive);
          const Agreement a = compare(got, want);
          INFO(to_string(format) << " sigma " << p.sigma_x << "/" << p.sigma_y << " "
                                 << to_string(border) << " " << s[0] << "x" << s[1] << " worst "
                                 << a.worst << " differing " << a.differing << "/" << a.samples);
          REQUIRE(a.worst <= (format_info(format).is_float ? 0.05 : 1.0));
          REQUIRE(a.rare_flips(format));
          REQUIRE(a.alpha_same);
          ++cases;
        }
  REQUIRE(cases == 5 * 3 * 4 * 4);
}

TEST_CASE("CUDA recursive Gaussian is within 0.12 % of the exact blur's peak", "[gauss][cuda]") {
  ThreadPool pool;
  for (double sigma : {3.0, 10.0, 25.0, 50.0}) {
    // A point source in a frame wider than the GPU's chunks, off the rows and columns that
    // the padding of 6 sigma reflects onto a line's first or last sample (where a recursion
    // takes its steady state: the CPU's as much as this).
    const int n = 1200;
    TestImage in(n, 601, PixelFormat::Gray32F);
    for (int y = 0; y < in.height; ++y)
      for (int x = 0; x < n; ++x) in.set_key(x, y, 0, float_to_key(0.0f));
    in.set_key(n / 2 + 3, 250, 0, float_to_key(1.0e6f));
    GaussParams p;
    p.sigma_x = p.sigma_y = sigma;
    TestImage exact(n, 601, PixelFormat::Gray32F);
    gauss_reference(p, in.cview(), exact.view(), pool);
    const TestImage got = run_cuda(p, in, cuda::GaussPath::Recursive);
    double worst = 0.0, peak = 0.0;
    for (int y = 0; y < in.height; ++y)
      for (int x = 0; x < n; ++x) {
        const double e = gauss_samples::read_sample(exact.cview(), x, y, 0);
        worst = std::max(worst, std::abs(gauss_samples::read_sample(got.cview(), x, y, 0) - e));
        peak = std::max(peak, e);
      }
    INFO("sigma " << sigma << " worst " << worst / peak << " of the peak");
    CHECK(worst / peak <= 0.0012);
  }
}

// The decimated path approximates the exact blur (gauss_decimated.cu): a point source off the
// small grid's samples, and a slanted step, against gauss_reference(), in floats.
TEST_CASE("CUDA decimated Gaussian is close to the exact blur", "[gauss][cuda]") {
  ThreadPool pool;
  for (double sigma : {4.0, 5.0, 5.5, 6.0, 7.0, 8.0, 9.0, 12.5, 25.0, 50.0}) {
    const int n = std::max(200, static_cast<int>(std::ceil(14 * sigma)));
    TestImage point(n, n, PixelFormat::Gray32F), step(n, n, PixelFormat::Gray32F);
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        point.set_key(x, y, 0, float_to_key(0.0f));
        step.set_key(x, y, 0, float_to_key(x + 0.3 * y > 0.65 * n ? 1000.0f : 0.0f));
      }
    point.set_key(n / 2 + 3, n / 2 - 5, 0, float_to_key(1.0e6f));
    GaussParams p;
    p.sigma_x = p.sigma_y = sigma;
    p.border = BorderMode::Replicate;
    double relative[2] = {};
    int k = 0;
    for (const TestImage* in : {&point, &step}) {
      TestImage exact(n, n, PixelFormat::Gray32F);
      gauss_reference(p, in->cview(), exact.view(), pool);
      const TestImage got = run_cuda(p, *in, cuda::GaussPath::Decimated);
      double worst = 0.0, peak = 0.0;
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x) {
          const double e = gauss_samples::read_sample(exact.cview(), x, y, 0);
          worst = std::max(worst, std::abs(gauss_samples::read_sample(got.cview(), x, y, 0) - e));
          peak = std::max(peak, e);
        }
      relative[k++] = worst / peak;
    }
    WARN("sigma " << sigma << ": point " << relative[0] << " of its peak, step " << relative[1]
                  << " of its height");
    // sigma / k below 3 (sigma 4-9) is the coarse end of the reduction.
    CHECK(relative[0] <= (sigma < 9.0 ? 0.012 : 0.005));
    CHECK(relative[1] <= (sigma < 9.0 ? 0.0015 : 0.001));
  }
}

TEST_CASE("CUDA decimated Gaussian on every format, border and shape", "[gauss][cuda]") {
  ThreadPool pool;
  const int shapes[][2] = {{80, 77}, {517, 301}, {1000, 90}};
  std::uint32_t seed = 900;
  double worst_relative[2] = {};
  int cases = 0;
  for (PixelFormat format : kFormats)
    for (BorderMode border : kBorders)
      for (const auto& s : shapes)
        for (const auto& sigmas : {std::pair{5.0, 5.0}, std::pair{7.0, 7.0}, std::pair{10.0, 4.5},
                                   std::pair{30.0, 30.0}}) {
          const GaussParams p = params_of(sigmas, border, format);
          TestImage in(s[0], s[1], format, 4);
          fill_random(in, ++seed);
          TestImage want(s[0], s[1], format);
          gauss_reference(p, in.cview(), want.view(), pool);
          bool padding_ok = false;
          const TestImage got = run_cuda(p, in, cuda::GaussPath::Decimated, &padding_ok);
          const Agreement a = compare(got, want);
          INFO(to_string(format) << " sigma " << p.sigma_x << "/" << p.sigma_y << " "
                                 << to_string(border) << " " << s[0] << "x" << s[1] << " worst "
                                 << a.worst << " differing " << a.differing << "/" << a.samples);
          // Noise is the hardest input (every frequency at once): within 5e-4 of the format's
          // range (floats: of [0, 1000)), one count more for the rounding.
          const double range = format_info(format).is_float                ? 1000.0
                               : format_info(format).bytes_per_sample == 2 ? 65535.0
                                                                           : 255.0;
          const double relative = a.worst / range;
          worst_relative[sigmas.first < 9.0 ? 0 : 1] =
              std::max(worst_relative[sigmas.first < 9.0 ? 0 : 1], relative);
          CHECK(a.worst <= 5e-4 * range + (format_info(format).is_float ? 0.0 : 1.0));
          CHECK(a.alpha_same);
          CHECK(padding_ok);
          ++cases;
        }
  WARN("decimated on noise: worst " << worst_relative[0] << " of the range below sigma 9, "
                                    << worst_relative[1] << " from it");
  REQUIRE(cases == 5 * 3 * 3 * 4);
}

// The down pass's blocks on frames of many strips: at 4096^2, on a GPU of 132 multiprocessors,
// blocks of two strips (sigma 8, k = 3) and one strip shared by two threads (sigma 20, k = 8),
// where the frames above take four threads sharing one strip. Point sources on rows of whole
// words (aligned: the strips kernel reads them), spaced so that they fall at every phase of the
// small grid, against their exact blur A w(dx) w(dy). A strip's rows added into the wrong small
// rows, or a sharer's phases lost, moves whole sums; the approximation itself stays within 1.2 %
// of a point's peak (above), so 2 % tells the two apart.
TEST_CASE("CUDA decimated Gaussian on frames of many strips: point sources at every phase",
          "[gauss][cuda]") {
  constexpr int n = 4096;
  constexpr float kAmplitude = 1.0e6f;
  for (const double sigma : {8.0, 20.0}) {
    GaussParams p;
    p.sigma_x = p.sigma_y = sigma;
    p.border = BorderMode::Replicate;
    const int r = p.effective_radius_x();
    const std::vector<float> w = gauss_weights(sigma, r);  // w[r + d]: offset d
    // 2 r + 19 apart: beyond each other's reach, and coprime with k = 3 and 8.
    const int spacing = 2 * r + 19;
    TestImage in(n, n, PixelFormat::Gray32F);
    std::vector<float> exact(static_cast<std::size_t>(n) * n, 0.0f);
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) in.set_key(x, y, 0, float_to_key(0.0f));
    int points = 0;
    for (int py = r + 8; py + r + 8 < n; py += spacing)
      for (int px = r + 8; px + r + 8 < n; px += spacing) {
        in.set_key(px, py, 0, float_to_key(kAmplitude));
        for (int dy = -r; dy <= r; ++dy)
          for (int dx = -r; dx <= r; ++dx) {
            exact[static_cast<std::size_t>(py + dy) * n + px + dx] =
                kAmplitude * w[r + dx] * w[r + dy];
          }
        ++points;
      }
    const TestImage got = run_cuda(p, in, cuda::GaussPath::Decimated, nullptr, true);
    double worst = 0.0;
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const double e = exact[static_cast<std::size_t>(y) * n + x];
        worst = std::max(worst, std::abs(gauss_samples::read_sample(got.cview(), x, y, 0) - e));
      }
    const double peak = static_cast<double>(kAmplitude) * w[r] * w[r];
    WARN("sigma " << sigma << ", " << points << " points: worst " << worst / peak << " of a peak");
    CHECK(worst / peak <= 0.02);
  }
}

// The small plane's blur in 32 x 32 tiles on a plane just below the million samples the fused
// path takes (some 960 tiles), and on one of a few tiles, against the exact blur.
TEST_CASE("CUDA decimated Gaussian: the small blur on planes of many and of few tiles",
          "[gauss][cuda]") {
  ThreadPool pool;
  for (const int n : {1900, 300}) {
    TestImage in(n, n, PixelFormat::Gray16);
    fill_random(in, 31 + n);
    GaussParams p;
    p.sigma_x = p.sigma_y = 5.0;  // k = 2: a small plane of n / 2 + 20 samples a side
    TestImage want(n, n, PixelFormat::Gray16);
    gauss_reference(p, in.cview(), want.view(), pool);
    const Agreement a = compare(run_cuda(p, in, cuda::GaussPath::Decimated), want);
    INFO(n << "^2: worst " << a.worst << " differing " << a.differing << "/" << a.samples);
    CHECK(a.worst <= 5e-4 * 65535.0 + 1.0);
  }
}

// GRAY8 frames the tensor cores take: theirs below kDecimatedBy3Sigma, the decimation's from it
// (where it reduces by 3), the tensor cores' again on a frame too small for the decimation.
TEST_CASE("CUDA Gaussian, auto: the tensor cores below sigma 5.5, the decimation from it",
          "[gauss][cuda]") {
  TestImage big(256, 200, PixelFormat::Gray8), small(24, 24, PixelFormat::Gray8);
  DeviceCopy a(big, 0), b(big, 0);  // rows of 256 bytes: words of four samples
  const bool mma = cuda::gauss_max_fused_radius(PixelFormat::Gray8) > cuda::kMaxFusedRadius;
  GaussParams p;
  p.sigma_x = p.sigma_y = 5.4;  // radius 22
  CHECK(cuda::gauss_auto_path(p, const_view(a.view()), b.view()) ==
        (mma ? cuda::GaussPath::Fused : cuda::GaussPath::Decimated));
  p.sigma_y = cuda::kDecimatedBy3Sigma;  // one axis below it
  CHECK(cuda::gauss_auto_path(p, const_view(a.view()), b.view()) ==
        (mma ? cuda::GaussPath::Fused : cuda::GaussPath::Decimated));
  p.sigma_x = cuda::kDecimatedBy3Sigma;
  CHECK(cuda::gauss_auto_path(p, const_view(a.view()), b.view()) == cuda::GaussPath::Decimated);
  if (mma) {
    // Too small for the margins: the tensor cores' exact sums, not the recursion.
    fill_random(small, 78);
    const Agreement agreement = compare(run_cuda(p, small, cuda::GaussPath::Auto, nullptr, true),
                                        run_cuda(p, small, cuda::GaussPath::Fused, nullptr, true));
    CHECK(agreement.differing == 0);
  }
}

TEST_CASE("CUDA Gaussian, auto: a frame too small for the decimated planes recurses",
          "[gauss][cuda]") {
  GaussParams p;
  p.sigma_x = p.sigma_y = 10.0;
  TestImage in(24, 20, PixelFormat::Gray16);
  fill_random(in, 77);
  const TestImage got = run_cuda(p, in, cuda::GaussPath::Auto);
  const TestImage want = run_cuda(p, in, cuda::GaussPath::Recursive);
  const Agreement a = compare(got, want);
  CHECK(a.differing == 0);
}

// The down kernel's shared memory bounds the decimated path's sigma (docs/gauss.md: 960 on
// gray frames, 428 on colour ones); beyond it the path refuses and Auto recurses.
TEST_CASE("CUDA decimated Gaussian: sigma up to its shared memory, then the recursion",
          "[gauss][cuda]") {
  struct Case {
    PixelFormat format;
    double inside, beyond;
  };
  for (const Case& c :
       {Case{PixelFormat::Rgba, 420.0, 440.0}, Case{PixelFormat::Gray8, 950.0, 1000.0}}) {
    TestImage in(600, 300, c.format);
    fill_random(in, 5);
    DeviceCopy a(in, 0), b(in, 0);
    Scratch scratch(
        cuda::gauss_scratch_bytes(cuda::GaussPath::Decimated, in.width, in.height, c.format));
    GaussParams p;
    p.sigma_x = p.sigma_y = c.inside;
    INFO(to_string(c.format) << " sigma " << c.inside << " / " << c.beyond);
    CHECK(cuda::launch_gauss(p, const_view(a.view()), b.view(), scratch.ptr, scratch.bytes, nullptr,
                             cuda::GaussPath::Decimated) == cudaSuccess);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    p.sigma_x = p.sigma_y = c.beyond;
    CHECK(cuda::launch_gauss(p, const_view(a.view()), b.view(), scratch.ptr, scratch.bytes, nullptr,
                             cuda::GaussPath::Decimated) == cudaErrorInvalidValue);
    CHECK(cuda::gauss_auto_path(p) == cuda::GaussPath::Decimated);  // by the parameters alone
    const Agreement agreement = compare(run_cuda(p, in, cuda::GaussPath::Auto),
                                        run_cuda(p, in, cuda::GaussPath::Recursive));
    CHECK(agreement.differing == 0);
  }
  cudaGetLastError();
}

TEST_CASE("CUDA Gaussian refuses what it cannot do", "[gauss][cuda]") {
  TestImage img(40, 40, PixelFormat::Gray8);
  DeviceCopy a(img, 0), b(img, 0);
  GaussParams p;
  p.sigma_x = p.sigma_y = 7.0;  // radius 28: beyond the fused path, the tensor cores' too
  CHECK(cuda::launch_gauss(p, const_view(a.view()), b.view(), nullptr, 0, nullptr,
                           cuda::GaussPath::Fused) == cudaErrorInvalidValue);
  p.sigma_x = p.sigma_y = 5.0;  // radius 20: fused only on the tensor cores (GRAY8)
  CHECK(cuda::launch_gauss(p, const_view(a.view()), b.view(), nullptr, 0, nullptr,
                           cuda::GaussPath::Fused) ==
        (cuda::gauss_max_fused_radius(PixelFormat::Gray8) >= 20 ? cudaSuccess
                                                                : cudaErrorInvalidValue));
  {
    TestImage gray16(40, 40, PixelFormat::Gray16);
    DeviceCopy c(gray16, 0), d(gray16, 0);
    CHECK(cuda::launch_gauss(p, const_view(c.view()), d.view(), nullptr, 0, nullptr,
                             cuda::GaussPath::Fused) == cudaErrorInvalidValue);
  }
  CHECK(cuda::launch_gauss(p, const_view(a.view()), b.view(), nullptr, 0, nullptr,
                           cuda::GaussPath::Separable) == cudaErrorInvalidValue);  // no scratch
  // Too small a frame for the decimated planes (margins of 12 samples each side).
  {
    Scratch scratch(cuda::gauss_scratch_bytes(cuda::GaussPath::Decimated, 40, 40, img.format));
    CHECK(cuda::launch_gauss(p, const_view(a.view()), b.view(), scratch.ptr, scratch.bytes, nullptr,
                             cuda::GaussPath::Decimated) == cudaErrorInvalidValue);
  }
  CHECK(cuda::gauss_auto_path(p) == cuda::GaussPath::Decimated);
  CHECK(cuda::gauss_exact_path(p) == cuda::GaussPath::Recursive);
  p.sigma_x = 30.0;
  CHECK(cuda::gauss_auto_path(p) == cuda::GaussPath::Decimated);
  p.radius_x = 200;  // a truncation of the user's own: summed or recursed, not decimated
  CHECK(cuda::gauss_auto_path(p) == cuda::GaussPath::Recursive);
  p.radius_x = 0;
  p.sigma_y = 3.0;  // below kDecimatedMinSigma
  CHECK(cuda::gauss_auto_path(p) == cuda::GaussPath::Recursive);
  p.sigma_y = 1.0;  // too little for the recursion: both axes summed exactly
  CHECK(cuda::gauss_auto_path(p) == cuda::GaussPath::Separable);
  p.sigma_x = p.sigma_y = 2.0;
  CHECK(cuda::gauss_auto_path(p) == cuda::GaussPath::Fused);
  CHECK(cuda::gauss_scratch_bytes(cuda::GaussPath::Fused, 40, 40, PixelFormat::Gray8) == 0);
  cudaGetLastError();
}

TEST_CASE("CUDA gauss stage: host frames, live sigma changes across paths",
          "[gauss][cuda][stage]") {
  ThreadPool pool;
  GaussParams p;
  auto cuda_stage = make_gauss_stage(p, resolve_backend(Backend::Cuda, 0));
  auto cpu_stage = make_gauss_stage(p, resolve_backend(Backend::Cpu, 0));
  REQUIRE(cuda_stage->backend() == Backend::Cuda);
  for (const auto& shape : {FrameShape{1920, 1080, PixelFormat::Gray16, 12},
                            FrameShape{641, 479, PixelFormat::Bgra, 8}}) {
    cuda_stage->configure(shape);
    cpu_stage->configure(shape);
    TestImage in(shape.width, shape.height, shape.format, 36);
    fill_random(in, 9);
    // Fused, decimated twice, and back: the scratch grows once, when first needed.
    for (double sigma : {1.0, 8.0, 30.0, 2.0}) {
      p.sigma_x = p.sigma_y = sigma;
      cuda_stage->set_params(p);
      cpu_stage->set_params(p);
      TestImage got(shape.width, shape.height, shape.format, 4);
      TestImage want(shape.width, shape.height, shape.format);
      cuda_stage->process(in.cview(), got.view());
      cpu_stage->process(in.cview(), want.view());
      const Agreement a = compare(got, want);
      INFO(to_string(shape.format) << " sigma " << sigma << " worst " << a.worst);
      // Beyond the fused radii the GPU decimates where the CPU sums exactly: on noise within
      // 0.02 % of the full range.
      const double range = format_info(shape.format).bytes_per_sample == 1 ? 255.0 : 65535.0;
      CHECK(a.worst <= (sigma > 4.0 ? std::max(1.0, 2e-4 * range) : 1.0));
      CHECK(a.alpha_same);
    }
  }
}
