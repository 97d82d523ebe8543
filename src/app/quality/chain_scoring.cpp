// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/chain_scoring.hpp"

#include <algorithm>
#include <cmath>

namespace starsift::quality {

std::int64_t label_object(const DetectedObject& o, const std::vector<Streak>& streaks,
                          const Interior& interior, double radius) noexcept {
  if (!interior.contains(o.x, o.y)) return kNotScored;
  std::int64_t nearest = kFalseDetection;
  double nearest_distance = radius;
  for (std::size_t i = 0; i < streaks.size(); ++i) {
    const double d = std::min(distance_to_streak(streaks[i], o.x, o.y),
                              distance_to_streak(streaks[i], o.xpeak, o.ypeak));
    if (d <= nearest_distance) {
      nearest = static_cast<std::int64_t>(i);
      nearest_distance = d;
    }
  }
  return nearest;
}

long long score_catalogue(std::span<const DetectedObject> objects,
                          const std::vector<Streak>& streaks, const std::vector<int>& targets,
                          const Interior& interior, double radius,
                          std::vector<std::int64_t>& labels, std::vector<unsigned char>& hit) {
  labels.clear();
  hit.assign(targets.size(), 0);
  long long false_detections = 0;
  for (const DetectedObject& o : objects) {
    const std::int64_t label = label_object(o, streaks, interior, radius);
    labels.push_back(label);
    if (label == kFalseDetection) ++false_detections;
    if (label < 0) continue;
    const auto t = std::find(targets.begin(), targets.end(), static_cast<int>(label));
    if (t != targets.end()) hit[static_cast<std::size_t>(t - targets.begin())] = 1;
  }
  return false_detections;
}

void TrackScorer::add_frame(std::span<const Track> reported, std::span<const std::int64_t> labels) {
  for (const Track& t : reported) {
    if (t.id < 0) continue;
    Tally& tally = tracks_[t.id];
    tally.speed = std::hypot(t.vx, t.vy);
    if (t.detection < 0 || static_cast<std::size_t>(t.detection) >= labels.size()) continue;
    ++tally.labels[labels[static_cast<std::size_t>(t.detection)]];
  }
}

TrackScorer::Result TrackScorer::result() const {
  Result r;
  for (const auto& [id, tally] : tracks_) {
    if (tally.labels.empty()) continue;  // never detected while reported: cannot happen
    ++r.tracks;
    // Labels ascend in the map (kNotScored, kFalseDetection, then mover ids): scanning from
    // the top and keeping only strictly larger counts breaks ties towards movers.
    std::int64_t best = kNotScored;
    int best_count = -1;
    for (auto it = tally.labels.rbegin(); it != tally.labels.rend(); ++it) {
      if (it->second > best_count) {
        best = it->first;
        best_count = it->second;
      }
    }
    if (best >= 0) {
      r.followed.push_back(static_cast<std::uint64_t>(best));
    } else if (best == kFalseDetection) {
      ++r.false_tracks;
      r.still_false_tracks += tally.speed < kStillSpeed;
    }
  }
  std::sort(r.followed.begin(), r.followed.end());
  r.followed.erase(std::unique(r.followed.begin(), r.followed.end()), r.followed.end());
  return r;
}

}  // namespace starsift::quality
