// SPDX-License-Identifier: LGPL-2.1-or-later
// brightness_reference(), the definition: what the formula does to frames whose answer is
// known. Identities (strength 0, alpha 0), a constant frame (which the formula does change:
// B = Y there, so Y' = Y^(2^(s (2Y - 1)))), local adaptation across a dark/bright edge, the
// stretches on histograms worked out by hand, colour ratios, alpha, bit depth 12.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "brightness_frames.hpp"
#include "pipeline/brightness/clahe.hpp"
#include "pipeline/error.hpp"
#include "pipeline/gauss/params.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

void check_identity(const BrightnessParams& params, const TestImage& in, int bit_depth = 0) {
  const TestImage out = reference_of(params, shape_of(in, bit_depth), in);
  INFO(to_string(in.format) << ": " << in.first_difference(out));
  CHECK(out.same_pixels(in));
}

}  // namespace

TEST_CASE("brightness: strength 0 and alpha 0 are the identity", "[brightness]") {
  TestImage gray8(33, 21, PixelFormat::Gray8);
  fill_random(gray8, 255, 1);
  TestImage gray12(33, 21, PixelFormat::Gray16);
  fill_random(gray12, 4095, 2);
  TestImage rgba(33, 21, PixelFormat::Rgba);
  fill_random(rgba, 255, 3);
  TestImage bgrx(33, 21, PixelFormat::Bgrx);
  fill_random(bgrx, 255, 4);
  TestImage gray32f(33, 21, PixelFormat::Gray32F);
  fill_random(gray32f, 1, 5);

  BrightnessParams no_strength;
  no_strength.strength = 0.0;
  no_strength.sigma = 3.0;
  BrightnessParams no_alpha;
  no_alpha.alpha = 0.0;
  no_alpha.sigma = 3.0;
  no_alpha.strength = 4.0;
  for (const BrightnessParams& p : {no_strength, no_alpha}) {
    check_identity(p, gray8);
    check_identity(p, gray12, 12);
    check_identity(p, rgba);
    check_identity(p, bgrx);
    check_identity(p, gray32f);
  }
}

TEST_CASE("brightness: a constant frame takes the formula's value with B = Y", "[brightness]") {
  // 255 Y^(2^(2Y - 1)) for Y = k / 255: 0 -> 0, 30 -> 72.36, 64 -> 95.82, 128 -> 127.76,
  // 200 -> 177.85, 255 -> 255. A flat dark frame lifts, mid-grey stays, a flat bright frame
  // darkens: the mask is its own surroundings.
  const std::pair<int, int> cases[] = {{0, 0},     {30, 72},   {64, 96},
                                       {128, 128}, {200, 178}, {255, 255}};
  for (const auto& [value, expected] : cases) {
    INFO("constant " << value);
    TestImage in(24, 16, PixelFormat::Gray8);
    fill_with(in, [&](int, int, int) { return value; });
    const TestImage out = reference_of(BrightnessParams{}, shape_of(in), in);
    for (int y = 0; y < in.height; ++y) {
      for (int x = 0; x < in.width; ++x) REQUIRE(value_at(out, x, y, 0) == expected);
    }
  }
  // The same in 12 bits: 4095 Y^(2^(2Y - 1)) for Y = 500 / 4095 is 1192.2.
  TestImage in(24, 16, PixelFormat::Gray16);
  fill_with(in, [](int, int, int) { return 500; });
  const TestImage out = reference_of(BrightnessParams{}, shape_of(in, 12), in);
  const double y = 500.0 / 4095.0;
  const double expected = 4095.0 * std::pow(y, std::pow(2.0, 2.0 * y - 1.0));
  CHECK(value_at(out, 5, 5, 0) == std::floor(expected + 0.5));
}

TEST_CASE("brightness: a dark half lifts, a bright half holds, each after its surroundings",
          "[brightness]") {
  // Left half 25, right half 230, sigma 8: far from the edge B = Y and the constant frame's
  // values hold (25 -> 67, 230 -> 213: +42 and -17); near the edge a dark pixel sees bright
  // surroundings and lifts less, a bright pixel sees dark ones and darkens less.
  TestImage in(160, 40, PixelFormat::Gray8);
  fill_with(in, [](int x, int, int) { return x < 80 ? 25 : 230; });
  BrightnessParams p;
  p.sigma = 8.0;
  const TestImage out = reference_of(p, shape_of(in), in);
  const int row = 20;
  CHECK(value_at(out, 10, row, 0) == 67);
  CHECK(value_at(out, 150, row, 0) == 213);
  for (int x = 10; x < 79; ++x) {
    // Lifting less and less towards the edge.
    INFO("x " << x);
    CHECK(value_at(out, x + 1, row, 0) <= value_at(out, x, row, 0));
    CHECK(value_at(out, x, row, 0) > 25);
  }
  CHECK(value_at(out, 79, row, 0) < 45);
  for (int x = 81; x < 150; ++x) {
    INFO("x " << x);
    CHECK(value_at(out, x + 1, row, 0) <= value_at(out, x, row, 0));
    CHECK(value_at(out, x, row, 0) >= 213);
  }
  CHECK(value_at(out, 80, row, 0) > 225);
}

TEST_CASE("brightness: percentile stretch on a ramp", "[brightness]") {
  // 256 pixels valued 0..255, the correction off (strength 0): 10 % is rank ceil(25.6) = 26,
  // value 25; 90 % rank ceil(230.4) = 231, value 230. Out = round((v - 25) 255 / 205).
  TestImage in(16, 16, PixelFormat::Gray8);
  fill_with(in, [](int x, int y, int) { return y * 16 + x; });
  BrightnessParams p;
  p.strength = 0.0;
  p.stretch = BrightnessStretch::Percentile;
  p.low_percentile = 10.0;
  p.high_percentile = 90.0;
  const TestImage out = reference_of(p, shape_of(in), in);
  for (int v = 0; v < 256; ++v) {
    INFO("value " << v);
    const double expected = std::clamp(std::floor((v - 25) * 255.0 / 205.0 + 0.5), 0.0, 255.0);
    CHECK(value_at(out, v % 16, v / 16, 0) == expected);
  }
}

TEST_CASE("brightness: percentile stretch on two-valued frames", "[brightness]") {
  BrightnessParams p;
  p.strength = 0.0;
  p.stretch = BrightnessStretch::Percentile;
  // Half 50, half 200: 0.5 % and 99.5 % fall on the two values, which become 0 and 255.
  TestImage halves(20, 10, PixelFormat::Gray8);
  fill_with(halves, [](int x, int, int) { return x < 10 ? 50 : 200; });
  TestImage out = reference_of(p, shape_of(halves), halves);
  CHECK(value_at(out, 0, 0, 0) == 0);
  CHECK(value_at(out, 19, 9, 0) == 255);

  // With 2 of 200 pixels at 0 and 2 at 255: percentiles 0.5..99.5 (ranks 1 and 199) reach
  // the outliers; 2..98 (ranks 4 and 196) step over them.
  TestImage outliers = halves;
  set_value(outliers, 0, 0, 0, 0);
  set_value(outliers, 1, 0, 0, 0);
  set_value(outliers, 18, 9, 0, 255);
  set_value(outliers, 19, 9, 0, 255);
  out = reference_of(p, shape_of(outliers), outliers);
  CHECK(value_at(out, 5, 5, 0) == 50);
  CHECK(value_at(out, 15, 5, 0) == 200);
  p.low_percentile = 2.0;
  p.high_percentile = 98.0;
  out = reference_of(p, shape_of(outliers), outliers);
  CHECK(value_at(out, 5, 5, 0) == 0);
  CHECK(value_at(out, 15, 5, 0) == 255);
  CHECK(value_at(out, 0, 0, 0) == 0);     // below lo: clamped
  CHECK(value_at(out, 19, 9, 0) == 255);  // above hi: clamped

  // One value only (hi == lo): nothing to stretch, the frame stays as corrected.
  TestImage flat(20, 10, PixelFormat::Gray8);
  fill_with(flat, [](int, int, int) { return 90; });
  out = reference_of(p, shape_of(flat), flat);
  CHECK(out.same_pixels(flat));
}

TEST_CASE("brightness: fixed stretch", "[brightness]") {
  // 12-bit ramp; 1000..3000 onto 0..4095: out = round((v - 1000) 4095 / 2000), clamped.
  TestImage in(64, 64, PixelFormat::Gray16);
  fill_with(in, [](int x, int y, int) { return y * 64 + x; });
  BrightnessParams p;
  p.strength = 0.0;
  p.stretch = BrightnessStretch::Fixed;
  p.stretch_min = 1000.0;
  p.stretch_max = 3000.0;
  const TestImage out = reference_of(p, shape_of(in, 12), in);
  for (int v = 0; v < 4096; v += 7) {
    INFO("value " << v);
    const double expected = std::clamp(std::floor((v - 1000) * 4095.0 / 2000.0 + 0.5), 0.0, 4095.0);
    CHECK(value_at(out, v % 64, v / 64, 0) == expected);
  }
}

TEST_CASE("brightness: 16-bit frames of bit depth 12 have 4096 values", "[brightness]") {
  BrightnessParams p;
  p.strength = 0.0;
  p.stretch = BrightnessStretch::Percentile;
  p.low_percentile = 0.0;
  p.high_percentile = 100.0;
  // Two neighbouring values are two bins: 1000 and 1001 become 0 and 4095 (the maximum of 12
  // bits, not of 16).
  TestImage near(16, 8, PixelFormat::Gray16);
  fill_with(near, [](int x, int, int) { return x < 8 ? 1000 : 1001; });
  TestImage out = reference_of(p, shape_of(near, 12), near);
  CHECK(value_at(out, 0, 0, 0) == 0);
  CHECK(value_at(out, 15, 7, 0) == 4095);

  // A ramp 0..4095: percentiles 25..75 are ranks 1024 and 3072, values 1023 and 3071. A
  // sample above 4095 (the frame may hold one) counts as 4095.
  TestImage ramp(64, 64, PixelFormat::Gray16);
  fill_with(ramp, [](int x, int y, int) { return y * 64 + x; });
  set_value(ramp, 63, 63, 0, 60000);
  p.low_percentile = 25.0;
  p.high_percentile = 75.0;
  out = reference_of(p, shape_of(ramp, 12), ramp);
  CHECK(value_at(out, 1023 % 64, 1023 / 64, 0) == 0);
  CHECK(value_at(out, 3071 % 64, 3071 / 64, 0) == 4095);
  CHECK(value_at(out, 2047 % 64, 2047 / 64, 0) == std::floor(1024 * 4095.0 / 2048.0 + 0.5));
  CHECK(value_at(out, 63, 63, 0) == 4095);

  // The correction itself in 12 bits: a sample of 4095 or more is Y = 1, which stays 1.
  p = BrightnessParams{};
  p.sigma = 2.0;
  out = reference_of(p, shape_of(ramp, 12), ramp);
  CHECK(value_at(out, 63, 63, 0) == 4095);
}

TEST_CASE("brightness: colour keeps each pixel's channel ratios and its alpha", "[brightness]") {
  TestImage in(40, 30, PixelFormat::Rgba);
  std::mt19937 rng(9);
  fill_with(in, [&](int, int, int) { return 10 + rng() % 100; });  // dark: lifted, never clipped
  BrightnessParams p;
  p.sigma = 6.0;
  const TestImage out = reference_of(p, shape_of(in), in);
  int lifted = 0;
  for (int y = 0; y < in.height; ++y) {
    for (int x = 0; x < in.width; ++x) {
      const double r = value_at(in, x, y, 0), g = value_at(in, x, y, 1), b = value_at(in, x, y, 2);
      const double r2 = value_at(out, x, y, 0), g2 = value_at(out, x, y, 1),
                   b2 = value_at(out, x, y, 2);
      INFO("(" << x << "," << y << ") " << r << "," << g << "," << b << " -> " << r2 << "," << g2
               << "," << b2);
      REQUIRE(r2 < 255);
      // Each channel is c k, rounded: r2 g - g2 r is at most half a count times r + g.
      CHECK(std::abs(r2 * g - g2 * r) <= 0.5 * (r + g));
      CHECK(std::abs(b2 * g - g2 * b) <= 0.5 * (b + g));
      CHECK(value_at(out, x, y, 3) == value_at(in, x, y, 3));
      lifted += r2 + g2 + b2 > r + g + b;
    }
  }
  CHECK(lifted == in.width * in.height);

  // BGRA is RGBA with R and B swapped: the same pixels, swapped back.
  TestImage bgra(40, 30, PixelFormat::Bgra);
  fill_with(bgra, [&](int x, int y, int c) { return value_at(in, x, y, 2 - c); });
  const TestImage out_bgra = reference_of(p, shape_of(bgra), bgra);
  for (int y = 0; y < in.height; ++y) {
    for (int x = 0; x < in.width; ++x) {
      for (int c = 0; c < 3; ++c)
        REQUIRE(value_at(out_bgra, x, y, 2 - c) == value_at(out, x, y, c));
    }
  }
}

TEST_CASE("brightness: a black colour pixel stays black in mode local", "[brightness]") {
  // Y = 0 has no ratio to scale by: the pixel becomes the grey Yo, and in mode local 0^e = 0.
  TestImage in(8, 8, PixelFormat::Rgbx);
  fill_with(in, [](int x, int, int) { return x < 4 ? 0 : 120; });
  const TestImage out = reference_of(BrightnessParams{}, shape_of(in), in);
  for (int c = 0; c < 3; ++c) CHECK(value_at(out, 0, 0, c) == 0);
  CHECK(value_at(out, 7, 0, 0) > 120);
}

TEST_CASE("brightness: GRAY32F is taken as 0..1, clamped", "[brightness]") {
  TestImage in(16, 4, PixelFormat::Gray32F);
  fill_with(in, [](int x, int, int) { return x < 8 ? -0.5 : 1.5; });
  set_value(in, 0, 0, 0, 0.25);
  BrightnessParams p;
  p.strength = 0.0;
  const TestImage out = reference_of(p, shape_of(in), in);
  CHECK(value_at(out, 1, 1, 0) == 0.0);
  CHECK(value_at(out, 9, 1, 0) == 1.0);
  CHECK(value_at(out, 0, 0, 0) == 0.25);
  // A percentile stretch picks from the values themselves: 0 and 1 are the extremes.
  p.stretch = BrightnessStretch::Percentile;
  p.low_percentile = 0.0;
  p.high_percentile = 100.0;
  const TestImage stretched = reference_of(p, shape_of(in), in);
  CHECK(value_at(stretched, 0, 0, 0) == 0.25f);
}

TEST_CASE("brightness reference refuses what does not fit", "[brightness]") {
  TestImage in(8, 8, PixelFormat::Gray32F);
  BrightnessParams p;
  p.mode = BrightnessMode::Clahe;
  CHECK_THROWS_AS(reference_of(p, shape_of(in), in), Error);
  TestImage gray(8, 8, PixelFormat::Gray8);
  CHECK_THROWS_AS(reference_of(BrightnessParams{}, FrameShape{8, 9, PixelFormat::Gray8, 8}, gray),
                  Error);
}

TEST_CASE("brightness mode clahe: the equalised values, grey or colour alike", "[brightness]") {
  // alpha 1, no stretch: a GRAY8 frame comes out as clahe_reference() maps it; a colour frame
  // whose pixels are grey (R = G = B) comes out as that same map of its grey, in every channel.
  TestImage gray(53, 41, PixelFormat::Gray8);
  std::mt19937 rng(17);
  fill_with(gray, [&](int x, int y, int) { return (x * 3 + y) % 90 + rng() % 40; });
  BrightnessParams p;
  p.mode = BrightnessMode::Clahe;
  p.tiles_x = 4;
  p.tiles_y = 3;
  static ThreadPool pool(2);
  TestImage mapped(53, 41, PixelFormat::Gray8);
  clahe_reference(p, 8, gray.cview(), mapped.view(), pool);
  const TestImage out = reference_of(p, shape_of(gray), gray);
  INFO(out.first_difference(mapped));
  CHECK(out.same_pixels(mapped));
  CHECK_FALSE(out.same_pixels(gray));

  TestImage rgba(53, 41, PixelFormat::Rgba);
  fill_with(rgba, [&](int x, int y, int) { return value_at(gray, x, y, 0); });
  const TestImage colour = reference_of(p, shape_of(rgba), rgba);
  for (int y = 0; y < gray.height; ++y) {
    for (int x = 0; x < gray.width; ++x) {
      for (int c = 0; c < 3; ++c) REQUIRE(value_at(colour, x, y, c) == value_at(mapped, x, y, 0));
      REQUIRE(value_at(colour, x, y, 3) == value_at(rgba, x, y, 3));
    }
  }

  // 12 bits: the map has 4096 values, and the output stays within them.
  TestImage gray12(53, 41, PixelFormat::Gray16);
  fill_with(gray12, [&](int x, int y, int) { return (x * 37 + y * 11) % 1500 + rng() % 300; });
  TestImage mapped12(53, 41, PixelFormat::Gray16);
  clahe_reference(p, 12, gray12.cview(), mapped12.view(), pool);
  CHECK(reference_of(p, shape_of(gray12, 12), gray12).same_pixels(mapped12));
}
