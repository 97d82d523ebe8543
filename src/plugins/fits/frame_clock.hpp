// SPDX-License-Identifier: LGPL-2.1-or-later
// The timestamps of a sequence of frames read from files: from each frame's UTC (FITS
// DATE-OBS) relative to the first, or at a fixed rate. Pure arithmetic, tested alone.
#pragma once

#include <cstdint>
#include <optional>

namespace starsift::fits {

class FrameClock {
 public:
  // `by_date`: timestamps from the frames' UTC; `period_ns` is then only the interval used
  // until one is seen. Otherwise frames are `period_ns` apart.
  FrameClock(bool by_date, std::int64_t period_ns) : by_date_(by_date), period_ns_(period_ns) {}

  struct Stamp {
    std::int64_t pts_ns = 0;
    // By date, but the frame had no UTC or one not after the previous frame's: stamped one
    // interval after the previous frame instead.
    bool estimated = false;
  };
  // The next frame's timestamp; `utc_us` its UTC when it has one.
  Stamp next(std::optional<std::int64_t> utc_us);
  // The sequence starts again from its first frame (a loop): timestamps go on from the last.
  void start_pass() {
    pass_offset_ns_ = last_ns_ ? *last_ns_ + period_ns_ : 0;
    pass_first_utc_us_.reset();
  }
  std::int64_t period_ns() const noexcept { return period_ns_; }

 private:
  bool by_date_;
  std::int64_t period_ns_;
  std::int64_t pass_offset_ns_ = 0;
  std::optional<std::int64_t> pass_first_utc_us_;
  std::optional<std::int64_t> last_ns_;
};

inline FrameClock::Stamp FrameClock::next(std::optional<std::int64_t> utc_us) {
  Stamp stamp;
  const std::int64_t after_last = last_ns_ ? *last_ns_ + period_ns_ : pass_offset_ns_;
  if (!by_date_) {
    stamp.pts_ns = after_last;
  } else {
    if (utc_us && !pass_first_utc_us_) {
      // The pass's first dated frame is where its dates start: at the pass's offset, or one
      // interval after the previous frame when undated frames came first.
      pass_first_utc_us_ = *utc_us;
      pass_offset_ns_ = after_last;
    }
    const std::optional<std::int64_t> by_utc =
        utc_us ? std::optional(pass_offset_ns_ + (*utc_us - *pass_first_utc_us_) * 1000)
               : std::nullopt;
    if (by_utc && (!last_ns_ || *by_utc > *last_ns_)) {
      if (last_ns_) period_ns_ = *by_utc - *last_ns_;
      stamp.pts_ns = *by_utc;
    } else {
      stamp.pts_ns = after_last;
      stamp.estimated = true;
    }
  }
  last_ns_ = stamp.pts_ns;
  return stamp;
}

}  // namespace starsift::fits
