// SPDX-License-Identifier: LGPL-2.1-or-later
// Event clips ("smart record", docs/live-video.md): a pipeline's view encoded all the time
// into a ring of the last seconds in memory, and, when a track is confirmed (or a detection is
// bright enough), the clip from before-s ahead of it to after-s past it written as a Matroska
// file, with the event's JSON beside it.
//
//   the view's feed -> appsrc ! videoconvert ! H.264 encoder ! h264parse ! appsink
//                        -> the ring (coded frames with their capture UTC), trimmed to
//                           before-s back from the newest, from a key frame
//                        -> the open clip's ClipWriter, while the frames are in its window
//
// The encoder makes a key frame every second, so a clip starts at most a second before
// before-s. Events come from the chain's output (on_frame()); the coded frames on the
// encoder's thread; both under one lock, for a few microseconds each. A finished clip is
// closed on a thread of its own (the muxer writes its index), so no streaming thread waits on
// the disk. The encoder runs while clips are on: rendering and x264 cost about what one
// watched live view costs (docs/live-video.md, "Measured").
#pragma once

#include <gst/gst.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "daemon/clips/clip_counters.hpp"
#include "daemon/clips/clip_events.hpp"
#include "daemon/clips/clip_writer.hpp"
#include "daemon/config/daemon_config.hpp"
#include "daemon/outputs/fits_writer.hpp"
#include "daemon/outputs/frame_copy.hpp"
#include "daemon/outputs/night_layout.hpp"
#include "daemon/stream/view_feed.hpp"

namespace starsift::daemon {

struct ClipRecorderSettings {
  std::string pipeline;
  NightLayout layout;
  FitsPipelineInfo fits_info;  // the cube's header
  ClipsOutput clips;
  std::string encoder_launch;  // the H.264 encoder, a key frame every second
};

class ClipRecorder {
 public:
  // Starts the encoder on `feed`'s frames. Throws Error when it cannot.
  ClipRecorder(ClipRecorderSettings settings, std::shared_ptr<ViewFeed> feed,
               ClipCounters& counters);
  ~ClipRecorder();  // an open clip is finished with what it has; waits for the writers
  ClipRecorder(const ClipRecorder&) = delete;
  ClipRecorder& operator=(const ClipRecorder&) = delete;

  const ClipRecorderSettings& settings() const noexcept { return settings_; }
  const std::shared_ptr<ViewFeed>& feed() const noexcept { return feed_; }
  // True when the clips want the raw frames too (a FITS cube).
  bool wants_raw() const noexcept { return settings_.clips.fits; }
  // A raw frame from the frames branch (copied, into memory recycled from older frames).
  void on_raw(ConstImageView image, std::uint64_t frame, std::int64_t utc_us);
  // The chain's output of one frame: may open or extend a clip.
  void on_frame(std::uint64_t frame, std::int64_t utc_us, std::span<const DetectedObject> objects,
                std::span<const Track> movers);

 private:
  struct Coded {
    GstSample* sample = nullptr;  // referenced
    std::int64_t utc_us = 0;
    bool key = false;
  };
  static GstFlowReturn on_coded(GstElement* sink, gpointer self);
  static GstBusSyncReply on_bus(GstBus* bus, GstMessage* message, gpointer self);
  void take(GstSample* sample);
  void trim_ring();
  void open_writer();                           // from the ring, for schedule_.open()
  void close_writer(const ClipWindow& window);  // hands the writer to a finishing thread
  void open_cube(const ClipEvent& event);       // the raw ring's frames around the event
  void reap_finished();

  const ClipRecorderSettings settings_;
  std::shared_ptr<ViewFeed> feed_;
  ClipCounters& counters_;
  GstElement* pipeline_ = nullptr;
  GstElement* appsrc_ = nullptr;

  std::mutex mutex_;
  ClipEventDetector detector_;
  ClipSchedule schedule_;
  std::vector<ClipEvent> events_;  // reused: one frame's events
  std::deque<Coded> ring_;
  std::unique_ptr<ClipWriter> writer_;  // the open clip's

  // Raw frames (only with clips.fits): the latest ones, and the open clip's cube.
  std::deque<std::shared_ptr<FrameCopy>> raw_ring_;
  std::vector<std::shared_ptr<FrameCopy>> cube_;
  bool cube_open_ = false;

  struct Finishing {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Finishing> finishing_;
};

}  // namespace starsift::daemon
