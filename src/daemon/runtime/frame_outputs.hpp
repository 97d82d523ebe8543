// SPDX-License-Identifier: LGPL-2.1-or-later
// What one pipeline of the config does with its frames, whatever GStreamer pipeline currently
// runs it (a reload or a restart builds a new one; this object stays, with its counts, its
// files and its frame numbers).
//
// Three streaming threads call in: the source side (every frame: its number, its UTC, gaps),
// the frames branch (raw frames for FITS and the preview) and the chain's output (detections,
// the truth of a synthetic sky, the preview's other panels). The files are written by two
// FileWorker threads of its own, so no streaming thread ever waits on the disk: one for the
// detections' JSON lines (in frame order), one for FITS frames and the preview. A job that
// finds its queue full is dropped and counted (json_failures, fits_failures). With a broker,
// the detections writer also hands each line to the pipeline's MQTT publisher
// (src/daemon/publish), which never makes it wait on the network.
//
// Frame numbers: the source's frames are numbered 0, 1, 2, ... in the order they come, and a
// gap in their timestamps (FrameTiming) skips the numbers of the frames missing, so the JSON
// lines show every loss as a jump in "frame". Numbers go on across rebuilds and restarts.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "daemon/clips/clip_recorder.hpp"
#include "daemon/config/daemon_config.hpp"
#include "daemon/outputs/clock_state.hpp"
#include "daemon/outputs/detections_file.hpp"
#include "daemon/outputs/fits_writer.hpp"
#include "daemon/outputs/frame_copy.hpp"
#include "daemon/outputs/night_layout.hpp"
#include "daemon/publish/mqtt_publisher.hpp"
#include "daemon/runtime/file_worker.hpp"
#include "daemon/runtime/frame_timing.hpp"
#include "daemon/runtime/mover_report.hpp"
#include "daemon/runtime/pipeline_counters.hpp"
#include "daemon/runtime/truth_tally.hpp"
#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/tracker.hpp"
#include "pipeline/sky/sky_truth.hpp"

namespace starsift::daemon {

// What the summary says about the synthetic sky's movers.
struct TruthSummary {
  std::size_t movers = 0;    // distinct movers of the truth seen in the frames
  std::size_t detected = 0;  // of them, detected in at least one frame
  std::size_t tracked = 0;   // of them, followed by a reported mover in at least one frame
  std::uint64_t mover_frames = 0;
  std::uint64_t matched_frames = 0;
};

// Where a pipeline's files went, for the summary.
struct OutputPaths {
  std::filesystem::path detections;  // the latest detections file; empty before the first line
  std::filesystem::path fits;        // the latest FITS frame
  std::filesystem::path preview;     // the preview PNG
  std::filesystem::path video;       // the latest recording segment
};

class FrameOutputs {
 public:
  FrameOutputs(std::string pipeline, NightLayout layout, OutputsConfig outputs,
               FitsPipelineInfo fits_info, double nominal_fps, PipelineCounters& counters);
  ~FrameOutputs();  // finish()
  FrameOutputs(const FrameOutputs&) = delete;
  FrameOutputs& operator=(const FrameOutputs&) = delete;

  // A reload's new outputs settings, from the next frame.
  void update(OutputsConfig outputs, FitsPipelineInfo fits_info);
  // Each detections line published with these settings from the next line on; none: not
  // published. Settings equal to the current publisher's keep it (and its connection);
  // others replace it, and the lines it had not sent go first through the new one. The swap
  // happens on the detections worker, in line order; the caller does not wait for it.
  void publish_to(const std::optional<MqttPublisherSettings>& settings,
                  std::shared_ptr<spdlog::logger> log);
  bool publishing() const;
  // Each frame's detections handed to `clips` from the next frame (none: no event clips).
  void clip_to(std::shared_ptr<ClipRecorder> clips);
  // The host clock's state recorded with the frames from now on (the daemon reads it once a
  // second: a system call and a few stat()s are not for every frame).
  void set_clock(ClockState clock);

  // A new GStreamer pipeline starts: its timestamps start over.
  void new_stream();

  // ---- the source side ----
  struct Stamp {
    std::uint64_t frame = 0;    // this frame's number
    std::uint64_t missing = 0;  // frames missing just before it
  };
  Stamp on_source_frame(std::int64_t pts_ns, std::int64_t utc_us);
  // The UTC of a recent source frame by its timestamp; nothing when it is not recent.
  std::optional<std::int64_t> source_utc_us(std::int64_t pts_ns) const;

  // ---- the frames branch ----
  // A raw frame (as it enters the chain). Copied when FITS or the preview may want it.
  void on_raw_frame(ConstImageView image, std::int64_t pts_ns, std::int64_t duration_ns);

  // ---- the chain's output ----
  // True when the next chain frame should come with its pixels (a preview is due).
  bool wants_processed_frame() const;
  struct ChainFrame {
    std::int64_t pts_ns = -1;
    std::span<const DetectedObject> objects;
    std::uint32_t overflow = 0;
    std::span<const Track> movers;
    const ConstImageView* processed = nullptr;  // the chain's output frame, when asked for
    const SkyTruth* truth = nullptr;            // a synthetic sky's frame: where its movers are
  };
  void on_chain_frame(const ChainFrame& frame);

  // A recording segment was opened (the recorder names it from this).
  std::filesystem::path next_video_segment(std::int64_t utc_us);

  // Runs the queued writes and syncs the files. Idempotent.
  void finish();

  TruthSummary truth_summary() const;
  OutputPaths paths() const;
  // The latest report of each of the last kRecentMovers tracks reported, oldest first (the
  // status page's list: one row per track, not the same few tracks frame after frame).
  static constexpr std::size_t kRecentMovers = 10;
  std::vector<MoverReport> recent_movers() const;
  const std::string& name() const noexcept { return pipeline_; }

 private:
  struct SourceEntry {
    std::int64_t pts_ns = -1;
    std::uint64_t frame = 0;
    std::int64_t utc_us = 0;
  };
  bool find_source(std::int64_t pts_ns, SourceEntry* entry) const;
  void post_fits(std::shared_ptr<FrameCopy> frame, const char* why);
  void swap_publisher(const std::optional<MqttPublisherSettings>& settings,
                      std::shared_ptr<spdlog::logger> log);
  void write_detections_job(std::uint64_t frame, std::int64_t pts_ns, std::int64_t utc_us,
                            std::vector<DetectedObject> objects, std::uint32_t overflow,
                            std::vector<Track> movers, double fps, bool to_file);
  void score_truth(const ChainFrame& frame);

  const std::string pipeline_;
  const NightLayout layout_;
  PipelineCounters& counters_;

  mutable std::mutex settings_mutex_;
  OutputsConfig outputs_;
  FitsPipelineInfo fits_info_;
  std::shared_ptr<const ClockState> clock_;
  std::shared_ptr<MqttPublisher> publisher_;  // null: not published; set on the detections worker
  std::shared_ptr<ClipRecorder> clips_;       // null: no event clips (settings_mutex_)
  std::atomic<bool> publish_wanted_{false};   // the latest publish_to() asked for a publisher

  // The source side's state: timing, and the recent frames' numbers and times by timestamp,
  // which the chain's output (a few frames later) looks up.
  mutable std::mutex source_mutex_;
  FrameTiming timing_;
  std::uint64_t next_frame_ = 0;
  std::vector<SourceEntry> recent_;  // a ring indexed by frame number
  std::uint64_t last_out_frame_ = 0;
  bool have_out_frame_ = false;

  // Raw frames kept for FITS on detection and the preview, newest last.
  mutable std::mutex raw_mutex_;
  std::deque<std::shared_ptr<FrameCopy>> raw_;
  std::int64_t last_scheduled_fits_utc_ = 0;

  // The chain's output side (one thread).
  std::deque<std::int64_t> fits_on_detection_;  // monotonic µs of those in the last hour
  mutable std::int64_t next_preview_us_ = 0;

  mutable std::mutex truth_mutex_;
  TruthTally truth_;

  mutable std::mutex paths_mutex_;
  OutputPaths paths_;

  mutable std::mutex movers_mutex_;
  std::deque<MoverReport> recent_movers_;  // at most kRecentMovers, one per track, newest last
  void remember_movers(std::uint64_t frame, std::int64_t utc_us, std::span<const Track> movers);

  // Written only on the detections worker.
  std::unique_ptr<DetectionsFile> detections_;
  std::string mqtt_line_;  // reused: the line published
  FileWorker detections_worker_;
  FileWorker frames_worker_;
  bool finished_ = false;
};

}  // namespace starsift::daemon
