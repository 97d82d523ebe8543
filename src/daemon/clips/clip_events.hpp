// SPDX-License-Identifier: LGPL-2.1-or-later
// When an event clip is due, as data (no GStreamer; tested alone): the events of each frame,
// and the clip window they open or extend (docs/live-video.md, "Event clips").
//
//   event   a mover reported for the first time (the tracker reports only confirmed tracks),
//           or, with min-flux > 0, the brightest detection of a frame at min-flux or more
//   window  from before-s ahead of the first event to after-s past the last, each later
//           event extending it, but to no more than max-s from its start; at most
//           max-per-hour windows opened an hour (the rest counted, not recorded)
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/tracker.hpp"

namespace starsift::daemon {

struct ClipEvent {
  enum class Kind { Track, Bright };
  Kind kind = Kind::Track;
  std::uint64_t frame = 0;
  std::int64_t utc_us = 0;
  std::int32_t track = -1;  // Track: its id
  double x = 0, y = 0;
  double flux = 0;
};
std::string_view to_string(ClipEvent::Kind kind) noexcept;  // "track", "bright"

class ClipEventDetector {
 public:
  // A track not reported for this many frames is forgotten (its id could come again).
  static constexpr std::uint64_t kForgetFrames = 1000;

  explicit ClipEventDetector(double min_flux) : min_flux_(min_flux) {}
  // This frame's events, appended to `events` (cleared first).
  void on_frame(std::uint64_t frame, std::int64_t utc_us, std::span<const DetectedObject> objects,
                std::span<const Track> movers, std::vector<ClipEvent>& events);
  std::size_t tracks_known() const noexcept { return last_seen_.size(); }

 private:
  double min_flux_;
  std::unordered_map<std::int32_t, std::uint64_t> last_seen_;  // track id -> frame
  std::uint64_t last_prune_ = 0;
};

struct ClipWindow {
  std::int64_t start_us = 0;  // UTC
  std::int64_t end_us = 0;
  std::vector<ClipEvent> events;
};

struct ClipTiming {
  std::int64_t before_us = 5'000'000;
  std::int64_t after_us = 5'000'000;
  std::int64_t max_us = 60'000'000;
  int max_per_hour = 60;  // 0: no limit
};

class ClipSchedule {
 public:
  enum class Decision {
    Opened,    // a new window
    Extended,  // the open window's end moved
    Joined,    // in the open window, which ends at its longest already
    Limited,   // no window: max-per-hour reached (counted)
  };

  explicit ClipSchedule(ClipTiming timing) : timing_(timing) {}
  // `now_us`: a monotonic clock, for the hourly limit.
  Decision on_event(const ClipEvent& event, std::int64_t now_us);
  // The open window once a frame of `utc_us` is past its end; nothing before.
  std::optional<ClipWindow> close_if_past(std::int64_t utc_us);
  const std::optional<ClipWindow>& open() const noexcept { return open_; }
  std::optional<ClipWindow> close() { return std::exchange(open_, std::nullopt); }

 private:
  ClipTiming timing_;
  std::optional<ClipWindow> open_;
  std::deque<std::int64_t> opened_us_;  // monotonic times of the windows opened this hour
};

}  // namespace starsift::daemon
