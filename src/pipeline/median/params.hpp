// SPDX-License-Identifier: LGPL-2.1-or-later
// The median filter's parameters: one struct, shared by YAML, element properties, the CPU
// reference and the CUDA kernels.
#pragma once

#include "pipeline/border.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift {

struct MedianParams {
  static constexpr int kDefaultSize = 3;
  static constexpr int kMinSize = 3;
  static constexpr int kMaxSize = 31;  // every odd size in [kMinSize, kMaxSize]
  static constexpr BorderMode kDefaultBorder = BorderMode::Reflect101;
  static constexpr double kDefaultBorderValue = 0.0;

  int size = kDefaultSize;  // window side, odd
  BorderMode border = kDefaultBorder;
  // Value of pixels outside the frame for BorderMode::Constant, in the format's units
  // (0..255 for 8-bit, 0..65535 for GRAY16, any float for GRAY32F); colour formats use it
  // for every colour channel.
  double border_value = kDefaultBorderValue;

  int radius() const noexcept { return size / 2; }

  // Throws Error naming the parameter, the value and the allowed range.
  void validate() const;
  // Also checks border_value against the sample range of `format`.
  void validate_for(PixelFormat format) const;

  bool operator==(const MedianParams&) const = default;
};

// Every format the median filter accepts (all of them: grey, float and 4-channel, where
// alpha/padding passes through untouched).
bool median_supports(PixelFormat format) noexcept;

// The border value as the integer sample the kernels compare (the format's own units; for
// GRAY32F the order-preserving key of the float, see sample_key.hpp).
unsigned median_border_sample(const MedianParams& params, PixelFormat format);

}  // namespace starsift
