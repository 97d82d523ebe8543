// SPDX-License-Identifier: LGPL-2.1-or-later
// The CUDA kernels' per-pixel arithmetic (src/cuda/brightness/brightness_pixel.hpp), run on
// the host: the luminance bit for bit the reference's, and whole frames through it, with B
// the exact blur of that luminance, within one count of brightness_reference(). (On the
// device the exp2 and log2 units and the colour ratio's reciprocal differ from the host's
// std::exp2, std::log2 and division, within the bounds local_power() and colour_out() state;
// tests/brightness/test_brightness_cuda.cpp holds the kernels themselves against the
// reference.)
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "brightness_frames.hpp"
#include "cuda/brightness/brightness_pixel.hpp"
#include "pipeline/brightness/clahe.hpp"
#include "pipeline/gauss/reference.hpp"

using namespace starsift;
using namespace starsift::test;
namespace px = starsift::cuda::brightness_pixel;

namespace {

bool is_bgr(PixelFormat format) {
  return format == PixelFormat::Bgra || format == PixelFormat::Bgrx;
}

float luminance_of(const TestImage& in, int x, int y, float max) {
  if (format_info(in.format).color_channels == 3) {
    const bool bgr = is_bgr(in.format);
    return px::colour_luminance(static_cast<std::uint32_t>(value_at(in, x, y, bgr ? 2 : 0)),
                                static_cast<std::uint32_t>(value_at(in, x, y, 1)),
                                static_cast<std::uint32_t>(value_at(in, x, y, bgr ? 0 : 2)));
  }
  return px::grey_luminance(static_cast<float>(value_at(in, x, y, 0)), max);
}

// The frame through brightness_pixel's steps, B the exact blur (gauss_reference) of its Y.
TestImage emulate(const BrightnessParams& p, const FrameShape& shape, const TestImage& in) {
  const px::Correction k = px::correction_of(p, shape);
  TestImage luma(in.width, in.height, PixelFormat::Gray32F);
  fill_with(luma, [&](int x, int y, int) { return luminance_of(in, x, y, k.max); });
  TestImage blurred(in.width, in.height, PixelFormat::Gray32F);
  GaussParams g;
  g.sigma_x = g.sigma_y = p.sigma;
  g.border = BorderMode::Reflect101;
  gauss_reference(g, luma.cview(), blurred.view(), pool());
  TestImage out(in.width, in.height, in.format);
  const FormatInfo& info = format_info(in.format);
  for (int y = 0; y < in.height; ++y) {
    for (int x = 0; x < in.width; ++x) {
      const auto lum = static_cast<float>(value_at(luma, x, y, 0));
      const float v = px::local_value(lum, static_cast<float>(value_at(blurred, x, y, 0)), k);
      if (info.color_channels == 3) {
        std::uint32_t pixel;
        std::memcpy(&pixel, in.cview().row(y) + 4 * x, 4);
        const std::uint32_t o = px::colour_out(pixel, lum, v, k);
        std::memcpy(out.view().row(y) + 4 * x, &o, 4);
      } else {
        set_value(out, x, y, 0, px::grey_out(v, k.max, info.is_float));
      }
    }
  }
  return out;
}

// Mode clahe through brightness_pixel's steps: the frame (or colour's luma_byte plane) mapped
// by clahe_reference(), C its value over the plane's maximum.
TestImage emulate_clahe(const BrightnessParams& p, const FrameShape& shape, const TestImage& in) {
  const px::Correction k = px::correction_of(p, shape);
  const FormatInfo& info = format_info(in.format);
  const bool colour = info.color_channels == 3;
  const PixelFormat plane_format = colour ? PixelFormat::Gray8 : in.format;
  TestImage plane(in.width, in.height, plane_format);
  fill_with(plane, [&](int x, int y, int) {
    return colour ? px::luma_byte(luminance_of(in, x, y, k.max)) : value_at(in, x, y, 0);
  });
  TestImage mapped(in.width, in.height, plane_format);
  clahe_reference(p, colour ? 8 : shape.bit_depth, plane.cview(), mapped.view(), pool());
  const auto plane_max = static_cast<float>(colour ? 255.0 : brightness_sample_max(shape));
  TestImage out(in.width, in.height, in.format);
  for (int y = 0; y < in.height; ++y) {
    for (int x = 0; x < in.width; ++x) {
      const float lum = luminance_of(in, x, y, k.max);
      const float v =
          px::clahe_value(lum, static_cast<float>(value_at(mapped, x, y, 0)), plane_max, k);
      if (colour) {
        std::uint32_t pixel;
        std::memcpy(&pixel, in.cview().row(y) + 4 * x, 4);
        const std::uint32_t o = px::colour_out(pixel, lum, v, k);
        std::memcpy(out.view().row(y) + 4 * x, &o, 4);
      } else {
        set_value(out, x, y, 0, px::grey_out(v, k.max, false));
      }
    }
  }
  return out;
}

struct Difference {
  double worst = 0.0;
  long differing = 0;
  long samples = 0;
};

Difference compare(const TestImage& a, const TestImage& b) {
  const FormatInfo& info = format_info(a.format);
  Difference d;
  for (int y = 0; y < a.height; ++y)
    for (int x = 0; x < a.width; ++x)
      for (int c = 0; c < info.channels; ++c) {
        const double diff = std::abs(value_at(a, x, y, c) - value_at(b, x, y, c));
        if (c >= info.color_channels) {
          REQUIRE(diff == 0.0);  // alpha and padding: copied
          continue;
        }
        d.worst = std::max(d.worst, diff);
        d.differing += diff != 0.0;
        ++d.samples;
      }
  return d;
}

}  // namespace

TEST_CASE("the kernels' luminance is the reference's, bit for bit", "[brightness]") {
  // Every value of every GRAY16 bit depth (and so GRAY8's): float(double(v / max)) as a float
  // division, values above the maximum as the maximum.
  for (int bits = 1; bits <= 16; ++bits) {
    const double max = (1 << bits) - 1;
    long wrong = 0;
    for (int v = 0; v <= 65535; ++v) {
      const auto want = static_cast<float>(std::min<double>(v, max) / max);
      wrong += px::grey_luminance(static_cast<float>(v), static_cast<float>(max)) != want;
    }
    INFO("bit depth " << bits);
    CHECK(wrong == 0);
  }
  // GRAY32F: clamped to 0..1, NaN as 0.
  CHECK(px::grey_luminance(0.25f, 1.0f) == 0.25f);
  CHECK(px::grey_luminance(3.0f, 1.0f) == 1.0f);
  CHECK(px::grey_luminance(-2.0f, 1.0f) == 0.0f);
  CHECK(px::grey_luminance(std::nanf(""), 1.0f) == 0.0f);
  // Colour: every one of the 2^24 colours (the kernels multiply by 1 / 255 where the
  // reference divides).
  long wrong = 0;
  for (std::uint32_t r = 0; r < 256; ++r)
    for (std::uint32_t g = 0; g < 256; ++g)
      for (std::uint32_t b = 0; b < 256; ++b) {
        const double sum = kLumaR * r + kLumaG * g + kLumaB * b;
        wrong += px::colour_luminance(r, g, b) != static_cast<float>(sum / 255.0);
      }
  CHECK(wrong == 0);
  // A packed pixel in either order, byte 3 ignored.
  long misread = 0;
  for (std::uint32_t r = 0; r < 256; r += 5)
    for (std::uint32_t g = 0; g < 256; g += 3)
      for (std::uint32_t b = 0; b < 256; b += 7) {
        const float want = px::colour_luminance(r, g, b);
        const std::uint32_t alpha = (r * 31 + b) & 0xffu;
        misread += px::pixel_luminance<false>(r | g << 8 | b << 16 | alpha << 24) != want;
        misread += px::pixel_luminance<true>(b | g << 8 | r << 16 | alpha << 24) != want;
      }
  CHECK(misread == 0);
}

TEST_CASE("the kernels' arithmetic within one count of the reference", "[brightness]") {
  struct Case {
    PixelFormat format;
    int bits;
  };
  const Case cases[] = {{PixelFormat::Gray8, 8},   {PixelFormat::Gray16, 12},
                        {PixelFormat::Gray16, 16}, {PixelFormat::Gray32F, 32},
                        {PixelFormat::Rgba, 8},    {PixelFormat::Bgrx, 8}};
  std::uint32_t seed = 40;
  for (const Case& c : cases) {
    TestImage in(97, 61, c.format);
    const FrameShape shape = shape_of(in, c.bits);
    fill_random(in, brightness_sample_max(shape), ++seed);
    for (const auto& [sigma, strength, alpha] :
         {std::tuple{3.0, 1.0, 1.0}, std::tuple{12.0, 4.0, 1.0}, std::tuple{6.0, 2.0, 0.5},
          std::tuple{5.0, 0.0, 1.0}, std::tuple{5.0, 1.0, 0.0}}) {
      BrightnessParams p;
      p.sigma = sigma;
      p.strength = strength;
      p.alpha = alpha;
      const Difference d = compare(emulate(p, shape, in), reference_of(p, shape, in));
      INFO(to_string(c.format) << "/" << c.bits << " sigma " << sigma << " strength " << strength
                               << " alpha " << alpha << ": worst " << d.worst << ", " << d.differing
                               << "/" << d.samples << " differ");
      if (format_info(c.format).is_float) {
        CHECK(d.worst <= 1e-6);
      } else if (strength == 0.0 || alpha == 0.0) {
        CHECK(d.worst == 0.0);  // v is the reference's v: the same samples
      } else {
        CHECK(d.worst <= 1.0);
        CHECK(d.differing <= d.samples / 100 + 3);
      }
    }
  }
}

TEST_CASE("the kernels' arithmetic of mode clahe within one count of the reference",
          "[brightness]") {
  struct Case {
    PixelFormat format;
    int bits;
  };
  const Case cases[] = {{PixelFormat::Gray8, 8},
                        {PixelFormat::Gray16, 12},
                        {PixelFormat::Gray16, 16},
                        {PixelFormat::Rgba, 8},
                        {PixelFormat::Bgrx, 8}};
  std::uint32_t seed = 60;
  for (const Case& c : cases) {
    TestImage in(83, 57, c.format);
    const FrameShape shape = shape_of(in, c.bits);
    fill_random(in, brightness_sample_max(shape), ++seed);
    for (const double alpha : {1.0, 0.6}) {
      BrightnessParams p;
      p.mode = BrightnessMode::Clahe;
      p.tiles_x = 4;
      p.tiles_y = 3;
      p.alpha = alpha;
      const Difference d = compare(emulate_clahe(p, shape, in), reference_of(p, shape, in));
      INFO(to_string(c.format) << "/" << c.bits << " alpha " << alpha << ": worst " << d.worst
                               << ", " << d.differing << "/" << d.samples << " differ");
      if (alpha == 1.0 && format_info(c.format).color_channels == 1) {
        CHECK(d.worst == 0.0);  // v rounds to the mapped value: the reference's samples
      } else {
        CHECK(d.worst <= 1.0);
        CHECK(d.differing <= d.samples / 100 + 3);
      }
    }
  }
}
