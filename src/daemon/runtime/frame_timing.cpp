// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/runtime/frame_timing.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace starsift::daemon {

std::uint64_t FrameTiming::add(std::int64_t pts_ns) {
  ++frames_;
  if (pts_ns < 0) return 0;
  if (window_.empty()) {
    window_.push_back({pts_ns, 0});
    return 0;
  }
  const Stamp last = window_.back();
  const std::int64_t gap = pts_ns - last.pts_ns;
  if (gap <= 0) return 0;  // a repeated or backward timestamp: no rate, no gap
  double period = typical_period_ns();
  if (period <= 0) period = static_cast<double>(gap);
  intervals_.push_back(gap);
  while (intervals_.size() > kMedianIntervals) intervals_.pop_front();
  std::uint64_t periods = 1;
  if (static_cast<double>(gap) > kGapPeriods * period) {
    periods = static_cast<std::uint64_t>(std::llround(static_cast<double>(gap) / period));
    if (periods < 2) periods = 2;  // more than 1.5 periods is at least one frame missing
  }
  window_.push_back({pts_ns, last.period + periods});
  while (window_.size() > kWindow) window_.pop_front();
  dropped_ += periods - 1;
  return periods - 1;
}

double FrameTiming::period_ns() const noexcept {
  if (window_.size() >= 2) {
    const double span = static_cast<double>(window_.back().pts_ns - window_.front().pts_ns);
    const auto periods = static_cast<double>(window_.back().period - window_.front().period);
    if (span > 0 && periods > 0) return span / periods;
  }
  return nominal_fps_ > 0 ? 1e9 / nominal_fps_ : 0.0;
}

double FrameTiming::typical_period_ns() const {
  // Too few intervals to tell early frames from gaps: the nominal period, or none (no gap
  // is judged).
  if (intervals_.size() < kMinIntervals) return nominal_fps_ > 0 ? 1e9 / nominal_fps_ : 0.0;
  std::vector<std::int64_t> sorted(intervals_.begin(), intervals_.end());
  const auto middle = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
  std::nth_element(sorted.begin(), middle, sorted.end());
  return static_cast<double>(*middle);
}

double FrameTiming::fps() const noexcept {
  const double period = period_ns();
  return period > 0 ? 1e9 / period : 0.0;
}

std::int64_t live_frame_utc_us(std::int64_t realtime_now_us, std::uint64_t clock_now_ns,
                               std::uint64_t base_time_ns, std::uint64_t running_ns) noexcept {
  const auto now_running =
      static_cast<std::int64_t>(clock_now_ns) - static_cast<std::int64_t>(base_time_ns);
  const std::int64_t age_ns = now_running - static_cast<std::int64_t>(running_ns);
  // Rounded to the nearest microsecond, not truncated towards zero.
  const std::int64_t age_us = age_ns >= 0 ? (age_ns + 500) / 1000 : -((-age_ns + 500) / 1000);
  return realtime_now_us - age_us;
}

std::int64_t file_frame_utc_us(std::int64_t start_utc_us, std::uint64_t running_ns) noexcept {
  return start_utc_us + static_cast<std::int64_t>((running_ns + 500) / 1000);
}

}  // namespace starsift::daemon
