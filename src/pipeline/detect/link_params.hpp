// SPDX-License-Identifier: LGPL-2.1-or-later
// The parameters of detection's host steps on each frame's catalogue (detection_linker.hpp):
// the streak merge and the tracker. Part of DetectParams, so that one struct says everything
// `detect` does, in YAML and in siftdetect's properties alike.
#pragma once

#include "pipeline/detect/streak_merge.hpp"
#include "pipeline/detect/tracker.hpp"

namespace starsift {

// The host steps' parameters: siftdetect's `merge-streaks`, `gate`, `confirm`, `coast`,
// `min-speed` and `max-speed`, and the same keys of a chain's `detect` stage.
struct DetectLinkParams {
  bool merge_streaks = true;  // the pieces of a streak broken along its line become one record
  StreakMergeParams streak_merge;
  TrackerParams tracker;

  // Throws Error naming the parameter, the value and what is allowed.
  void validate() const;

  bool operator==(const DetectLinkParams&) const = default;
};

}  // namespace starsift
