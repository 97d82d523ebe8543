// SPDX-License-Identifier: LGPL-2.1-or-later
// Frames of Gaussian blobs on a flat level plus white noise, for the detection tests: as the
// GRAY32F significance images of the CPU tests, or through any store (the element tests' GRAY16
// stars).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "support/test_image.hpp"

namespace starsift::test {

struct Blob {
  double x, y, sigma, peak;
};

// Calls put(x, y, v) for each pixel in raster order, v = floor + a normal variate of sd `noise`
// (none when 0; `seed`'s stream in raster order) + the blobs' Gaussians.
template <class Put>
void draw_blobs(int w, int h, const std::vector<Blob>& blobs, double noise, std::uint32_t seed,
                double floor, Put&& put) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0.0, noise);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      double v = floor + (noise > 0 ? n(rng) : 0.0);
      for (const Blob& b : blobs) {
        const double r2 = (x - b.x) * (x - b.x) + (y - b.y) * (y - b.y);
        v += b.peak * std::exp(-r2 / (2 * b.sigma * b.sigma));
      }
      put(x, y, v);
    }
  }
}

// The blobs as a GRAY32F frame.
inline TestImage blob_frame(int w, int h, const std::vector<Blob>& blobs, double noise,
                            std::uint32_t seed, double floor = 0.0) {
  TestImage img(w, h, PixelFormat::Gray32F);
  draw_blobs(w, h, blobs, noise, seed, floor, [&](int x, int y, double v) {
    img.view().row_as<float>(y)[x] = static_cast<float>(v);
  });
  return img;
}

}  // namespace starsift::test
