// SPDX-License-Identifier: LGPL-2.1-or-later
// CLAHE: the reference against a direct computation written here from OpenCV's definition
// and against values worked out by hand; ClaheCpu against the reference, bit for bit, on
// every shape and bit depth that takes a different path through it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "pipeline/brightness/clahe.hpp"
#include "pipeline/error.hpp"
#include "support/test_image.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

BrightnessParams clahe_params(int tiles_x, int tiles_y, double clip) {
  BrightnessParams p;
  p.mode = BrightnessMode::Clahe;
  p.tiles_x = tiles_x;
  p.tiles_y = tiles_y;
  p.clip_limit = clip;
  return p;
}

// Values crowded around `level` (so histograms have tall bins that the clip cuts), with a
// few at 0 and at `top`.
void fill_noise(TestImage& img, int level, int spread, int top, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(level, spread);
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) {
      const unsigned pick = rng() % 50;
      const long v = pick == 0 ? 0 : pick == 1 ? top : std::lround(noise(rng));
      img.set_key(x, y, 0, static_cast<std::uint32_t>(std::clamp<long>(v, 0, top)));
    }
}

// ---- A direct computation, pixel by pixel, from the definition --------------------------

int reflect(int i, int n) {  // reflect-101, folding as often as needed
  if (n == 1) return 0;
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

struct Direct {
  const TestImage& img;
  int bins, tiles_x, tiles_y;
  double clip_limit;
  int tile_w = 0, tile_h = 0;

  Direct(const TestImage& i, int bits, int tx, int ty, double clip)
      : img(i), bins(1 << bits), tiles_x(tx), tiles_y(ty), clip_limit(clip) {
    // OpenCV pads right and bottom by tiles - size % tiles on both axes unless both divide.
    const bool divides = img.width % tx == 0 && img.height % ty == 0;
    tile_w = divides ? img.width / tx : (img.width + tx - img.width % tx) / tx;
    tile_h = divides ? img.height / ty : (img.height + ty - img.height % ty) / ty;
  }

  int value(int x, int y) const {
    return std::min<int>(
        static_cast<int>(img.key(reflect(x, img.width), reflect(y, img.height), 0)), bins - 1);
  }

  // Tile (tx, ty)'s mapped value of v, computed from nothing.
  int map(int tx, int ty, int v) const {
    std::vector<long> hist(static_cast<std::size_t>(bins), 0);
    for (int y = 0; y < tile_h; ++y)
      for (int x = 0; x < tile_w; ++x) ++hist[value(tx * tile_w + x, ty * tile_h + y)];
    const long area = static_cast<long>(tile_w) * tile_h;
    if (clip_limit > 0) {
      const long limit = std::max(static_cast<long>(clip_limit * area / bins), 1L);
      long excess = 0;
      for (long& h : hist) excess += std::max(h - limit, 0L), h = std::min(h, limit);
      for (long& h : hist) h += excess / bins;
      const long left = excess % bins;
      for (long k = 0; k < left; ++k) ++hist[k * std::max(bins / left, 1L)];
    }
    long cdf = 0;
    for (int i = 0; i <= v; ++i) cdf += hist[i];
    const float scale = static_cast<float>(bins - 1) / static_cast<float>(area);
    return std::clamp(static_cast<int>(std::nearbyint(static_cast<float>(cdf) * scale)), 0,
                      bins - 1);
  }

  int pixel(int x, int y) const {
    const float fx = static_cast<float>(x) * (1.0f / static_cast<float>(tile_w)) - 0.5f;
    const float fy = static_cast<float>(y) * (1.0f / static_cast<float>(tile_h)) - 0.5f;
    const int x1 = static_cast<int>(std::floor(fx)), y1 = static_cast<int>(std::floor(fy));
    const float ax = fx - static_cast<float>(x1), ay = fy - static_cast<float>(y1);
    const int left = std::max(x1, 0), right = std::min(x1 + 1, tiles_x - 1);
    const int up = std::max(y1, 0), down = std::min(y1 + 1, tiles_y - 1);
    const int v = value(x, y);
    const float top_row = static_cast<float>(map(left, up, v)) * (1.0f - ax) +
                          static_cast<float>(map(right, up, v)) * ax;
    const float bottom_row = static_cast<float>(map(left, down, v)) * (1.0f - ax) +
                             static_cast<float>(map(right, down, v)) * ax;
    const float r = top_row * (1.0f - ay) + bottom_row * ay;
    return std::clamp(static_cast<int>(std::nearbyint(r)), 0, bins - 1);
  }
};

TestImage reference(const TestImage& in, int bits, const BrightnessParams& p, ThreadPool& pool) {
  TestImage out(in.width, in.height, in.format, 4);
  clahe_reference(p, bits, in.cview(), out.view(), pool);
  return out;
}

}  // namespace

TEST_CASE("CLAHE reference equals the direct computation of each pixel", "[clahe]") {
  ThreadPool pool(2);
  struct Case {
    int w, h;
    PixelFormat format;
    int bits, tiles_x, tiles_y;
    double clip;
  };
  // 2x2 tiles dividing and not; a grid wider than tall; bit depths 8, 12, 16; no clip, the
  // usual clip, a clip that leaves a residual on every tile.
  const Case cases[] = {
      {16, 12, PixelFormat::Gray8, 8, 2, 2, 0.0},   {16, 12, PixelFormat::Gray8, 8, 2, 2, 2.0},
      {17, 13, PixelFormat::Gray8, 8, 2, 2, 3.0},   {16, 13, PixelFormat::Gray8, 8, 2, 2, 40.0},
      {23, 9, PixelFormat::Gray8, 8, 3, 2, 1.0},    {20, 20, PixelFormat::Gray16, 12, 2, 2, 2.0},
      {21, 19, PixelFormat::Gray16, 12, 2, 2, 0.0}, {12, 10, PixelFormat::Gray16, 16, 2, 2, 2.0},
  };
  std::uint32_t seed = 1;
  for (const Case& c : cases) {
    TestImage in(c.w, c.h, c.format, 2);
    const int top = (1 << c.bits) - 1;
    fill_noise(in, top / 3, std::max(2, top / 40), top, ++seed);
    const TestImage out = reference(in, c.bits, clahe_params(c.tiles_x, c.tiles_y, c.clip), pool);
    const Direct direct(in, c.bits, c.tiles_x, c.tiles_y, c.clip);
    for (int y = 0; y < c.h; ++y)
      for (int x = 0; x < c.w; ++x) {
        INFO(c.w << "x" << c.h << " " << to_string(c.format) << " bits " << c.bits << " tiles "
                 << c.tiles_x << "x" << c.tiles_y << " clip " << c.clip << " at " << x << "," << y);
        REQUIRE(static_cast<int>(out.key(x, y, 0)) == direct.pixel(x, y));
      }
  }
}

TEST_CASE("CLAHE of a constant frame: values worked out by hand", "[clahe]") {
  ThreadPool pool(2);
  TestImage in(64, 64, PixelFormat::Gray8);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) in.set_key(x, y, 0, 100);
  // No clip: every count at 100, so 100 maps to the top.
  TestImage out = reference(in, 8, clahe_params(1, 1, 0.0), pool);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) REQUIRE(out.key(x, y, 0) == 255);
  // Clip 2: limit 2 * 4096 / 256 = 32; 4064 clipped = 15 per bin + 224 left over, one each to
  // bins 0..223. Counts up to 100: 100 * 16 + 32 + 16 = 1648; 1648 * 255 / 4096 = 102.6.
  out = reference(in, 8, clahe_params(1, 1, 2.0), pool);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) REQUIRE(out.key(x, y, 0) == 103);
  // 4x4 tiles: every tile alike, so every blend is of equal values. Tile area 256, limit 2;
  // 254 clipped: 0 per bin, 254 left over, one each to bins 0..253: counts up to 100 are
  // 100 * 1 + 2 + 1 = 103, and 103 * 255 / 256 = 102.6.
  out = reference(in, 8, clahe_params(4, 4, 2.0), pool);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) REQUIRE(out.key(x, y, 0) == 103);
  // Clip 40 on 4x4 tiles: limit 40, 216 clipped, step 256 / 216 = 1 again: 100 + 40 + 1 = 141,
  // 141 * 255 / 256 = 140.4.
  out = reference(in, 8, clahe_params(4, 4, 40.0), pool);
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) REQUIRE(out.key(x, y, 0) == 140);
}

TEST_CASE("CLAHE of a ramp without clipping is the ramp's own equalisation", "[clahe]") {
  ThreadPool pool(2);
  // Every value 0..255 once per row: a flat histogram of 256 per bin, so value v maps to
  // round(256 (v + 1) * 255 / 65536) = round((v + 1) * 255 / 256).
  TestImage in(256, 256, PixelFormat::Gray8);
  for (int y = 0; y < 256; ++y)
    for (int x = 0; x < 256; ++x) in.set_key(x, y, 0, static_cast<std::uint32_t>(x));
  const TestImage out = reference(in, 8, clahe_params(1, 1, 0.0), pool);
  for (int y = 0; y < 256; y += 17)
    for (int x = 0; x < 256; ++x)
      REQUIRE(out.key(x, y, 0) ==
              static_cast<std::uint32_t>(std::nearbyint((x + 1) * 255.0 / 256)));
}

TEST_CASE("CLAHE holds values above the bit depth to the top bin", "[clahe]") {
  ThreadPool pool(2);
  TestImage in(40, 30, PixelFormat::Gray16), held(40, 30, PixelFormat::Gray16);
  std::mt19937 rng(9);
  for (int y = 0; y < 30; ++y)
    for (int x = 0; x < 40; ++x) {
      const std::uint32_t v = rng() % 8 == 0 ? 1023 + rng() % 64513 : 900 + rng() % 124;
      in.set_key(x, y, 0, v);
      held.set_key(x, y, 0, std::min<std::uint32_t>(v, 1023));
    }
  for (double clip : {0.0, 2.0}) {
    const BrightnessParams p = clahe_params(3, 2, clip);
    const TestImage out = reference(in, 10, p, pool);
    REQUIRE(out.same_pixels(reference(held, 10, p, pool)));
    ClaheCpu fast;
    TestImage got(40, 30, PixelFormat::Gray16);
    fast.run(p, 10, in.cview(), got.view(), pool);
    REQUIRE(got.same_pixels(out));
    for (int y = 0; y < 30; ++y)
      for (int x = 0; x < 40; ++x) REQUIRE(out.key(x, y, 0) <= 1023);
  }
}

TEST_CASE("ClaheCpu equals the reference bit for bit", "[clahe][cpu]") {
  ThreadPool pool(3);
  ClaheCpu fast;  // one object for every case: buffers reused across sizes and depths
  struct Depth {
    PixelFormat format;
    int bits;
  };
  const Depth depths[] = {{PixelFormat::Gray8, 8},
                          {PixelFormat::Gray16, 16},
                          {PixelFormat::Gray16, 12},
                          {PixelFormat::Gray16, 10}};
  // Dividing the grid, not dividing on one axis or both, odd, smaller than the grid, 1x1.
  const int shapes[][2] = {{64, 64}, {67, 64}, {64, 45}, {97, 83}, {5, 3}, {1, 1}, {1, 17}};
  const int grids[][2] = {{1, 1}, {2, 2}, {8, 8}, {3, 7}, {64, 64}};
  std::uint32_t seed = 50;
  int cases = 0;
  for (const Depth& d : depths)
    for (const auto& s : shapes)
      for (const auto& g : grids)
        for (double clip : {0.0, 1.0, 2.0, 40.0, 1e12}) {
          // To bound the time, at 16 bits (maps of 65536 bins): grids up to 8x8, and the clip
          // limits 1 and 1e12 only at the other depths; at 12 bits one 64x64 grid.
          if (d.bits == 16 && (g[0] * g[1] > 64 || clip == 1.0 || clip == 1e12)) continue;
          if (d.bits == 12 && g[0] * g[1] > 64 && (clip != 2.0 || s[0] != 97)) continue;
          TestImage in(s[0], s[1], d.format, 6);
          const int top = (1 << d.bits) - 1;
          // Crowded values (tall bins), and at 12 and 10 bits samples above the depth too.
          fill_noise(in, top / 2, std::max(2, top / 30),
                     d.format == PixelFormat::Gray8 ? 255 : 65535, ++seed);
          const BrightnessParams p = clahe_params(g[0], g[1], clip);
          const TestImage expected = reference(in, d.bits, p, pool);
          TestImage got(s[0], s[1], d.format, 10);
          fast.run(p, d.bits, in.cview(), got.view(), pool);
          INFO(s[0] << "x" << s[1] << " " << to_string(d.format) << " bits " << d.bits << " tiles "
                    << g[0] << "x" << g[1] << " clip " << clip << " first diff "
                    << got.first_difference(expected));
          REQUIRE(got.same_pixels(expected));
          bool padding_untouched = true;  // the row padding is never written
          for (int y = 0; y < got.height; ++y)
            for (std::ptrdiff_t b = got.width * bytes_per_pixel(got.format); b < got.stride; ++b)
              padding_untouched &=
                  got.bytes[static_cast<std::size_t>(y * got.stride + b)] == std::byte{0xA5};
          REQUIRE(padding_untouched);
          ++cases;
        }
  REQUIRE(cases > 400);
}

TEST_CASE("ClaheCpu on constant frames, ramps and a frame of 0 and top", "[clahe][cpu]") {
  ClaheCpu fast;
  for (unsigned threads : {1u, 2u, 5u}) {
    ThreadPool pool(threads);
    for (PixelFormat format : {PixelFormat::Gray8, PixelFormat::Gray16}) {
      const int bits = format == PixelFormat::Gray8 ? 8 : 12;
      const int top = (1 << bits) - 1;
      for (int kind = 0; kind < 3; ++kind) {
        TestImage in(150, 101, format);
        for (int y = 0; y < in.height; ++y)
          for (int x = 0; x < in.width; ++x) {
            const int v = kind == 0   ? top / 3
                          : kind == 1 ? (x * 7 + y * 3) % (top + 1)
                                      : ((x / 5 + y / 3) % 2) * top;
            in.set_key(x, y, 0, static_cast<std::uint32_t>(v));
          }
        for (double clip : {0.0, 2.0}) {
          const BrightnessParams p = clahe_params(8, 8, clip);
          const TestImage expected = reference(in, bits, p, pool);
          TestImage got(in.width, in.height, format);
          fast.run(p, bits, in.cview(), got.view(), pool);
          INFO(to_string(format) << " kind " << kind << " clip " << clip << " threads " << threads
                                 << " first diff " << got.first_difference(expected));
          REQUIRE(got.same_pixels(expected));
        }
      }
    }
  }
}

TEST_CASE("CLAHE refuses what it does not define", "[clahe]") {
  ThreadPool pool(1);
  ClaheCpu fast;
  TestImage gray16(8, 8, PixelFormat::Gray16), gray8(8, 8, PixelFormat::Gray8),
      small(4, 8, PixelFormat::Gray16), floats(8, 8, PixelFormat::Gray32F);
  const BrightnessParams p = clahe_params(2, 2, 2.0);
  REQUIRE_THROWS_AS(clahe_reference(p, 17, gray16.cview(), gray16.view(), pool), Error);
  REQUIRE_THROWS_AS(clahe_reference(p, 0, gray16.cview(), gray16.view(), pool), Error);
  REQUIRE_THROWS_AS(clahe_reference(p, 12, gray8.cview(), gray8.view(), pool), Error);
  REQUIRE_THROWS_AS(clahe_reference(p, 32, floats.cview(), floats.view(), pool), Error);
  REQUIRE_THROWS_AS(fast.run(p, 16, gray16.cview(), small.view(), pool), Error);
  REQUIRE_THROWS_AS(fast.run(p, 16, gray16.cview(), gray8.view(), pool), Error);
  REQUIRE_THROWS_AS(fast.run(clahe_params(65, 1, 2.0), 16, gray16.cview(), gray16.view(), pool),
                    Error);
  REQUIRE_THROWS_AS(fast.run(clahe_params(1, 0, 2.0), 16, gray16.cview(), gray16.view(), pool),
                    Error);
  REQUIRE_THROWS_AS(fast.run(clahe_params(2, 2, -1.0), 16, gray16.cview(), gray16.view(), pool),
                    Error);
}
