// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/clips/clip_events.hpp"

#include <algorithm>
#include <utility>

namespace starsift::daemon {

namespace {
constexpr std::int64_t kHourUs = 3'600'000'000;
}  // namespace

std::string_view to_string(ClipEvent::Kind kind) noexcept {
  return kind == ClipEvent::Kind::Track ? "track" : "bright";
}

void ClipEventDetector::on_frame(std::uint64_t frame, std::int64_t utc_us,
                                 std::span<const DetectedObject> objects,
                                 std::span<const Track> movers, std::vector<ClipEvent>& events) {
  events.clear();
  for (const Track& t : movers) {
    if (t.id < 0) continue;
    const auto [it, is_new] = last_seen_.try_emplace(t.id, frame);
    it->second = frame;
    if (is_new) {
      events.push_back(
          ClipEvent{ClipEvent::Kind::Track, frame, utc_us, t.id, t.x, t.y, t.mean_flux});
    }
  }
  if (min_flux_ > 0) {
    const DetectedObject* brightest = nullptr;
    for (const DetectedObject& o : objects) {
      if (o.flux >= min_flux_ && (brightest == nullptr || o.flux > brightest->flux)) brightest = &o;
    }
    if (brightest != nullptr) {
      events.push_back(ClipEvent{ClipEvent::Kind::Bright, frame, utc_us, -1, brightest->x,
                                 brightest->y, brightest->flux});
    }
  }
  // Forget tracks long gone, now and then: the map stays as small as the sky's movers.
  if (frame >= last_prune_ + kForgetFrames) {
    last_prune_ = frame;
    std::erase_if(last_seen_, [&](const auto& e) { return frame - e.second > kForgetFrames; });
  }
}

ClipSchedule::Decision ClipSchedule::on_event(const ClipEvent& event, std::int64_t now_us) {
  if (open_) {
    const std::int64_t latest_end = open_->start_us + timing_.max_us;
    const std::int64_t end = std::min(event.utc_us + timing_.after_us, latest_end);
    open_->events.push_back(event);
    if (end > open_->end_us) {
      open_->end_us = end;
      return Decision::Extended;
    }
    return Decision::Joined;
  }
  while (!opened_us_.empty() && now_us - opened_us_.front() >= kHourUs) opened_us_.pop_front();
  if (timing_.max_per_hour > 0 &&
      opened_us_.size() >= static_cast<std::size_t>(timing_.max_per_hour)) {
    return Decision::Limited;
  }
  opened_us_.push_back(now_us);
  const std::int64_t start = event.utc_us - timing_.before_us;
  open_ =
      ClipWindow{start, std::min(event.utc_us + timing_.after_us, start + timing_.max_us), {event}};
  return Decision::Opened;
}

std::optional<ClipWindow> ClipSchedule::close_if_past(std::int64_t utc_us) {
  if (!open_ || utc_us <= open_->end_us) return std::nullopt;
  return close();
}

}  // namespace starsift::daemon
