// SPDX-License-Identifier: LGPL-2.1-or-later
// One live view's frames on their way to whoever watches: the RTSP mount's shared media (its
// appsrc), attached while at least one client watches and detached when the last one goes.
// The pipeline renders a frame only while watched() — nobody watching costs nothing but the
// branch's queue — into a buffer of the feed's own pool (no allocation per frame), and every
// attached appsrc gets a reference to it. The latest frame is kept, so a client that comes
// gets a picture at once even from a pipeline that is restarting.
//
// Appsrcs are leaky (two frames at most, the oldest dropped): a slow encoder or client never
// makes the pipeline wait. A frame an appsrc had to drop is counted.
#pragma once

#include <gst/gst.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "daemon/config/daemon_config.hpp"
#include "pipeline/image.hpp"

namespace starsift::daemon {

// What push() calls to write a frame: a callable referred to, not owned or copied, so a
// frame's lambda (however much it captures) costs no allocation, as a std::function would.
class FillFrame {
 public:
  template <class F>
  FillFrame(F& fill)  // NOLINT(google-explicit-constructor): a lambda passes as it is
      : object_(&fill), call_([](void* f, ImageView out) { (*static_cast<F*>(f))(out); }) {}
  void operator()(ImageView out) const { call_(object_, out); }

 private:
  void* object_;
  void (*call_)(void*, ImageView);
};

struct ViewFeedCounts {
  std::uint64_t frames = 0;   // frames handed to at least one appsrc
  std::uint64_t dropped = 0;  // frames an appsrc dropped (its encoder behind)
  int sinks = 0;              // appsrcs attached now (media being watched)
};

class ViewFeed {
 public:
  ViewFeed(std::string pipeline, StreamView view, double fps);
  ~ViewFeed();  // ends every attached appsrc (EOS)
  ViewFeed(const ViewFeed&) = delete;
  ViewFeed& operator=(const ViewFeed&) = delete;

  const std::string& pipeline() const noexcept { return pipeline_; }
  StreamView view() const noexcept { return view_; }

  // True while an appsrc is attached: render and push() only then.
  bool watched() const noexcept { return sinks_.load(std::memory_order_relaxed) > 0; }
  // A GRAY8 frame of `width` x `height`, written by `fill` into a buffer of the feed's pool
  // and handed to every attached appsrc, with the frame's UTC (`utc_us`, µs; -1: not known)
  // as a "timestamp/x-unix" reference timestamp meta, which encoders carry over to the
  // coded frame. One streaming thread calls it.
  void push(int width, int height, std::int64_t utc_us, FillFrame fill);

  // The mount's media was made (a first client) or is gone (the last client left). `appsrc`
  // is referenced while attached; attach() hands it the latest frame at once. Its frames
  // are stamped with the running time at which they leave it (its do-timestamp left off).
  void attach(GstElement* appsrc);
  void detach(GstElement* appsrc);
  // Every attached appsrc gets EOS (the view is no longer served) and is let go.
  void end();

  ViewFeedCounts counts() const;

 private:
  bool ensure_pool(int width, int height);
  GstBuffer* acquire();  // from the pool; nullptr when it has none
  static void stamp(GstBuffer* frame, std::int64_t utc_us);
  // Pushes `frame` (its only reference, taken) into `appsrc`.
  void hand_to(GstElement* appsrc, GstBuffer* frame);

  const std::string pipeline_;
  const StreamView view_;
  const double fps_;

  mutable std::mutex mutex_;
  std::vector<GstElement*> appsrcs_;  // referenced
  GstCaps* caps_ = nullptr;           // of the current pool's frames
  GstBufferPool* pool_ = nullptr;
  std::vector<std::uint8_t> latest_;  // the latest frame's bytes (the pool's layout)
  std::int64_t latest_utc_us_ = -1;
  int width_ = 0, height_ = 0;
  std::atomic<int> sinks_{0};
  std::atomic<std::uint64_t> frames_{0};
  std::atomic<std::uint64_t> dropped_{0};
};

}  // namespace starsift::daemon
