// SPDX-License-Identifier: LGPL-2.1-or-later
// What a pipeline has done, counted where it happens (streaming threads, the main loop) and
// read anywhere (STATUS=, metrics, the summary) without a lock. Counts survive rebuilds and
// restarts of the pipeline: they belong to the config's pipeline, not to one GstPipeline.
#pragma once

#include <atomic>
#include <cstdint>

#include "daemon/clips/clip_counters.hpp"
#include "daemon/publish/publish_counters.hpp"

namespace starsift::daemon {

struct PipelineCounters {
  std::atomic<std::uint64_t> frames_in{0};      // frames the source gave
  std::atomic<std::uint64_t> frames_out{0};     // frames through the chain
  std::atomic<std::uint64_t> dropped{0};        // frames missing: gaps in the source's timestamps
  std::atomic<std::uint64_t> overrun{0};        // frames the chain could not take (gaps behind it)
  std::atomic<std::uint64_t> detections{0};     // objects found, all frames
  std::atomic<std::uint64_t> mover_reports{0};  // movers reported, summed over frames
  std::atomic<std::uint64_t> restarts{0};       // the pipeline torn down and started again
  std::atomic<std::uint64_t> rebuilds{0};       // rebuilt by a reload
  std::atomic<std::uint64_t> live_updates{0};   // changed in place by a reload
  std::atomic<std::uint64_t> backend_fallbacks{0};  // backend auto fell back to the CPU
  std::atomic<std::uint64_t> json_lines{0};
  std::atomic<std::uint64_t> json_failures{0};  // lines not written (disk, a full queue)
  std::atomic<std::uint64_t> fits_files{0};
  std::atomic<std::uint64_t> fits_failures{0};  // frames not written (disk, a full queue)
  std::atomic<std::uint64_t> previews{0};
  std::atomic<std::uint64_t> video_segments{0};
  // The synthetic sky's truth (a sky source only): mover-frames seen, and those with a
  // detection within kTruthMatchRadius px of the mover.
  std::atomic<std::uint64_t> truth_mover_frames{0};
  std::atomic<std::uint64_t> truth_matched{0};

  std::atomic<std::uint32_t> last_objects{0};  // in the latest frame
  std::atomic<std::uint32_t> last_movers{0};
  std::atomic<double> fps{0.0};                   // measured at the source
  std::atomic<double> latency_s{0.0};             // the latest frame: capture to its detections
  std::atomic<std::int64_t> last_frame_in_us{0};  // g_get_monotonic_time() of the latest
  std::atomic<std::int64_t> last_frame_out_us{0};
  PublishCounters mqtt;  // the detections lines published to the MQTT broker
  ClipCounters clips;    // event clips
};

// A detection this close to a mover of the sky's truth (px) found it.
inline constexpr double kTruthMatchRadius = 3.0;

}  // namespace starsift::daemon
