// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/threshold.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "pipeline/error.hpp"

namespace starsift::quality {

ThresholdChoice choose_threshold(std::vector<float> snrs, double area_mpix_frames, double max_rate,
                                 float floor) {
  if (!(area_mpix_frames > 0.0) || !(max_rate >= 0.0)) {
    throw Error("choose_threshold: the area must be > 0 and the rate >= 0");
  }
  ThresholdChoice c;
  c.area_mpix_frames = area_mpix_frames;
  // The small epsilon keeps 0.1 x 50 from rounding down to 4.
  c.allowed = static_cast<long long>(std::floor(max_rate * area_mpix_frames + 1e-9));
  std::erase_if(snrs, [floor](float s) { return !(s > floor); });
  if (static_cast<long long>(snrs.size()) <= c.allowed) {
    c.threshold = floor;
    c.at_floor = true;
  } else {
    const auto nth = snrs.begin() + c.allowed;
    std::nth_element(snrs.begin(), nth, snrs.end(), std::greater<float>());
    c.threshold = *nth;
  }
  c.false_alarms = count_above(snrs, c.threshold);
  return c;
}

long long count_above(const std::vector<float>& snrs, float threshold) noexcept {
  return std::count_if(snrs.begin(), snrs.end(), [threshold](float s) { return s > threshold; });
}

}  // namespace starsift::quality
