// SPDX-License-Identifier: LGPL-2.1-or-later
#include "plugins/common/stream.hpp"

#include <cstring>
#include <string>
#include <utility>

#include "pipeline/error.hpp"
#include "plugins/common/frame_allocator.hpp"
#include "plugins/common/result_meta.hpp"

GST_DEBUG_CATEGORY_STATIC(sift_stream_debug);
#define GST_CAT_DEFAULT sift_stream_debug

namespace starsift::gst {

namespace {

GstMemory* single_memory(GstBuffer* buffer) {
  return gst_buffer_n_memory(buffer) == 1 ? gst_buffer_peek_memory(buffer, 0) : nullptr;
}

void add_counters(StreamingCounters& to, const StreamingCounters& from) {
  to.submitted += from.submitted;
  to.completed += from.completed;
  to.dropped += from.dropped;
  to.zero_copy += from.zero_copy;
  to.copied += from.copied;
  to.held_outputs += from.held_outputs;
  to.live_updates += from.live_updates;
  to.stage_replaced += from.stage_replaced;
}

}  // namespace

// A frame in flight: its output buffer, mapped while the engine may write into it, and the
// input buffer when the engine reads it in place or it is the output (a chain that keeps
// its frames: no output buffer).
struct ElementStream::Pending {
  GstBuffer* out = nullptr;
  std::unique_ptr<MappedFrame> out_map;
  GstBuffer* in = nullptr;
  std::unique_ptr<MappedFrame> in_map;

  Pending() = default;
  Pending(Pending&& o) noexcept
      : out(std::exchange(o.out, nullptr)),
        out_map(std::move(o.out_map)),
        in(std::exchange(o.in, nullptr)),
        in_map(std::move(o.in_map)) {}
  Pending& operator=(Pending&&) = delete;
  ~Pending() {
    out_map.reset();  // unmap before the unref
    in_map.reset();
    if (out != nullptr) gst_buffer_unref(out);
    if (in != nullptr) gst_buffer_unref(in);
  }
  // Hands the output buffer over (unmapped) and releases the input; without an output
  // buffer the input goes on, writable for the metas (its memory shared, not copied).
  GstBuffer* take_output() {
    out_map.reset();
    in_map.reset();
    if (out == nullptr) return gst_buffer_make_writable(std::exchange(in, nullptr));
    if (in != nullptr) gst_buffer_unref(std::exchange(in, nullptr));
    return std::exchange(out, nullptr);
  }
};

ElementStream::ElementStream(GstBaseTransform* element, int depth, PrepareOutput prepare,
                             FrameOut frame_out)
    : element_(element), depth_(depth), prepare_(prepare), frame_out_(frame_out) {
  gst_video_info_init(&in_info_);
  gst_video_info_init(&out_info_);
  snapshot_.depth = depth;
  static const bool category = [] {
    GST_DEBUG_CATEGORY_INIT(sift_stream_debug, "siftstream", 0,
                            "starsift elements: frames in flight through the engine");
    return true;
  }();
  (void)category;
}

ElementStream::~ElementStream() {
  discard();
}

GstFlowReturn ElementStream::replace_engine(std::unique_ptr<StreamingChain> engine) {
  if (shape_) engine->configure(*shape_);
  GstFlowReturn ret = GST_FLOW_OK;
  if (engine_) {
    ret = drain();
    add_counters(past_, engine_->counters());
  }
  engine_ = std::move(engine);
  publish();
  return ret;
}

void ElementStream::configure(const FrameShape& shape, const GstVideoInfo& in,
                              const GstVideoInfo& out) {
  in_info_ = in;
  out_info_ = out;
  if (shape_ == shape) return;
  shape_.reset();
  if (engine_) {
    engine_->configure(shape);  // drops (and counts) what was in flight
    pending_.clear();
  }
  shape_ = shape;
  publish();
}

GstFlowReturn ElementStream::submit(GstBuffer* buffer) {
  if (failed_) {
    gst_buffer_unref(buffer);
    return GST_FLOW_ERROR;
  }
  try {
    if (!engine_ || !shape_) throw Error("a frame before the element was configured");
    if (full()) {
      // The oldest frame could not be handed out last time: push it now.
      GstBuffer* outbuf = nullptr;
      GstFlowReturn ret = finish_oldest(&outbuf);
      if (ret == GST_FLOW_OK) ret = gst_pad_push(GST_BASE_TRANSFORM_SRC_PAD(element_), outbuf);
      if (ret != GST_FLOW_OK) {
        gst_buffer_unref(buffer);
        return ret;
      }
    }
    Pending frame;
    // A chain that keeps its frames (detection with output=input) hands the input buffer on:
    // no output buffer, nothing written or downloaded into one.
    const bool keeps = engine_->keeps_frame();
    if (!keeps) {
      // The output buffer now, from the element's pool (page-locked where a GPU is usable), so
      // the engine downloads straight into it; the input's metadata is copied over here.
      const GstFlowReturn ret = prepare_(element_, buffer, &frame.out);
      if (ret != GST_FLOW_OK || frame.out == nullptr) {
        gst_buffer_unref(buffer);
        GST_DEBUG_OBJECT(element_, "no output buffer: %s", gst_flow_get_name(ret));
        return ret != GST_FLOW_OK ? ret : GST_FLOW_ERROR;
      }
      frame.out_map = std::make_unique<MappedFrame>(out_info_, frame.out, GST_MAP_WRITE);
    }
    frame.in_map = std::make_unique<MappedFrame>(in_info_, buffer, GST_MAP_READ);
    if (!frame.in_map->ok() || (!keeps && !frame.out_map->ok())) {
      const bool in_ok = frame.in_map->ok();
      gst_buffer_unref(std::exchange(buffer, nullptr));
      throw Error(std::string("could not map the ") + (in_ok ? "output" : "input") +
                  " buffer as a video frame");
    }
    const PixelFormat in_format = shape_->format;
    const PixelFormat out_format = engine_->output_shape().format;
    // Frames from the proposed pool are page-locked and stay alive until their output leaves:
    // the engine reads them in place. Any other input is copied into the engine at submit and
    // released at once, so upstream's buffers go back to their pool (unless it is the output).
    const bool in_place = is_pinned_frame_memory(single_memory(buffer));
    const ImageView held_output = !keeps && is_pinned_frame_memory(single_memory(frame.out))
                                      ? frame.out_map->view(out_format)
                                      : ImageView{};
    engine_->submit(frame.in_map->const_view(in_format), next_tag_++,
                    in_place ? InputMemory::HeldPinned : InputMemory::Any, held_output);
    if (!in_place) frame.in_map.reset();
    if (in_place || keeps) {
      frame.in = std::exchange(buffer, nullptr);
    } else {
      gst_buffer_unref(std::exchange(buffer, nullptr));
    }
    pending_.push_back(std::move(frame));
  } catch (...) {
    if (buffer != nullptr) gst_buffer_unref(buffer);
    post_failure("filtering a frame");
    return GST_FLOW_ERROR;
  }
  publish();
  return GST_FLOW_OK;
}

GstFlowReturn ElementStream::generate(GstBuffer** out) {
  *out = nullptr;
  if (!full()) return GST_FLOW_OK;
  return finish_oldest(out);
}

// The one exit of every frame: waits for the oldest frame, copies its pixels into the output
// buffer only when the engine could not write there itself (the buffer was not page-locked),
// attaches its results and lets the element report it.
GstFlowReturn ElementStream::finish_oldest(GstBuffer** out) {
  *out = nullptr;
  if (failed_) return GST_FLOW_ERROR;
  try {
    const FinishedFrame done = engine_->wait_oldest();
    Pending& frame = pending_.front();
    if (frame.out_map) {  // else the input buffer is the output
      const ImageView to = frame.out_map->view(done.output.format);
      if (to.data != done.output.data) {
        for (int y = 0; y < to.height; ++y) {
          std::memcpy(to.row(y), done.output.row(y), done.output.row_bytes());
        }
      }
    }
    GstBuffer* buffer = frame.take_output();
    pending_.pop_front();
    // The results live in the engine's slot until pop(): copied into metas first.
    attach_results(buffer, done);
    if (frame_out_ != nullptr) frame_out_(element_, buffer, done);
    engine_->pop();
    *out = buffer;
    {
      const std::lock_guard lock(snapshot_mutex_);
      ++snapshot_.frames_out;
    }
    publish();
    return GST_FLOW_OK;
  } catch (...) {
    post_failure("filtering a frame");
    return GST_FLOW_ERROR;
  }
}

void ElementStream::attach_results(GstBuffer* buffer, const FinishedFrame& frame) {
  const std::span<const FrameResult> results = frame.results;
  bool same = result_names_.size() == results.size();
  for (std::size_t i = 0; same && i < results.size(); ++i) {
    same = results[i].stage_name == result_names_[i].first &&
           results[i].layout.kind == result_names_[i].second;
  }
  if (!same) {  // the first frame of an engine: names interned once, not per frame
    result_names_.clear();
    for (const FrameResult& r : results) {
      result_names_.emplace_back(g_intern_string(std::string(r.stage_name).c_str()),
                                 g_intern_string(std::string(r.layout.kind).c_str()));
    }
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    add_result_meta(buffer, static_cast<unsigned>(results[i].stage), result_names_[i].first,
                    result_names_[i].second, results[i].layout, results[i].view);
  }
}

void ElementStream::post_failure(const char* context) noexcept {
  if (failed_) return;
  failed_ = true;
  STARSIFT_POST_CURRENT_EXCEPTION(element_, context);
}

GstFlowReturn ElementStream::drain() {
  if (!engine_) return GST_FLOW_OK;
  GstFlowReturn ret = GST_FLOW_OK;
  while (engine_->in_flight() > 0) {
    GstBuffer* outbuf = nullptr;
    ret = finish_oldest(&outbuf);
    if (ret != GST_FLOW_OK) break;
    ret = gst_pad_push(GST_BASE_TRANSFORM_SRC_PAD(element_), outbuf);
    if (ret != GST_FLOW_OK) break;
  }
  if (ret != GST_FLOW_OK) {
    GST_DEBUG_OBJECT(element_, "draining stopped: %s", gst_flow_get_name(ret));
    discard();
  }
  return ret;
}

void ElementStream::discard() noexcept {
  if (!engine_) return;
  const int in_flight = engine_->in_flight();
  try {
    engine_->reset();
  } catch (const std::exception& e) {
    GST_WARNING_OBJECT(element_, "discarding the frames in flight: %s", e.what());
  } catch (...) {
    GST_WARNING_OBJECT(element_, "discarding the frames in flight failed");
  }
  pending_.clear();
  if (in_flight > 0) GST_DEBUG_OBJECT(element_, "dropped %d frames in flight", in_flight);
  try {
    publish();
  } catch (...) {  // out of memory copying the counters: the next publish catches up
  }
}

// Copy-assignment keeps the snapshot's vectors' memory: no allocation per frame.
void ElementStream::publish() {
  const std::lock_guard lock(snapshot_mutex_);
  if (engine_) {
    snapshot_.counters = engine_->counters();
  } else {
    snapshot_.counters = StreamingCounters{};
  }
  add_counters(snapshot_.counters, past_);
  snapshot_.in_flight = engine_ ? engine_->in_flight() : 0;
}

StreamSnapshot ElementStream::snapshot() const {
  const std::lock_guard lock(snapshot_mutex_);
  return snapshot_;
}

}  // namespace starsift::gst
