// SPDX-License-Identifier: LGPL-2.1-or-later
// One live view sent on to a consumer that needs no server: H.264 over RTP to a UDP address
// (`outputs.rtp`), or raw GRAY8 frames through GStreamer's shared memory (`outputs.shm`,
// shmsink). Each sender is a small GstPipeline of its own,
//   appsrc (the view's frames) ! videoconvert ! I420 ! H.264 encoder ! rtph264pay ! udpsink
//   appsrc (the view's frames) ! shmsink
// attached to the view's feed for as long as it lives, so the view is rendered all the time
// (a UDP destination or a shared memory socket has no clients to wait for).
//
// Never in the pipeline's way: the appsrc is leaky (two frames at most, the oldest dropped,
// counted by the feed), so an encoder that is behind, or a shm consumer that holds every
// buffer of the area, costs frames of this sender only. Its bus errors are logged with the
// pipeline's name and counted; a sender that failed is made again by its owner.
#pragma once

#include <gst/gst.h>
#include <spdlog/logger.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>

#include "daemon/config/daemon_config.hpp"
#include "daemon/stream/view_feed.hpp"

namespace starsift::daemon {

struct ViewSenderCounts {
  std::uint64_t frames = 0;  // frames that entered the sender's pipeline
  std::uint64_t errors = 0;  // errors its pipeline posted
};

class ViewSender {
 public:
  // H.264 over RTP/UDP to output.host:output.port. `encoder_launch` is the encoder's
  // gst-launch text (pipeline_plan's h264_encoder); an SDP file describing the stream is
  // written at `sdp_path`. Throws Error naming what failed.
  static std::unique_ptr<ViewSender> rtp(const std::string& pipeline, const RtpOutput& output,
                                         const std::string& encoder_launch,
                                         const std::filesystem::path& sdp_path,
                                         std::shared_ptr<ViewFeed> feed,
                                         std::shared_ptr<spdlog::logger> log);
  // The view's GRAY8 frames through shmsink at output.socket_path; the caps a consumer's
  // shmsrc needs are logged when the first frame comes. A socket left by a process that
  // ended is replaced; one another process serves is refused. Throws Error naming what failed.
  static std::unique_ptr<ViewSender> shm(const std::string& pipeline, const ShmOutput& output,
                                         std::shared_ptr<ViewFeed> feed,
                                         std::shared_ptr<spdlog::logger> log);

  ~ViewSender();  // detached from the feed, stopped
  ViewSender(const ViewSender&) = delete;
  ViewSender& operator=(const ViewSender&) = delete;

  const std::string& output() const noexcept { return output_; }  // "rtp", "shm"
  const std::shared_ptr<ViewFeed>& feed() const noexcept { return feed_; }
  // Its pipeline posted an error: it sends nothing more until made again.
  bool failed() const noexcept { return errors_.load() > 0; }
  ViewSenderCounts counts() const noexcept { return {frames_.load(), errors_.load()}; }

 private:
  ViewSender(std::string pipeline, std::string output, std::shared_ptr<ViewFeed> feed,
             std::shared_ptr<spdlog::logger> log);
  // Parses `launch` (its first element the appsrc "frames"), plays it and attaches it to the
  // feed; throws Error with the pipeline's first error when it cannot play.
  void start(const std::string& launch);
  static GstBusSyncReply on_bus(GstBus* bus, GstMessage* message, gpointer self);
  static GstPadProbeReturn on_shm_caps(GstPad* pad, GstPadProbeInfo* info, gpointer self);

  const std::string pipeline_;
  const std::string output_;
  const std::shared_ptr<ViewFeed> feed_;
  const std::shared_ptr<spdlog::logger> log_;
  GstElement* bin_ = nullptr;
  GstElement* appsrc_ = nullptr;  // attached to feed_ while playing
  std::atomic<std::uint64_t> frames_{0};
  std::atomic<std::uint64_t> errors_{0};
  std::atomic<std::uint64_t> warnings_{0};
  std::mutex mutex_;
  std::string first_error_;  // for start()'s exception
};

// The SDP text describing RTP/H.264 (payload type 96) sent to `host`:`port`; a multicast IPv4
// group carries its TTL. `name` is the session's name.
std::string rtp_sdp(const std::string& name, const std::string& host, int port, int ttl);

}  // namespace starsift::daemon
