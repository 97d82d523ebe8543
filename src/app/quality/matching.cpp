// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/matching.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace starsift::quality {

Streak streak_of(const MoverTruth& m) noexcept {
  return {m.x - 0.5 * m.vx, m.y - 0.5 * m.vy, m.x + 0.5 * m.vx, m.y + 0.5 * m.vy};
}

double distance_to_streak(const Streak& s, double x, double y) noexcept {
  const double dx = s.x1 - s.x0;
  const double dy = s.y1 - s.y0;
  const double length2 = dx * dx + dy * dy;
  double t = 0.0;
  if (length2 > 0.0) t = std::clamp(((x - s.x0) * dx + (y - s.y0) * dy) / length2, 0.0, 1.0);
  return std::hypot(x - (s.x0 + t * dx), y - (s.y0 + t * dy));
}

int match_point(const std::vector<Streak>& streaks, double x, double y, double radius) noexcept {
  int nearest = -1;
  double nearest_distance = radius;
  for (std::size_t i = 0; i < streaks.size(); ++i) {
    const double d = distance_to_streak(streaks[i], x, y);
    if (d <= nearest_distance) {
      nearest = static_cast<int>(i);
      nearest_distance = d;
    }
  }
  return nearest;
}

void match_peaks(const std::vector<Peak>& peaks, const std::vector<Streak>& streaks, double radius,
                 FrameMatch& out) {
  out.best.assign(streaks.size(), -std::numeric_limits<float>::infinity());
  out.false_alarms.clear();
  for (const Peak& p : peaks) {
    const int i = match_point(streaks, p.x, p.y, radius);
    if (i < 0) {
      out.false_alarms.push_back(p.snr);
    } else {
      float& best = out.best[static_cast<std::size_t>(i)];
      best = std::max(best, p.snr);
    }
  }
}

MatchCounts count_matches(const std::vector<Peak>& peaks, const std::vector<Streak>& streaks,
                          double radius, float threshold) {
  FrameMatch match;
  match_peaks(peaks, streaks, radius, match);
  MatchCounts counts;
  for (const float b : match.best) counts.hits += b > threshold;
  for (const float f : match.false_alarms) counts.false_alarms += f > threshold;
  return counts;
}

}  // namespace starsift::quality
