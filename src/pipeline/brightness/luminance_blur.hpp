// SPDX-License-Identifier: LGPL-2.1-or-later
// B, the luminance blurred by a Gaussian of sigma, for the fast CPU path. The exact blur's
// work grows with sigma (2 * 4 sigma + 1 products per sample and axis: 642 at the default
// sigma 40), but B is smooth at that scale, so from sigma 2 kMinSmallSigma it is computed on
// a small plane and brought back:
//   1. The small plane: n = ceil((width - 1) / f) + 1 samples across, f the largest power of
//      two up to kMaxFactor with sigma / f >= kMinSmallSigma, spaced s = (width - 1) / (n - 1)
//      <= f pixels apart so that the first sits on the first pixel and the last on the last;
//      likewise down. Each sample is the mean of the luminance under a tent of half-width s
//      around it (the pixels beyond the frame read through reflect-101). With samples on the
//      edge pixels, reflect-101 on the small plane mirrors exactly what reflect-101 mirrors on
//      the frame; and the tent, unlike a box, leaves little of the fine detail to alias into
//      the coarse (its response falls as the square of the distance to each zero).
//   2. The small plane blurred by the exact sums (GaussCpu; Deriche's recursion where
//      gauss_cpu_recursive() says so) with sigma_s = sqrt(sigma^2 - s^2 / 3) / s: the tent adds a
//      variance of s^2 / 6 px^2, the bilinear interpolation of step 3 another s^2 / 6 on average
//      over its phases, so the whole spreads as the Gaussian of sigma does.
//   3. B at each pixel: the bilinear interpolation of the blurred small plane.
// Below sigma 2 kMinSmallSigma B is the exact blur of the luminance (GaussCpu, the
// reference's sums).
// Against the exact blur (gauss_reference of the Y plane; tests/brightness/test_brightness_cpu
// .cpp) at sigma 8..200 on frames of 0..1, measured worst differences: 2.2e-3 on a hard step
// between 0.1 and 0.9 (at sigma 8; 6e-4 from sigma 40), 5e-4 on uniform noise of the full
// range, 3e-5 on the synthetic sky. The output of mode local moves by at most 0.51 strength
// times as much (the largest slope of Y^(2^(s (2B - 1))) in B): under one count of 8 bits.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "pipeline/gauss/gauss_cpu.hpp"
#include "pipeline/gauss/gauss_iir.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

class LuminanceBlur {
 public:
  static constexpr double kMinSmallSigma = 4.0;
  static constexpr int kMaxFactor = 16;

  // The plane's geometry, inline so that the CUDA launcher (brightness.cuh) shares it.
  // f above: 1 below sigma 2 kMinSmallSigma (the exact blur).
  static int downsample_factor(double sigma) noexcept {
    int factor = 1;
    while (factor < kMaxFactor && sigma / (2 * factor) >= kMinSmallSigma) factor *= 2;
    return factor;
  }
  // The samples of the small plane along an axis of `pixels` for factor f (pixels for f = 1).
  static int small_samples(int pixels, int factor) noexcept {
    if (factor == 1 || pixels == 1) return pixels;
    return (pixels - 1 + factor - 1) / factor + 1;
  }
  // sigma_s above for the spacing s; sigma itself for s = 1.
  static double small_sigma(double sigma, double spacing) noexcept {
    if (spacing <= 1.0) return sigma;
    const double variance = sigma * sigma - spacing * spacing / 3.0;
    return std::sqrt(std::max(variance, 0.0)) / spacing;
  }

  // Computes B for frame `in` of `shape` (its luminance as brightness_rows::load_luminance
  // reads it). Buffers are kept for the next frame of the same size: a stream allocates once.
  void prepare(const FrameShape& shape, double sigma, ConstImageView in, ThreadPool& pool);

  // Row y of B (shape.width values): a row of the blurred plane when f = 1, else
  // interpolated into `scratch` (width floats) and returned.
  const float* row(int y, float* scratch) const;

  int factor() const noexcept { return factor_; }

 private:
  // One axis of the small plane. Pixel p lies between samples left[p] and left[p] + 1, a
  // fraction of the spacing past the first: it is under those two samples' tents only, with
  // weights 1 - fraction and fraction (doubled next to an edge sample, for the pixel's mirror
  // image under reflect-101), which to_left and to_right hold divided by each sample's total
  // (tent_axis.hpp, shared with the CUDA kernels).
  struct Axis {
    int pixels = 0;
    int samples = 0;
    double spacing = 1.0;
    std::vector<int> left;
    std::vector<float> fraction;
    std::vector<float> to_left, to_right;
    std::vector<int> run_begin;  // samples entries: the first pixel with left == i; then pixels
    void build(int pixels, int factor);
  };

  int width_ = 0, height_ = 0;
  int factor_ = 1;
  Axis x_, y_;
  std::vector<float> small_;           // the small plane (f > 1), or Y (f = 1)
  std::vector<float> blurred_;         // small_ blurred
  std::vector<float> upsampled_rows_;  // f > 1: each blurred row interpolated to full width
  std::vector<float> lines_;  // per thread chunk: a luminance row, two weighted, a reduced row
  GaussCpu direct_;
  GaussIir recursive_;
};

}  // namespace starsift
