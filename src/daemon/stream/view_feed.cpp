// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/stream/view_feed.hpp"

#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

namespace starsift::daemon {

namespace {

constexpr guint kPoolMinBuffers = 4;  // one being written, two queued in the appsrc, one sent

// Marks an appsrc that already stamps its frames (an appsrc may be attached again).
constexpr const char* kStampedKey = "starsift-view-stamped";

// A frame's timestamp is the running time at which it leaves its appsrc. appsrc's own
// do-timestamp stamps when the frame is pushed, and a frame pushed while the media's
// pipeline goes to PLAYING (the clock already given, the base time not yet) gets the
// clock's absolute time: hours ahead, so the media's sink waits hours and its client sees
// nothing. A live appsrc lets frames go only in PLAYING, when the base time is set.
GstPadProbeReturn stamp_running_time(GstPad* pad, GstPadProbeInfo* info, gpointer) {
  GstElement* appsrc = GST_PAD_PARENT(pad);
  GstClock* clock = appsrc != nullptr ? gst_element_get_clock(appsrc) : nullptr;
  if (clock == nullptr) return GST_PAD_PROBE_OK;
  const GstClockTime now = gst_clock_get_time(clock);
  gst_object_unref(clock);
  const GstClockTime base = gst_element_get_base_time(appsrc);
  GstBuffer* frame = gst_buffer_make_writable(gst_pad_probe_info_get_buffer(info));
  GST_BUFFER_PTS(frame) = GST_BUFFER_DTS(frame) = now >= base ? now - base : 0;
  GST_PAD_PROBE_INFO_DATA(info) = frame;
  return GST_PAD_PROBE_OK;
}

void stamp_when_leaving(GstElement* appsrc) {
  if (g_object_get_data(G_OBJECT(appsrc), kStampedKey) != nullptr) return;
  GstPad* pad = gst_element_get_static_pad(appsrc, "src");
  if (pad == nullptr) return;
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, stamp_running_time, nullptr, nullptr);
  gst_object_unref(pad);
  g_object_set_data(G_OBJECT(appsrc), kStampedKey, GINT_TO_POINTER(1));
}

}  // namespace

ViewFeed::ViewFeed(std::string pipeline, StreamView view, double fps)
    : pipeline_(std::move(pipeline)), view_(view), fps_(fps) {}

ViewFeed::~ViewFeed() {
  end();
  std::lock_guard lock(mutex_);
  if (pool_ != nullptr) {
    gst_buffer_pool_set_active(pool_, FALSE);
    gst_object_unref(pool_);
  }
  if (caps_ != nullptr) gst_caps_unref(caps_);
}

bool ViewFeed::ensure_pool(int width, int height) {
  if (pool_ != nullptr && width == width_ && height == height_) return true;
  if (pool_ != nullptr) {
    gst_buffer_pool_set_active(pool_, FALSE);
    gst_object_unref(pool_);
    pool_ = nullptr;
  }
  if (caps_ != nullptr) gst_caps_unref(caps_);
  // The nominal rate, or 0/1 (variable) when the source does not name one: the encoder then
  // goes by the timestamps.
  int fps_n = 0, fps_d = 1;
  if (fps_ > 0) gst_util_double_to_fraction(fps_, &fps_n, &fps_d);
  caps_ = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, "GRAY8", "width", G_TYPE_INT,
                              width, "height", G_TYPE_INT, height, "framerate", GST_TYPE_FRACTION,
                              fps_n, fps_d, nullptr);
  GstVideoInfo info;
  gst_video_info_from_caps(&info, caps_);
  pool_ = gst_video_buffer_pool_new();
  GstStructure* config = gst_buffer_pool_get_config(pool_);
  gst_buffer_pool_config_set_params(config, caps_, static_cast<guint>(GST_VIDEO_INFO_SIZE(&info)),
                                    kPoolMinBuffers, 0);
  gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config(pool_, config) || !gst_buffer_pool_set_active(pool_, TRUE)) {
    spdlog::error("{}: live view {}: no buffer pool for {}x{} frames", pipeline_, to_string(view_),
                  width, height);
    gst_object_unref(pool_);
    pool_ = nullptr;
    return false;
  }
  width_ = width;
  height_ = height;
  latest_.clear();  // of the old size
  return true;
}

GstBuffer* ViewFeed::acquire() {
  GstBuffer* frame = nullptr;
  if (gst_buffer_pool_acquire_buffer(pool_, &frame, nullptr) != GST_FLOW_OK) return nullptr;
  return frame;
}

void ViewFeed::hand_to(GstElement* appsrc, GstBuffer* frame) {
  GstCaps* current = gst_app_src_get_caps(GST_APP_SRC(appsrc));
  if (current == nullptr || !gst_caps_is_equal(current, caps_)) {
    gst_app_src_set_caps(GST_APP_SRC(appsrc), caps_);
  }
  if (current != nullptr) gst_caps_unref(current);
  // A full appsrc drops its oldest frame for this one (leaky-type=downstream).
  guint64 level = 0;
  guint max = 0;
  g_object_get(appsrc, "current-level-buffers", &level, "max-buffers", &max, nullptr);
  if (max > 0 && level >= max) dropped_.fetch_add(1, std::memory_order_relaxed);
  // Unstamped: the probe of stamp_when_leaving() stamps it with the media's running time.
  // The only reference goes, so the probe stamps it without a copy and the buffer returns
  // to the pool when sent.
  gst_app_src_push_buffer(GST_APP_SRC(appsrc), frame);
}

void ViewFeed::stamp(GstBuffer* frame, std::int64_t utc_us) {
  if (utc_us < 0) return;
  static GstStaticCaps unix_time = GST_STATIC_CAPS("timestamp/x-unix");
  GstCaps* caps = gst_static_caps_get(&unix_time);
  gst_buffer_add_reference_timestamp_meta(
      frame, caps, static_cast<GstClockTime>(utc_us) * GST_USECOND, GST_CLOCK_TIME_NONE);
  gst_caps_unref(caps);
}

void ViewFeed::push(int width, int height, std::int64_t utc_us, FillFrame fill) {
  std::lock_guard lock(mutex_);
  if (appsrcs_.empty() || width <= 0 || height <= 0) return;
  if (!ensure_pool(width, height)) return;
  GstBuffer* frame = acquire();
  if (frame == nullptr) return;
  GstVideoInfo info;
  gst_video_info_from_caps(&info, caps_);
  GstVideoFrame mapped;
  if (!gst_video_frame_map(&mapped, &info, frame, GST_MAP_WRITE)) {
    gst_buffer_unref(frame);
    return;
  }
  fill(ImageView{static_cast<std::byte*>(GST_VIDEO_FRAME_PLANE_DATA(&mapped, 0)), width, height,
                 GST_VIDEO_FRAME_PLANE_STRIDE(&mapped, 0), PixelFormat::Gray8});
  gst_video_frame_unmap(&mapped);
  // The latest picture, for a client that comes next; every further appsrc a copy of its own.
  stamp(frame, utc_us);
  latest_.resize(gst_buffer_get_size(frame));
  gst_buffer_extract(frame, 0, latest_.data(), latest_.size());
  latest_utc_us_ = utc_us;
  for (std::size_t i = 1; i < appsrcs_.size(); ++i) {
    if (GstBuffer* copy = acquire()) {
      gst_buffer_fill(copy, 0, latest_.data(), latest_.size());
      stamp(copy, utc_us);
      hand_to(appsrcs_[i], copy);
    }
  }
  hand_to(appsrcs_.front(), frame);
  frames_.fetch_add(1, std::memory_order_relaxed);
}

void ViewFeed::attach(GstElement* appsrc) {
  stamp_when_leaving(appsrc);
  std::lock_guard lock(mutex_);
  appsrcs_.push_back(GST_ELEMENT(gst_object_ref(appsrc)));
  sinks_.store(static_cast<int>(appsrcs_.size()));
  if (!latest_.empty() && pool_ != nullptr) {
    if (GstBuffer* copy = acquire()) {
      gst_buffer_fill(copy, 0, latest_.data(), latest_.size());
      stamp(copy, latest_utc_us_);
      hand_to(appsrc, copy);
    }
  }
}

void ViewFeed::detach(GstElement* appsrc) {
  std::lock_guard lock(mutex_);
  const auto it = std::find(appsrcs_.begin(), appsrcs_.end(), appsrc);
  if (it == appsrcs_.end()) return;
  gst_object_unref(*it);
  appsrcs_.erase(it);
  sinks_.store(static_cast<int>(appsrcs_.size()));
}

void ViewFeed::end() {
  std::lock_guard lock(mutex_);
  for (GstElement* appsrc : appsrcs_) {
    gst_app_src_end_of_stream(GST_APP_SRC(appsrc));
    gst_object_unref(appsrc);
  }
  appsrcs_.clear();
  sinks_.store(0);
}

ViewFeedCounts ViewFeed::counts() const {
  return {frames_.load(), dropped_.load(), sinks_.load()};
}

}  // namespace starsift::daemon
