// SPDX-License-Identifier: LGPL-2.1-or-later
// ElementStream: the GStreamer side of an element's frames in flight through the streaming
// engine, at every depth (depth 1: one frame, handed out as soon as it is done). For each
// frame it keeps the output buffer (taken from the element's pool when the frame goes in,
// with the input's timestamps, flags and metas, and mapped so the engine can download
// straight into it) and, when the engine reads the input in place, the input buffer.
//
// Frames leave in input order through one exit (finish_oldest): there each stage's result
// becomes a GstSiftResultMeta on the output buffer and the element's FrameOut callback sees
// the buffer before it goes downstream. Streaming thread only, except snapshot().
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/pixel_format.hpp"
#include "plugins/common/video.hpp"

namespace starsift::gst {

// What an element reports of its stream, copied out under a lock for any thread.
struct StreamSnapshot {
  StreamingCounters counters;  // of every engine since start (replaced ones included)
  int depth = 1;
  int in_flight = 0;
  guint64 frames_out = 0;  // frames handed downstream
};

class ElementStream {
 public:
  // `prepare` is GstBaseTransform's prepare_output_buffer (a buffer from the decided pool
  // with the input's metadata copied). `frame_out`, when given, sees every frame's output
  // buffer (writable, its result metas attached) and the engine's results just before the
  // buffer leaves.
  using PrepareOutput = GstFlowReturn (*)(GstBaseTransform*, GstBuffer*, GstBuffer**);
  using FrameOut = void (*)(GstBaseTransform*, GstBuffer*, const FinishedFrame&);
  ElementStream(GstBaseTransform* element, int depth, PrepareOutput prepare, FrameOut frame_out);
  ~ElementStream();
  ElementStream(const ElementStream&) = delete;
  ElementStream& operator=(const ElementStream&) = delete;

  int depth() const noexcept { return depth_; }
  bool has_engine() const noexcept { return engine_ != nullptr; }
  StreamingChain* engine() noexcept { return engine_.get(); }
  bool full() const noexcept { return engine_ && engine_->in_flight() == engine_->depth(); }
  int in_flight() const noexcept { return engine_ ? engine_->in_flight() : 0; }
  // The caps the frames are read and written with, once configured.
  bool configured() const noexcept { return shape_.has_value(); }

  // Replaces the engine (configured for the current caps when there are any). The old
  // engine's frames in flight are pushed downstream first; returns that push's flow. Throws
  // starsift::Error, leaving the running engine in place.
  GstFlowReturn replace_engine(std::unique_ptr<StreamingChain> engine);
  // New caps: frames of `shape` read with `in`, results written with `out`. The same shape
  // keeps the frames in flight; another drops them (counted). Throws starsift::Error.
  void configure(const FrameShape& shape, const GstVideoInfo& in, const GstVideoInfo& out);

  // Takes `buffer` (owned) into the engine; when all slots are busy the oldest frame is
  // pushed downstream first. Posts element errors itself.
  GstFlowReturn submit(GstBuffer* buffer);
  // The oldest frame's output buffer once `depth` frames are in flight; else *out = NULL.
  GstFlowReturn generate(GstBuffer** out);
  // Pushes every frame in flight downstream, oldest first; on a failed push the rest are
  // discarded (counted). Returns the flow.
  GstFlowReturn drain();
  // Drops every frame in flight (counted). Never throws.
  void discard() noexcept;

  // Posts the exception being handled as the element's error, once: after a failure the
  // stream is broken and later failures (the frames behind it, a drain) only return
  // GST_FLOW_ERROR, until recover(). Call only inside a catch block.
  void post_failure(const char* context) noexcept;
  // A flush or a new start: failures are posted again.
  void recover() noexcept { failed_ = false; }

  StreamSnapshot snapshot() const;

 private:
  struct Pending;
  GstFlowReturn finish_oldest(GstBuffer** out);
  void attach_results(GstBuffer* buffer, const FinishedFrame& frame);
  void publish();

  GstBaseTransform* element_;
  int depth_;
  PrepareOutput prepare_;
  FrameOut frame_out_;
  std::unique_ptr<StreamingChain> engine_;
  std::optional<FrameShape> shape_;  // what engine_ is configured for
  GstVideoInfo in_info_;
  GstVideoInfo out_info_;
  std::deque<Pending> pending_;
  std::uint64_t next_tag_ = 0;
  StreamingCounters past_;  // of the engines already replaced
  bool failed_ = false;
  // Interned stage names and kinds of the results, by position (rebuilt when they change).
  std::vector<std::pair<const gchar*, const gchar*>> result_names_;

  mutable std::mutex snapshot_mutex_;
  StreamSnapshot snapshot_;
};

}  // namespace starsift::gst
