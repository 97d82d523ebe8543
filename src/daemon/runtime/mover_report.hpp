// SPDX-License-Identifier: LGPL-2.1-or-later
// One mover as the chain reported it in one frame: what the status page lists as a
// pipeline's latest tracks (FrameOutputs keeps the latest report of each of the last few
// tracks; the snapshot copies them).
#pragma once

#include <cstdint>

namespace starsift::daemon {

struct MoverReport {
  std::int32_t track = -1;         // Track::id: the mover's number in its tracker's life
  std::uint64_t frame = 0;         // the frame's number (FrameOutputs' numbering)
  std::int64_t utc_us = 0;         // the frame's UTC, µs since the Unix epoch
  float x = 0.0f, y = 0.0f;        // position, px
  float vx = 0.0f, vy = 0.0f;      // velocity, px/frame
  float vx_s = 0.0f, vy_s = 0.0f;  // velocity, px/s (0 when the timestamps did not advance)
  float flux = 0.0f;               // mean flux of its detections
  std::uint32_t detections = 0;    // detections linked to it so far
};

}  // namespace starsift::daemon
