// SPDX-License-Identifier: LGPL-2.1-or-later
// What the synthetic-sky tests share: small parameter sets, frames as images, and the
// measurements a person would make on a frame (mean, variance, centroid).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "pipeline/sky/sky_generator.hpp"
#include "pipeline/sky/sky_params.hpp"
#include "support/test_image.hpp"

namespace starsift::test {

// A small frame with nothing in it but a flat sky and the sensor's noise.
inline SkyParams flat_sky(int width = 256, int height = 256) {
  SkyParams p;
  p.width = width;
  p.height = height;
  p.star_density = 0.0;
  p.movers = 0;
  p.hot_pixel_fraction = 0.0;
  p.sky_gradient = 0.0;
  p.jitter = 0.0;
  return p;
}

// Frame `index` rendered into a fresh image of `format` (rows padded by `pad` bytes).
inline TestImage render_frame(SkyGenerator& sky, std::uint64_t index, PixelFormat format,
                              SkyTruth& truth, int pad = 0) {
  TestImage image(sky.params().width, sky.params().height, format, pad);
  sky.render(index, image.view(), truth);
  return image;
}

// Expected electrons of `components` in frame `index`.
struct FloatFrame {
  int width = 0;
  int height = 0;
  std::vector<float> e;

  float at(int x, int y) const { return e[static_cast<std::size_t>(y) * width + x]; }
};

inline FloatFrame expected_frame(SkyGenerator& sky, std::uint64_t index, unsigned components,
                                 SkyTruth& truth) {
  FloatFrame f{sky.params().width, sky.params().height, {}};
  f.e.resize(static_cast<std::size_t>(f.width) * f.height);
  ImageView view{reinterpret_cast<std::byte*>(f.e.data()), f.width, f.height,
                 static_cast<std::ptrdiff_t>(f.width * sizeof(float)), PixelFormat::Gray32F};
  sky.render_expected(index, view, truth, components);
  return f;
}

// A sample as a double, whatever the format.
inline double sample(const TestImage& image, int x, int y) {
  const std::byte* row = image.bytes.data() + y * image.stride;
  switch (image.format) {
    case PixelFormat::Gray8:
      return std::to_integer<int>(row[x]);
    case PixelFormat::Gray16: {
      std::uint16_t v;
      std::memcpy(&v, row + 2 * x, 2);
      return v;
    }
    default: {
      float v;
      std::memcpy(&v, row + 4 * x, 4);
      return v;
    }
  }
}

struct Moments {
  double mean = 0.0;
  double variance = 0.0;
};

inline Moments moments(const TestImage& image) {
  double sum = 0.0, sum2 = 0.0;
  const double n = static_cast<double>(image.width) * image.height;
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x) sum += sample(image, x, y);
  const double mean = sum / n;
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x)
      sum2 += (sample(image, x, y) - mean) * (sample(image, x, y) - mean);
  return {mean, sum2 / (n - 1.0)};
}

struct Centroid {
  double x = 0.0;
  double y = 0.0;
  double sum = 0.0;
};

// First moments of value(x, y) - background inside the square of half-side `radius` around
// (cx, cy).
template <class Value>
Centroid centroid(int width, int height, double cx, double cy, int radius, Value value,
                  double background = 0.0) {
  Centroid c;
  const int x0 = std::max(0, static_cast<int>(std::lround(cx)) - radius);
  const int x1 = std::min(width - 1, static_cast<int>(std::lround(cx)) + radius);
  const int y0 = std::max(0, static_cast<int>(std::lround(cy)) - radius);
  const int y1 = std::min(height - 1, static_cast<int>(std::lround(cy)) + radius);
  for (int y = y0; y <= y1; ++y)
    for (int x = x0; x <= x1; ++x) {
      const double v = value(x, y) - background;
      c.x += v * x;
      c.y += v * y;
      c.sum += v;
    }
  c.x /= c.sum;
  c.y /= c.sum;
  return c;
}

}  // namespace starsift::test
