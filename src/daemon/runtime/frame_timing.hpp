// SPDX-License-Identifier: LGPL-2.1-or-later
// A pipeline's frame times: the measured frame rate, frames missing from the stream, and each
// frame's UTC. Pure arithmetic on timestamps (tested alone); the probes feed it.
//
// The rate is measured, never taken from the caps: a camera sold as 25 fps runs at 24.98, and
// over a night that is 3 minutes. Over a window of the last kWindow timestamps it is the frame
// periods spanned divided by the time they took. A frame is missing where two timestamps lie
// more than 1.5 periods apart: the gap holds round(gap / period) - 1 frames, which are counted
// as dropped and skipped in the frame numbers, never given to the next frame (RMS stamped
// frames after a drop with the time of the lost ones).
//
// The period that judges a gap is the median of the last kMedianIntervals intervals (the
// nominal one before kMinIntervals have been seen), not the measured rate: a camera's first
// frames often come early or in a burst, and a period learnt from them would make every later
// interval look like a gap.
#pragma once

#include <cstdint>
#include <deque>

namespace starsift::daemon {

class FrameTiming {
 public:
  static constexpr std::size_t kWindow = 500;  // 20 s at 25 fps
  static constexpr double kGapPeriods = 1.5;
  static constexpr std::size_t kMedianIntervals = 31;
  static constexpr std::size_t kMinIntervals = 5;

  // `nominal_fps`: the rate the source was asked for (0: unknown), used until two timestamps
  // have been seen.
  explicit FrameTiming(double nominal_fps = 0.0) : nominal_fps_(nominal_fps) {}

  // A frame whose timestamp is `pts_ns` (-1: none; such a frame only counts). Returns the
  // frames missing just before it.
  std::uint64_t add(std::int64_t pts_ns);
  // The stream starts over (a new pipeline, a seek): timestamps restart; counts are kept.
  void restart() {
    window_.clear();
    intervals_.clear();
  }

  // Frames per second measured over the window; the nominal rate before two timestamps (0
  // when unknown).
  double fps() const noexcept;
  // The measured (or nominal) frame period in ns; 0 when unknown.
  double period_ns() const noexcept;
  // The period gaps are judged by: the median of the recent intervals; before there are
  // kMinIntervals of them, the nominal period, or 0 (no gap judged) without one.
  double typical_period_ns() const;
  std::uint64_t frames() const noexcept { return frames_; }    // frames added
  std::uint64_t dropped() const noexcept { return dropped_; }  // frames found missing

 private:
  struct Stamp {
    std::int64_t pts_ns;
    std::uint64_t period;  // frame periods since the window's first stamp was seen
  };
  double nominal_fps_;
  std::deque<Stamp> window_;
  std::deque<std::int64_t> intervals_;  // the latest positive intervals, ns
  std::uint64_t frames_ = 0;
  std::uint64_t dropped_ = 0;
};

// The UTC (µs since 1970) at which a frame of a live source was taken: the wall clock now
// less the frame's age on the pipeline clock. `running_ns` is the frame's running time (its
// timestamp in the pipeline's time, taken at capture by live sources), `clock_now_ns` and
// `base_time_ns` the pipeline clock now and at the pipeline's start, `realtime_now_us` the
// wall clock now (CLOCK_REALTIME). The age is a difference of two readings of one monotonic
// clock, so a step of the wall clock moves every later frame with it and nothing else.
std::int64_t live_frame_utc_us(std::int64_t realtime_now_us, std::uint64_t clock_now_ns,
                               std::uint64_t base_time_ns, std::uint64_t running_ns) noexcept;

// The UTC of a frame of a source that is not live (a file, a sky run as fast as it goes): the
// wall clock when the pipeline started plus the frame's running time, so the frames keep
// their own spacing.
std::int64_t file_frame_utc_us(std::int64_t start_utc_us, std::uint64_t running_ns) noexcept;

}  // namespace starsift::daemon
