// SPDX-License-Identifier: LGPL-2.1-or-later
// Small synthetic star fields for whitening tests: a sky level, stars with a Gaussian PSF
// integrated over each pixel (so a sub-pixel displacement is exact), Gaussian noise of known
// sigma, and point-like movers. Deterministic for a seed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"
#include "support/test_image.hpp"

namespace starsift::test {

struct Star {
  double x = 0.0, y = 0.0;  // centre, pixel-centre coordinates (0, 0) = first pixel's centre
  double peak = 0.0;        // amplitude of the continuous PSF at its centre (ADU)
};

// A float frame, row-major, no padding.
struct Plane {
  int width = 0, height = 0;
  std::vector<float> pixels;

  Plane() = default;
  Plane(int w, int h, float value = 0.0f)
      : width(w), height(h), pixels(static_cast<std::size_t>(w) * h, value) {}
  float& at(int x, int y) { return pixels[static_cast<std::size_t>(y) * width + x]; }
  float at(int x, int y) const { return pixels[static_cast<std::size_t>(y) * width + x]; }
  ConstImageView view() const {
    return {reinterpret_cast<const std::byte*>(pixels.data()), width, height,
            static_cast<std::ptrdiff_t>(width * sizeof(float)), PixelFormat::Gray32F};
  }
};

// Adds a Gaussian PSF of width `sigma` integrated over each pixel, within 6 sigma.
inline void add_gaussian(Plane& plane, double cx, double cy, double peak, double sigma) {
  const double flux = peak * 2.0 * M_PI * sigma * sigma;
  const double s = sigma * std::sqrt(2.0);
  auto cell = [&](double lo, double hi) { return 0.5 * (std::erf(hi / s) - std::erf(lo / s)); };
  const int r = static_cast<int>(std::ceil(6.0 * sigma)) + 1;
  const int x0 = std::max(0, static_cast<int>(std::floor(cx)) - r);
  const int x1 = std::min(plane.width - 1, static_cast<int>(std::floor(cx)) + r);
  const int y0 = std::max(0, static_cast<int>(std::floor(cy)) - r);
  const int y1 = std::min(plane.height - 1, static_cast<int>(std::floor(cy)) + r);
  for (int y = y0; y <= y1; ++y) {
    const double wy = cell(y - 0.5 - cy, y + 0.5 - cy);
    for (int x = x0; x <= x1; ++x) {
      plane.at(x, y) += static_cast<float>(flux * wy * cell(x - 0.5 - cx, x + 0.5 - cx));
    }
  }
}

struct StarScene {
  int width = 0, height = 0;
  double sky = 1000.0;
  double psf_sigma = 1.2;
  std::vector<Star> stars;

  // The noiseless field with every star displaced by (dx, dy).
  Plane render(double dx = 0.0, double dy = 0.0) const {
    Plane plane(width, height, static_cast<float>(sky));
    for (const Star& star : stars)
      add_gaussian(plane, star.x + dx, star.y + dy, star.peak, psf_sigma);
    return plane;
  }
};

// `count` stars at random places (a margin of 4 px), peaks spread log-uniformly over
// [min_peak, max_peak].
inline StarScene make_star_scene(int width, int height, int count, std::uint32_t seed,
                                 double min_peak = 50.0, double max_peak = 5000.0) {
  StarScene scene;
  scene.width = width;
  scene.height = height;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> ux(4.0, width - 5.0), uy(4.0, height - 5.0);
  std::uniform_real_distribution<double> ulog(std::log(min_peak), std::log(max_peak));
  for (int i = 0; i < count; ++i) scene.stars.push_back({ux(rng), uy(rng), std::exp(ulog(rng))});
  return scene;
}

inline void add_noise(Plane& plane, double sigma, std::mt19937& rng) {
  std::normal_distribution<double> noise(0.0, sigma);
  for (float& v : plane.pixels) v += static_cast<float>(noise(rng));
}

// The plane in `format`: integer formats rounded and clamped to 0..2^bit_depth - 1.
inline TestImage to_image(const Plane& plane, PixelFormat format, int bit_depth = 16) {
  TestImage img(plane.width, plane.height, format);
  const double max = format == PixelFormat::Gray8 ? 255.0 : std::ldexp(1.0, bit_depth) - 1.0;
  for (int y = 0; y < plane.height; ++y)
    for (int x = 0; x < plane.width; ++x) {
      const float v = plane.at(x, y);
      std::byte* p = img.sample_ptr(x, y, 0);
      if (format == PixelFormat::Gray32F) {
        std::memcpy(p, &v, sizeof v);
      } else {
        const double c = std::clamp(std::nearbyint(static_cast<double>(v)), 0.0, max);
        if (format == PixelFormat::Gray8) {
          *p = static_cast<std::byte>(static_cast<unsigned>(c));
        } else {
          const auto s = static_cast<std::uint16_t>(c);
          std::memcpy(p, &s, sizeof s);
        }
      }
    }
  return img;
}

// A grey image's sample values as a plane (integer samples as they are).
inline Plane to_plane(const TestImage& img) {
  Plane plane(img.width, img.height);
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) {
      float v = static_cast<float>(img.key(x, y, 0));
      if (img.format == PixelFormat::Gray32F) {
        std::memcpy(&v, const_cast<TestImage&>(img).sample_ptr(x, y, 0), sizeof v);
      }
      plane.at(x, y) = v;
    }
  return plane;
}

}  // namespace starsift::test
