// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/frame_compare.hpp"

#include <cmath>

namespace starsift::app {

FrameComparison compare_to_truth(ConstImageView frame, ConstImageView truth,
                                 const SyntheticSky& sky, double threshold_sigma) {
  FrameComparison result;
  double sum2 = 0.0;
  for (int y = 0; y < frame.height; ++y) {
    const auto* a = frame.row_as<std::uint16_t>(y);
    const auto* b = truth.row_as<std::uint16_t>(y);
    for (int x = 0; x < frame.width; ++x) {
      const double d = static_cast<double>(a[x]) - static_cast<double>(b[x]);
      if (std::abs(d) > threshold_sigma * sky.noise_sigma(x, y)) {
        ++result.outliers;
      } else {
        sum2 += d * d;
      }
    }
  }
  const double n = static_cast<double>(frame.width) * frame.height - result.outliers;
  result.rms = n > 0 ? std::sqrt(sum2 / n) : 0.0;
  return result;
}

}  // namespace starsift::app
