// SPDX-License-Identifier: LGPL-2.1-or-later
// What a pipeline's event clips have done (docs/live-video.md, "Event clips"), counted where
// it happens and read anywhere without a lock.
#pragma once

#include <atomic>
#include <cstdint>

namespace starsift::daemon {

struct ClipCounters {
  std::atomic<std::uint64_t> events{0};    // events seen (tracks confirmed, bright detections)
  std::atomic<std::uint64_t> clips{0};     // clips written, video and JSON
  std::atomic<std::uint64_t> limited{0};   // events that would have opened a clip past max-per-hour
  std::atomic<std::uint64_t> failures{0};  // clips not written (disk, muxer, encoder errors)
};

}  // namespace starsift::daemon
