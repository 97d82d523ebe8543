// SPDX-License-Identifier: LGPL-2.1-or-later
// The Gaussian blur's parameters: one struct, shared by YAML, element properties, the CPU
// reference and the CUDA kernels.
//
// The kernel of an axis with standard deviation sigma is w(i) = exp(-i^2 / (2 sigma^2)) for
// |i| <= radius, divided by its sum (so the weights sum to 1 and a constant frame stays
// constant). The radius, when left at 0, is ceil(4 sigma): the Gaussian's tail beyond it
// holds 6.3e-5 of its weight, so cutting it moves a 16-bit sample by at most 4 counts where
// the neighbourhood spans the whole range, and by nothing on a sky. sigma 0 is the identity
// on that axis.
#pragma once

#include <span>
#include <vector>

#include "pipeline/border.hpp"
#include "pipeline/hd.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift {

struct GaussParams {
  static constexpr double kMaxSigma = 1000.0;  // px: far beyond any sky feature
  static constexpr int kMaxRadius = 4000;      // px: ceil(4 * kMaxSigma)
  static constexpr double kRadiusPerSigma = 4.0;
  // From this sigma (on either axis) the CPU blurs by Deriche's recursion (gauss_iir.hpp,
  // within 0.11 % of the peak, cost flat in sigma) rather than the exact direct sums, whose
  // cost grows with sigma: the two cross near here on the CPU (1024² and 2048², every format:
  // bench/results/gauss-cpu). gauss_cpu_recursive() has the whole rule.
  static constexpr double kRecursiveFromSigma = 50.0;
  // Below this sigma on an axis the recursion approximates the Gaussian poorly (its poles are
  // fitted for wider kernels), so a frame with such an axis keeps the direct sums.
  static constexpr double kRecursiveMinSigma = 3.0;
  static constexpr BorderMode kDefaultBorder = BorderMode::Reflect101;

  double sigma_x = 1.0;  // px, 0..kMaxSigma; 0: no blur along x
  double sigma_y = 1.0;  // px, 0..kMaxSigma; 0: no blur along y
  int radius_x = 0;      // px, 0 (automatic: ceil(4 sigma_x)) or 1..kMaxRadius
  int radius_y = 0;
  BorderMode border = kDefaultBorder;
  // The value of pixels outside the frame for BorderMode::Constant, in the format's units.
  double border_value = 0.0;

  // The radius used along each axis: the explicit one, else ceil(4 sigma); 0 for sigma 0.
  int effective_radius_x() const noexcept;
  int effective_radius_y() const noexcept;

  // Throws Error naming the parameter, the value and the allowed range.
  void validate() const;
  // Also checks border_value against the sample range of `format`.
  void validate_for(PixelFormat format) const;
  // validate_for(in.format), and `out` of the same size and format as `in`: what every path
  // of the blur checks before a frame.
  void validate_frames(ConstImageView in, ImageView out) const;

  bool operator==(const GaussParams&) const = default;
};

// The normalised weights of one axis, w[0] at offset -radius: 2 radius + 1 of them, summing
// to 1 (computed in double, stored as float, the float sum within 1e-6 of 1). {1} for sigma
// 0 or radius 0.
std::vector<float> gauss_weights(double sigma, int radius);
// The same weights' second half, centre first (out[i] = w at distance i), into `out` without
// allocating: for launchers and per-frame paths. The radius written: min(radius,
// out.size() - 1), 0 for sigma 0.
int gauss_half_weights(double sigma, int radius, std::span<float> out) noexcept;

// A blurred sample of an integer format: clamped to 0..max, then rounded half up (a cast,
// where nearbyint() would be a library call per sample). Every implementation, CPU and
// CUDA, rounds so.
STARSIFT_HD float gauss_round(float value, float max) noexcept {
  if (!(value > 0.0f)) return 0.0f;  // NaN too
  if (value >= max) return max;
  return static_cast<float>(static_cast<int>(value + 0.5f));
}

// The CPU's choice for frames of `params`: the recursion when the larger sigma is at least
// kRecursiveFromSigma and no blurred axis is under kRecursiveMinSigma; else the exact sums.
bool gauss_cpu_recursive(const GaussParams& params) noexcept;

// Every format the blur takes: grey 8/16-bit and float, and the 4-channel formats (alpha or
// padding passes through untouched).
bool gauss_supports(PixelFormat format) noexcept;

}  // namespace starsift
