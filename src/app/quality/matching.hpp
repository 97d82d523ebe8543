// SPDX-License-Identifier: LGPL-2.1-or-later
// Which detections are movers: a peak within `radius` px of a mover's path during the exposure
// (the segment from its mid-exposure truth position - v/2 to + v/2, so a fast mover's streak
// counts along its length) is a hit for that mover; any other peak is a false alarm.
#pragma once

#include <vector>

#include "pipeline/detect/peaks.hpp"
#include "pipeline/sky/sky_truth.hpp"

namespace starsift::quality {

struct Streak {
  double x0 = 0.0, y0 = 0.0;  // where the mover is at the start of the exposure
  double x1 = 0.0, y1 = 0.0;  // and at its end
};

Streak streak_of(const MoverTruth& mover) noexcept;

// Distance from (x, y) to the segment.
double distance_to_streak(const Streak& streak, double x, double y) noexcept;

// The index of the streak nearest to (x, y) among those within `radius`, or -1.
int match_point(const std::vector<Streak>& streaks, double x, double y, double radius) noexcept;

// The peaks of one frame sorted onto the movers: best[i], the highest peak in streak i's hit
// zone (-infinity when none: the mover is a hit at any threshold below it); false_alarms, the
// snr of every peak in no hit zone. A peak in two zones belongs to the nearer streak.
struct FrameMatch {
  std::vector<float> best;
  std::vector<float> false_alarms;
};
void match_peaks(const std::vector<Peak>& peaks, const std::vector<Streak>& streaks, double radius,
                 FrameMatch& out);

// Counts at a detection threshold (detections need snr > threshold).
struct MatchCounts {
  int hits = 0;          // streaks with a detection in their hit zone
  int false_alarms = 0;  // detections in no hit zone
};
MatchCounts count_matches(const std::vector<Peak>& peaks, const std::vector<Streak>& streaks,
                          double radius, float threshold);

}  // namespace starsift::quality
