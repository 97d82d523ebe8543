// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/detect/detection_linker.hpp"

namespace starsift {

DetectionLinker::DetectionLinker(const DetectLinkParams& params, std::size_t capacity)
    : params_(params), tracker_(params.tracker) {
  params_.validate();
  records_.reserve(capacity);
  new_ids_.reserve(capacity + 1);
}

void DetectionLinker::set_merge(bool merge_streaks, const StreakMergeParams& streak_merge) {
  if (streak_merge != params_.streak_merge) streak_merge.validate();
  params_.merge_streaks = merge_streaks;
  params_.streak_merge = streak_merge;
}

void DetectionLinker::link(std::span<const DetectedObject> catalogue, std::int64_t timestamp_ns) {
  records_.assign(catalogue.begin(), catalogue.end());
  // Merged before tracking, so that a streak's pieces never start tracks of their own.
  removed_ = params_.merge_streaks
                 ? merge_streaks(records_, params_.streak_merge, merge_scratch_, &new_ids_)
                 : 0;
  const std::uint64_t frame = next_frame_++;
  tracker_.update(frame, timestamp_ns < 0 ? 0 : timestamp_ns, records_);
}

void DetectionLinker::reset() {
  tracker_.reset();
}

}  // namespace starsift
