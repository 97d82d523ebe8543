// SPDX-License-Identifier: LGPL-2.1-or-later
// What a pipeline's publisher has done, counted where it happens (the pipeline's detections
// writer pushing, libmosquitto's network thread confirming) and read anywhere (metrics, the
// summary) without a lock. They belong to the pipeline, not to one publisher: a reload that
// changes the broker replaces the publisher and the counts go on.
//
// Every message pushed ends in exactly one of published, dropped or failed, or is still
// queued: pushed == published + dropped + failed + queued.
#pragma once

#include <atomic>
#include <cstdint>

namespace starsift::daemon {

struct PublishCounters {
  std::atomic<std::uint64_t> pushed{0};       // lines handed to the publisher
  std::atomic<std::uint64_t> published{0};    // confirmed by the broker (QoS 0: written to it)
  std::atomic<std::uint64_t> dropped{0};      // pushed out of a full queue, oldest first
  std::atomic<std::uint64_t> failed{0};       // refused by libmosquitto, or unsent at the end
  std::atomic<std::uint64_t> queued{0};       // waiting now: in the queue or awaiting the broker
  std::atomic<std::uint64_t> connections{0};  // connections the broker accepted
  std::atomic<bool> connected{false};         // connected to the broker now
};

}  // namespace starsift::daemon
