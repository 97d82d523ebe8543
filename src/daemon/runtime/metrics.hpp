// SPDX-License-Identifier: LGPL-2.1-or-later
// starsiftd's metrics in Prometheus' text format (prometheus-cpp's model and serializer), and
// its health. The values come from snapshots the main loop takes (PipelineSnapshot), so the
// HTTP threads never touch a pipeline that a reload may be removing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "daemon/outputs/clock_state.hpp"
#include "daemon/runtime/mover_report.hpp"

namespace starsift::daemon {

// A live view served over RTSP.
struct ViewSnapshot {
  std::string view;  // raw, whitened, detections
  std::string url;
  bool watched = false;  // a client watches it now
  std::uint64_t frames = 0, dropped = 0;
};

// A live view sent over RTP or shared memory.
struct SenderSnapshot {
  std::string output;  // rtp, shm
  std::string view;
  std::uint64_t frames = 0, errors = 0;
};

// One pipeline as the metrics and /healthz see it.
struct PipelineSnapshot {
  std::string name;
  std::string state;     // RunnerState's name
  bool flowing = false;  // frames come out of the chain
  std::string backend;   // "cpu", "cuda:0"; empty when not known
  std::string fault;     // the latest fault, while not flowing again
  std::uint64_t frames_in = 0, frames_out = 0, dropped = 0, overrun = 0;
  std::uint64_t detections = 0, mover_reports = 0, restarts = 0, rebuilds = 0, live_updates = 0,
                backend_fallbacks = 0;
  std::uint64_t json_lines = 0, json_failures = 0, fits_files = 0, fits_failures = 0, previews = 0,
                video_segments = 0;
  std::uint32_t objects = 0, movers = 0;  // in the latest frame
  double fps = 0.0;
  double latency_s = 0.0;
  // siftchain's latest frame: each stage ("0:whiten") and the copies; empty without one.
  std::vector<std::pair<std::string, double>> stage_s;
  // Detections published to the MQTT broker; `mqtt` false: this pipeline does not publish
  // (and has no mqtt metrics).
  bool mqtt = false, mqtt_connected = false;
  std::uint64_t mqtt_published = 0, mqtt_dropped = 0, mqtt_failed = 0, mqtt_queued = 0,
                mqtt_connections = 0;
  std::vector<ViewSnapshot> views;  // the live views served
  // The live views sent over RTP and shared memory.
  std::vector<SenderSnapshot> senders;
  std::uint64_t clip_events = 0, clips = 0, clips_limited = 0, clip_failures = 0;
  double upload_s = 0.0, download_s = 0.0;
  std::uint64_t zero_copy = 0, copied = 0;
  // For the status page: the preview PNG the pipeline wrote (empty before its first), and
  // the latest report of each of its most recent movers, oldest first.
  std::filesystem::path preview;
  std::vector<MoverReport> recent_movers;
};

struct DaemonSnapshot {
  std::vector<PipelineSnapshot> pipelines;
  ClockState clock;
  std::uint64_t reloads = 0, reload_failures = 0;
  double uptime_s = 0.0;
  bool rtsp = false;  // the RTSP server runs
  int rtsp_clients = 0;
  std::uint64_t rtsp_connections = 0;
  bool ready = false;  // READY=1 was sent
  bool stopping = false;
};

// The metrics as Prometheus text (version 0.0.4), names starting with starsift_.
std::string metrics_text(const DaemonSnapshot& snapshot);

// /healthz: healthy when every pipeline passes frames (a file that ended counts as done, not
// failed). `body` gets one line per pipeline.
bool healthy(const DaemonSnapshot& snapshot, std::string* body);

}  // namespace starsift::daemon
