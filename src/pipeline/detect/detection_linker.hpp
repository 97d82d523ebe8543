// SPDX-License-Identifier: LGPL-2.1-or-later
// What happens to each frame's catalogue on the host, in frame order, once detection has
// written it: the pieces of a streak merged into one record (streak_merge.hpp), then the
// records linked into tracks (tracker.hpp). siftdetect and a siftchain ending in `detect`
// both run their catalogues through it, so both publish the same records and movers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/link_params.hpp"
#include "pipeline/detect/streak_merge.hpp"
#include "pipeline/detect/tracker.hpp"

namespace starsift {

class DetectionLinker {
 public:
  // Validates `params` (throws Error) and reserves room for catalogues of up to `capacity`
  // records, so that link() allocates nothing for them.
  DetectionLinker(const DetectLinkParams& params, std::size_t capacity);

  const DetectLinkParams& params() const noexcept { return params_; }

  // The merge's switch and rule, taken from the next frame on (they keep no state across
  // frames; the tracker's parameters are fixed for the linker's life). Throws Error for an
  // invalid rule, changing nothing.
  void set_merge(bool merge_streaks, const StreakMergeParams& streak_merge);

  // One frame's catalogue (records in id order, as detection writes them), taken at
  // `timestamp_ns` (negative: unknown, taken as 0). Frames are numbered 0, 1, 2, ... in the
  // order of the calls. Throws Error when the tracker refuses the frame (it then keeps its
  // tracks; records() still holds the merged records, every track -1).
  void link(std::span<const DetectedObject> catalogue, std::int64_t timestamp_ns);

  // Tracks start over (a flush or a seek breaks the frames' continuity); frame numbers and
  // track ids go on.
  void reset();

  // The latest frame's records after the merge, each with its track id.
  std::span<const DetectedObject> records() const noexcept { return records_; }
  // Records the latest merge removed (0: records() is the catalogue, renumbered nothing).
  std::size_t removed() const noexcept { return removed_; }
  // When removed() > 0: the new id of each old id (merge_streaks()'s map, for labels).
  const std::vector<std::uint32_t>& new_ids() const noexcept { return new_ids_; }
  // The latest frame's movers (Tracker::tracks()).
  std::span<const Track> tracks() const noexcept { return tracker_.tracks(); }
  const Tracker& tracker() const noexcept { return tracker_; }
  // The latest frame's number; 0 before the first link().
  std::uint64_t frame() const noexcept { return next_frame_ == 0 ? 0 : next_frame_ - 1; }

 private:
  DetectLinkParams params_;
  Tracker tracker_;
  std::vector<DetectedObject> records_;
  StreakMergeScratch merge_scratch_;
  std::vector<std::uint32_t> new_ids_;
  std::size_t removed_ = 0;
  std::uint64_t next_frame_ = 0;
};

}  // namespace starsift
