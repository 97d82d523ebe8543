// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/median/params.hpp"

#include <cmath>
#include <string>

#include "pipeline/error.hpp"
#include "pipeline/sample_key.hpp"

namespace starsift {

void MedianParams::validate() const {
  if (size < kMinSize || size > kMaxSize || size % 2 == 0) {
    throw Error("median size " + std::to_string(size) + " is not allowed",
                "odd values " + std::to_string(kMinSize) + ".." + std::to_string(kMaxSize));
  }
  if (!std::isfinite(border_value)) {
    throw Error("median border-value is not a finite number", "a finite number");
  }
}

void MedianParams::validate_for(PixelFormat format) const {
  validate();
  const FormatInfo& info = format_info(format);
  if (info.is_float) return;
  const double max = info.bytes_per_sample == 1 ? 255.0 : 65535.0;
  if (border_value < 0.0 || border_value > max || border_value != std::floor(border_value)) {
    throw Error("median border-value " + std::to_string(border_value) + " does not fit " +
                    std::string(info.name),
                "whole numbers 0.." + std::to_string(static_cast<int>(max)));
  }
}

bool median_supports(PixelFormat) noexcept {
  return true;
}

unsigned median_border_sample(const MedianParams& params, PixelFormat format) {
  if (format_info(format).is_float) return float_to_key(static_cast<float>(params.border_value));
  return static_cast<unsigned>(params.border_value);
}

}  // namespace starsift
