// ElementStream: the GStreamer side of an element's frames in flight through the streaming
// engine (depth >= 2). For each frame it keeps the output buffer (taken from the element's
// pool when the frame goes in, with the input's timestamps, flags and metas, and mapped so the
// engine can download straight into it) and, when the engine reads the input in place, the
// input buffer. Frames leave in input order. Streaming thread only, except snapshot().
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <deque>
#include <memory>
#include <mutex>
#include <optional>

#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/pixel_format.hpp"
#include "plugins/common/video.hpp"

namespace starsift::gst {

// What an element reports of its stream, copied out under a lock for any thread.
struct StreamSnapshot {
  StreamingCounters counters;  // of every engine since start (replaced ones included)
  int depth = 1;
  int in_flight = 0;
  guint64 frames_out = 0;  // frames handed downstream through the engine
};

class ElementStream {
 public:
  // `prepare` is GstBaseTransform's prepare_output_buffer (a buffer from the decided pool
  // with the input's metadata copied).
  using PrepareOutput = GstFlowReturn (*)(GstBaseTransform*, GstBuffer*, GstBuffer**);
  ElementStream(GstBaseTransform* element, int depth, PrepareOutput prepare);
  ~ElementStream();
  ElementStream(const ElementStream&) = delete;
  ElementStream& operator=(const ElementStream&) = delete;

  int depth() const noexcept { return depth_; }
  bool has_engine() const noexcept { return engine_ != nullptr; }
  bool full() const noexcept { return engine_ && engine_->in_flight() == engine_->depth(); }
  int in_flight() const noexcept { return engine_ ? engine_->in_flight() : 0; }

  // Replaces the engine (configured for `shape` when given). The old engine's frames in flight
  // are pushed downstream first; returns that push's flow. Throws starsift::Error.
  GstFlowReturn replace_engine(std::unique_ptr<StreamingChain> engine, const FrameShape* shape);
  // New caps. The same shape keeps the frames in flight; another drops them (counted).
  void configure(const FrameShape& shape);

  // Takes `buffer` (owned) into the engine; when all slots are busy the oldest frame is
  // pushed downstream first. Posts element errors itself. The frames' pixels are read with
  // `info` as `format`.
  GstFlowReturn submit(GstBuffer* buffer, const GstVideoInfo& info, PixelFormat format);
  // The oldest frame's output buffer once `depth` frames are in flight; else *out = NULL.
  GstFlowReturn generate(GstBuffer** out);
  // Pushes every frame in flight downstream, oldest first; on a failed push the rest are
  // discarded (counted). Returns the flow.
  GstFlowReturn drain();
  // Drops every frame in flight (counted). Never throws.
  void discard() noexcept;

  StreamSnapshot snapshot() const;

 private:
  struct Pending;
  GstFlowReturn finish_oldest(GstBuffer** out);
  void publish();

  GstBaseTransform* element_;
  int depth_;
  PrepareOutput prepare_;
  std::unique_ptr<StreamingChain> engine_;
  std::optional<FrameShape> shape_;  // what engine_ is configured for
  std::deque<Pending> pending_;
  std::uint64_t next_tag_ = 0;
  StreamingCounters past_;  // of the engines already replaced

  mutable std::mutex snapshot_mutex_;
  StreamSnapshot snapshot_;
};

}  // namespace starsift::gst
