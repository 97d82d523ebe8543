// SPDX-License-Identifier: LGPL-2.1-or-later
// The detection threshold at a fixed false-alarm rate, chosen from the data: the lowest
// threshold that leaves at most rate x area false alarms among the candidate peaks.
#pragma once

#include <vector>

namespace starsift::quality {

struct ThresholdChoice {
  float threshold = 0.0f;         // a detection needs snr > threshold
  long long allowed = 0;          // floor(max_rate * area): false alarms the rate allows
  long long false_alarms = 0;     // candidate peaks above the threshold (<= allowed)
  double area_mpix_frames = 0.0;  // the area they were counted on, megapixel-frames
  bool at_floor = false;  // fewer candidates than allowed: the threshold is the floor itself
};

// `false_alarm_snrs`: the snr of every peak above `floor` that is not a mover, counted over
// `area_mpix_frames`. The threshold is the (allowed + 1)-th highest of them, so at most
// `allowed` lie strictly above it; when there are no more than `allowed`, it is `floor`.
ThresholdChoice choose_threshold(std::vector<float> false_alarm_snrs, double area_mpix_frames,
                                 double max_rate, float floor);

// Peaks strictly above `threshold`.
long long count_above(const std::vector<float>& snrs, float threshold) noexcept;

}  // namespace starsift::quality
