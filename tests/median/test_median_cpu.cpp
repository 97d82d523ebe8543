// SPDX-License-Identifier: LGPL-2.1-or-later
// The vectorised CPU median against the reference, bit for bit, on every shape that reaches
// a different part of it: rows shorter than a vector, edges only, several chunks.
#include <catch2/catch.hpp>

#include "pipeline/median/median_cpu.hpp"
#include "pipeline/median/reference.hpp"
#include "support/brute_median.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

const PixelFormat kFormats[] = {PixelFormat::Gray8, PixelFormat::Gray16, PixelFormat::Rgba,
                                PixelFormat::Bgrx};
const BorderMode kBorders[] = {BorderMode::Replicate, BorderMode::Reflect101, BorderMode::Constant};
const MedianCpuIsa kIsas[] = {MedianCpuIsa::Best, MedianCpuIsa::Baseline};

MedianParams params(int size, BorderMode border, double value) {
  MedianParams p;
  p.size = size;
  p.border = border;
  p.border_value = value;
  return p;
}

// The output's row padding is still the 0xA5 TestImage wrote.
bool padding_untouched(const TestImage& img) {
  const std::size_t row = static_cast<std::size_t>(img.width) * bytes_per_pixel(img.format);
  for (int y = 0; y < img.height; ++y)
    for (std::size_t b = row; b < static_cast<std::size_t>(img.stride); ++b)
      if (img.bytes[y * img.stride + b] != std::byte{0xA5}) return false;
  return true;
}

}  // namespace

TEST_CASE("vectorised CPU median covers 3, 5, 7 on 8- and 16-bit formats only", "[median][cpu]") {
  for (int size : {3, 5, 7}) {
    MedianParams p = params(size, BorderMode::Reflect101, 0);
    CHECK(median_cpu_vectorised(p, PixelFormat::Gray8));
    CHECK(median_cpu_vectorised(p, PixelFormat::Gray16));
    CHECK(median_cpu_vectorised(p, PixelFormat::Rgba));
    CHECK_FALSE(median_cpu_vectorised(p, PixelFormat::Gray32F));
  }
  CHECK_FALSE(median_cpu_vectorised(params(9, BorderMode::Reflect101, 0), PixelFormat::Gray8));
}

TEST_CASE("vectorised CPU median equals the reference bit for bit", "[median][cpu]") {
  ThreadPool pool(3);
  // 1xN, Nx1, shorter than the window, edges only (width < size), one vector, several
  // 1024-sample chunks with a short last one, odd widths.
  const int shapes[][2] = {{1, 1},   {1, 40}, {70, 1},  {2, 2},    {5, 4},
                           {17, 13}, {33, 7}, {300, 5}, {1027, 61}};
  std::uint32_t seed = 100;
  for (PixelFormat format : kFormats)
    for (BorderMode border : kBorders)
      for (int size : {3, 5, 7})
        for (const auto& s : shapes)
          for (Fill how : {Fill::Random, Fill::Sentinels}) {
            TestImage in(s[0], s[1], format, /*pad_bytes=*/6);
            fill(in, how, ++seed);
            const MedianParams p = params(size, border, format == PixelFormat::Gray16 ? 40000 : 7);
            TestImage expected(s[0], s[1], format);
            median_reference(p, in.cview(), expected.view(), pool);
            for (MedianCpuIsa isa : kIsas) {
              TestImage out(s[0], s[1], format, /*pad_bytes=*/2);
              median_cpu(p, in.cview(), out.view(), pool, isa);
              INFO(to_string(format)
                   << " " << to_string(border) << " size " << size << " " << s[0] << "x" << s[1]
                   << " " << to_string(how) << " " << median_cpu_isa_name(isa) << " first diff "
                   << out.first_difference(expected));
              REQUIRE(out.same_pixels(expected));
              REQUIRE(padding_untouched(out));
            }
          }
}

TEST_CASE("vectorised CPU median equals a full sort of every padded window", "[median][cpu]") {
  ThreadPool pool(2);
  std::uint32_t seed = 7;
  for (PixelFormat format : kFormats)
    for (BorderMode border : kBorders)
      for (int size : {3, 5, 7})
        for (int w : {3, 40}) {
          TestImage in(w, 9, format, 4);
          fill(in, Fill::Impulse, ++seed);
          const MedianParams p = params(size, border, 200);
          TestImage out(w, 9, format);
          median_cpu(p, in.cview(), out.view(), pool);
          INFO(to_string(format) << " " << to_string(border) << " size " << size << " width " << w
                                 << " first diff " << out.first_difference(brute_median(in, p)));
          REQUIRE(out.same_pixels(brute_median(in, p)));
        }
}

TEST_CASE("vectorised CPU median keeps a constant frame and copies alpha", "[median][cpu]") {
  ThreadPool pool(2);
  for (PixelFormat format : kFormats)
    for (BorderMode border : kBorders)
      for (int size : {3, 5, 7}) {
        TestImage in(100, 20, format, 4);
        fill(in, Fill::Constant, 1);
        const FormatInfo& info = format_info(format);
        for (int y = 0; y < 20; ++y)  // alpha/padding bytes differ from pixel to pixel
          for (int x = 0; x < 100; ++x)
            for (int c = info.color_channels; c < info.channels; ++c)
              in.set_key(x, y, c, (x * 7 + y) & 0xff);
        // Under Constant the border value equals the frame's, so every window is constant.
        const std::uint32_t value = in.key(0, 0, 0);
        TestImage out(100, 20, format);
        median_cpu(params(size, border, value), in.cview(), out.view(), pool);
        INFO(to_string(format) << " " << to_string(border) << " size " << size);
        REQUIRE(out.same_pixels(in));
      }
}

TEST_CASE("vectorised CPU median refuses mismatched frames and bad border values",
          "[median][cpu]") {
  ThreadPool pool(1);
  TestImage in(8, 8, PixelFormat::Gray8);
  TestImage out(8, 7, PixelFormat::Gray8);
  REQUIRE_THROWS_WITH(median_cpu(MedianParams{}, in.cview(), out.view(), pool),
                      Catch::Contains("differs from input frame"));
  TestImage same(8, 8, PixelFormat::Gray8);
  REQUIRE_THROWS_WITH(
      median_cpu(params(3, BorderMode::Constant, 300), in.cview(), same.view(), pool),
      Catch::Contains("0..255"));
}
