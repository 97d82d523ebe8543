// SPDX-License-Identifier: LGPL-2.1-or-later
// The CPU reference median against a brute-force sort, and its parameter checks.
#include <catch2/catch.hpp>

#include "pipeline/error.hpp"
#include "pipeline/median/median_stage.hpp"
#include "pipeline/median/reference.hpp"
#include "support/brute_median.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {
const PixelFormat kFormats[] = {PixelFormat::Gray8, PixelFormat::Gray16, PixelFormat::Gray32F,
                                PixelFormat::Rgba,  PixelFormat::Bgra,   PixelFormat::Rgbx,
                                PixelFormat::Bgrx};
const BorderMode kBorders[] = {BorderMode::Replicate, BorderMode::Reflect101, BorderMode::Constant};
}  // namespace

TEST_CASE("reference median equals a full sort of every padded window", "[median][cpu]") {
  ThreadPool pool(3);
  const int shapes[][2] = {{1, 1}, {1, 9}, {9, 1}, {2, 3}, {17, 11}};
  std::uint32_t seed = 1;
  for (PixelFormat format : kFormats)
    for (BorderMode border : kBorders)
      for (int size : {3, 5, 7, 9, 15})
        for (const auto& s : shapes)
          for (Fill how : {Fill::Random, Fill::Impulse, Fill::Sentinels}) {
            TestImage in(s[0], s[1], format, /*pad_bytes=*/4);
            fill(in, how, ++seed);
            MedianParams p;
            p.size = size;
            p.border = border;
            p.border_value = format_info(format).is_float ? -3.5 : 7;
            TestImage out(s[0], s[1], format, /*pad_bytes=*/8);
            median_reference(p, in.cview(), out.view(), pool);
            const TestImage expected = brute_median(in, p);
            INFO(to_string(format)
                 << " " << to_string(border) << " size " << size << " " << s[0] << "x" << s[1]
                 << " " << to_string(how) << " first diff " << out.first_difference(expected));
            REQUIRE(out.same_pixels(expected));
          }
}

TEST_CASE("reference median leaves row padding untouched", "[median][cpu]") {
  ThreadPool pool(2);
  TestImage in(13, 7, PixelFormat::Gray8, 5);
  fill(in, Fill::Random, 5);
  TestImage out(13, 7, PixelFormat::Gray8, 5);
  median_reference(MedianParams{}, in.cview(), out.view(), pool);
  for (int y = 0; y < 7; ++y)
    for (int b = 13; b < 18; ++b) REQUIRE(out.bytes[y * out.stride + b] == std::byte{0xA5});
}

TEST_CASE("median of a constant image is that constant; impulses vanish", "[median][cpu]") {
  ThreadPool pool(2);
  TestImage in(40, 30, PixelFormat::Gray16);
  fill(in, Fill::Constant, 1);
  in.set_key(20, 15, 0, 65535);  // one hot pixel
  in.set_key(3, 3, 0, 0);        // one dead pixel
  TestImage out(40, 30, PixelFormat::Gray16);
  MedianParams p;
  p.size = 3;
  median_reference(p, in.cview(), out.view(), pool);
  for (int y = 0; y < 30; ++y)
    for (int x = 0; x < 40; ++x) REQUIRE(out.key(x, y, 0) == 65535 / 2);
}

TEST_CASE("constant border uses border-value", "[median][cpu]") {
  ThreadPool pool(1);
  TestImage in(1, 1, PixelFormat::Gray8);
  in.set_key(0, 0, 0, 10);
  TestImage out(1, 1, PixelFormat::Gray8);
  MedianParams p;
  p.size = 3;
  p.border = BorderMode::Constant;
  p.border_value = 200;  // 8 of 9 samples are 200
  median_reference(p, in.cview(), out.view(), pool);
  REQUIRE(out.key(0, 0, 0) == 200);
  p.border = BorderMode::Replicate;
  median_reference(p, in.cview(), out.view(), pool);
  REQUIRE(out.key(0, 0, 0) == 10);
}

TEST_CASE("median parameters are validated with the allowed range", "[median][params]") {
  MedianParams p;
  for (int bad : {-1, 0, 1, 2, 4, 33, 100}) {
    p.size = bad;
    REQUIRE_THROWS_WITH(p.validate(), Catch::Contains("median size " + std::to_string(bad)) &&
                                          Catch::Contains("odd values 3..31"));
  }
  p.size = 31;
  REQUIRE_NOTHROW(p.validate());
  p.size = 5;
  p.border_value = 256;
  REQUIRE_THROWS_WITH(p.validate_for(PixelFormat::Gray8), Catch::Contains("0..255"));
  REQUIRE_NOTHROW(p.validate_for(PixelFormat::Gray16));
  p.border_value = 1.5;
  REQUIRE_THROWS_WITH(p.validate_for(PixelFormat::Gray16), Catch::Contains("whole numbers"));
  REQUIRE_NOTHROW(p.validate_for(PixelFormat::Gray32F));
}

TEST_CASE("CPU median stage filters host frames with any strides", "[median][stage]") {
  auto stage = make_median_stage(MedianParams{}, BackendChoice{Backend::Cpu, 0, "test"});
  REQUIRE(stage->backend() == Backend::Cpu);
  stage->configure({31, 17, PixelFormat::Rgba, 8});
  TestImage in(31, 17, PixelFormat::Rgba, 12);
  fill(in, Fill::Impulse, 9);
  TestImage out(31, 17, PixelFormat::Rgba, 0);
  MedianParams p;
  p.size = 5;
  stage->set_params(p);
  stage->process(in.cview(), out.view());
  REQUIRE(out.same_pixels(brute_median(in, p)));
  p.size = 2;
  REQUIRE_THROWS_AS(stage->set_params(p), Error);
  REQUIRE(stage->params().size == 5);  // the bad value did not stick
}
