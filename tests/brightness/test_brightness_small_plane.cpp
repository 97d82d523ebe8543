// SPDX-License-Identifier: LGPL-2.1-or-later
// The CUDA kernels' small plane (brightness_kernels.cu: tent_tables, reduce_rows,
// add_halves, upsample_rows, SmallSource) replayed on the host in the kernels' order, from
// the tables of
// tent_axis.hpp, and held against LuminanceBlur bit for bit. The GPU tests hold the kernels
// themselves against LuminanceBlur; this one shows, with no GPU, that their order of sums and
// their tables are the CPU's, so that what differs on the device is Y (the reference's, where
// the CPU rounds its own float Y) and the small plane's blur alone. Compiled without fused
// multiply-adds, as the kernels round each operation on their own.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "brightness_frames.hpp"
#include "pipeline/brightness/luminance_blur.hpp"
#include "pipeline/brightness/rows.hpp"
#include "pipeline/brightness/tent_axis.hpp"
#include "pipeline/gauss/gauss_cpu.hpp"
#include "pipeline/gauss/gauss_iir.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

// One axis's tables as tent_tables_kernel fills them: an entry per pixel and the runs' starts,
// samples + 1 of them.
struct Tables {
  int samples = 0;
  double spacing = 1.0;
  std::vector<tent_axis::Entry> entries;
  std::vector<int> run_begin;
};

Tables tables_of(int pixels, int samples) {
  Tables t;
  t.samples = samples;
  t.spacing = tent_axis::spacing(pixels, samples);
  t.entries.resize(static_cast<std::size_t>(pixels));
  t.run_begin.assign(static_cast<std::size_t>(samples) + 1, -1);
  for (int p = 0; p < pixels; ++p) {
    const auto k = static_cast<std::size_t>(p);
    t.entries[k] = tent_axis::entry(p, pixels, samples, t.spacing);
    if (tent_axis::run_starts(p, pixels, samples, t.spacing)) {
      t.run_begin[static_cast<std::size_t>(t.entries[k].left)] = p;
    }
  }
  t.run_begin[static_cast<std::size_t>(samples)] = pixels;
  if (samples > 1) t.run_begin[static_cast<std::size_t>(samples) - 1] = pixels;
  return t;
}

// B as the kernels compute it, with the CPU's Y (load_luminance) and the CPU's blur of the
// small plane: width x height floats.
std::vector<float> replay(const FrameShape& shape, double sigma, ConstImageView in) {
  const int width = shape.width;
  const int height = shape.height;
  const int factor = LuminanceBlur::downsample_factor(sigma);
  const int sw = LuminanceBlur::small_samples(width, factor);
  const int sh = LuminanceBlur::small_samples(height, factor);
  const Tables x = tables_of(width, sw);
  const Tables y = tables_of(height, sh);
  for (const int b : x.run_begin) REQUIRE(b >= 0);  // every run starts somewhere
  for (const int b : y.run_begin) REQUIRE(b >= 0);
  const auto max = static_cast<float>(brightness_sample_max(shape));

  // reduce_rows_kernel across: per sample, the run before it (to_right), then its own (to_left).
  std::vector<float> rows(static_cast<std::size_t>(sw) * height);
  std::vector<float> lum(static_cast<std::size_t>(width));
  for (int r = 0; r < height; ++r) {
    brightness_rows::load_luminance(in, r, max, lum.data());
    for (int i = 0; i < sw; ++i) {
      const auto sum = [&](int begin, int end, bool right) {
        float s = 0.0f;
        for (int p = begin; p < end; ++p) {
          const tent_axis::Entry& e = x.entries[static_cast<std::size_t>(p)];
          s += lum[static_cast<std::size_t>(p)] * (right ? e.to_right : e.to_left);
        }
        return s;
      };
      const auto at = [&](int k) { return x.run_begin[static_cast<std::size_t>(k)]; };
      const float before = i > 0 ? sum(at(i - 1), at(i), true) : 0.0f;
      rows[static_cast<std::size_t>(r) * sw + i] = before + sum(at(i), at(i + 1), false);
    }
  }
  // reduce_rows_kernel down: per sample, the run before's rows times to_right plus its own
  // run's times to_left, each summed from 0 (the small plane's two halves, added where the
  // blur reads them).
  std::vector<float> small(static_cast<std::size_t>(sw) * sh);
  for (int j = 0; j < sh; ++j) {
    for (int i = 0; i < sw; ++i) {
      const auto at = [&](int k) { return y.run_begin[static_cast<std::size_t>(k)]; };
      const auto sum = [&](int run, bool right) {
        float s = 0.0f;
        for (int r = at(run); r < at(run + 1); ++r) {
          const tent_axis::Entry& e = y.entries[static_cast<std::size_t>(r)];
          s += (right ? e.to_right : e.to_left) * rows[static_cast<std::size_t>(r) * sw + i];
        }
        return s;
      };
      const float before = j > 0 ? sum(j - 1, true) : 0.0f;
      small[static_cast<std::size_t>(j) * sw + i] = before + sum(j, false);
    }
  }
  // The blur of the small plane, the CPU's choice of path (the launcher makes the same).
  std::vector<float> blurred(small.size());
  GaussParams g;
  g.border = BorderMode::Reflect101;
  g.sigma_x = LuminanceBlur::small_sigma(sigma, x.spacing);
  g.sigma_y = LuminanceBlur::small_sigma(sigma, y.spacing);
  const ConstImageView small_view{reinterpret_cast<const std::byte*>(small.data()), sw, sh,
                                  static_cast<std::ptrdiff_t>(sw) * 4, PixelFormat::Gray32F};
  const ImageView blurred_view{reinterpret_cast<std::byte*>(blurred.data()), sw, sh,
                               static_cast<std::ptrdiff_t>(sw) * 4, PixelFormat::Gray32F};
  if (std::max(g.sigma_x, g.sigma_y) >= GaussParams::kRecursiveFromSigma) {
    GaussIir().run(g, small_view, blurred_view, pool());
  } else {
    GaussCpu().run(g, small_view, blurred_view, pool());
  }
  // upsample_rows_kernel across within the two small rows, SmallSource between them.
  std::vector<float> b(static_cast<std::size_t>(width) * height);
  const auto lerp = [](float a0, float a1, float t) { return a0 + t * (a1 - a0); };
  for (int r = 0; r < height; ++r) {
    const tent_axis::Entry& ey = y.entries[static_cast<std::size_t>(r)];
    const float* r0 = blurred.data() + static_cast<std::size_t>(ey.left) * sw;
    const float* r1 = blurred.data() + static_cast<std::size_t>(std::min(ey.left + 1, sh - 1)) * sw;
    for (int c = 0; c < width; ++c) {
      const tent_axis::Entry& ex = x.entries[static_cast<std::size_t>(c)];
      const int right = std::min(ex.left + 1, sw - 1);
      const float above = lerp(r0[ex.left], r0[right], ex.fraction);
      const float below = lerp(r1[ex.left], r1[right], ex.fraction);
      b[static_cast<std::size_t>(r) * width + c] = lerp(above, below, ey.fraction);
    }
  }
  return b;
}

}  // namespace

TEST_CASE("the CUDA small plane's order replayed on the host is LuminanceBlur's, bit for bit",
          "[brightness]") {
  const int sizes[][2] = {{1, 1},  {7, 5},   {5, 7},     {1, 40},
                          {40, 1}, {13, 11}, {301, 203}, {1031, 517}};
  const PixelFormat formats[] = {PixelFormat::Gray8, PixelFormat::Gray16, PixelFormat::Gray32F,
                                 PixelFormat::Rgba};
  std::uint32_t seed = 40;
  for (const auto& size : sizes)
    for (const PixelFormat format : formats)
      for (const double sigma : {8.0, 16.0, 40.0, 100.0, 400.0}) {
        TestImage in(size[0], size[1], format);
        const FrameShape shape = shape_of(in, format == PixelFormat::Gray16 ? 12 : 0);
        fill_random(in, brightness_sample_max(shape), ++seed);
        LuminanceBlur blur;
        blur.prepare(shape, sigma, in.cview(), pool());
        const std::vector<float> want = replay(shape, sigma, in.cview());
        std::vector<float> scratch(static_cast<std::size_t>(in.width));
        long differing = 0;
        for (int r = 0; r < in.height; ++r) {
          const float* row = blur.row(r, scratch.data());
          for (int c = 0; c < in.width; ++c) {
            differing += row[c] != want[static_cast<std::size_t>(r) * in.width + c];
          }
        }
        INFO(to_string(format) << " " << size[0] << "x" << size[1] << " sigma " << sigma << ": "
                               << differing << " differ");
        CHECK(differing == 0);
      }
}
