// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/clips/clip_writer.hpp"

#include <gst/app/gstappsrc.h>

#include "pipeline/error.hpp"

namespace starsift::daemon {

ClipWriter::ClipWriter(std::filesystem::path path, GstCaps* caps) : path_(std::move(path)) {
  pipeline_ = gst_pipeline_new("clip");
  appsrc_ = gst_element_factory_make("appsrc", "coded");
  GstElement* mux = gst_element_factory_make("matroskamux", nullptr);
  GstElement* sink = gst_element_factory_make("filesink", nullptr);
  if (appsrc_ == nullptr || mux == nullptr || sink == nullptr) {
    for (GstElement* e : {appsrc_, mux, sink}) {
      if (e != nullptr) gst_object_unref(e);
    }
    gst_object_unref(pipeline_);
    throw Error("event clip: no appsrc, matroskamux or filesink",
                "Debian packages gstreamer1.0-plugins-base and -good");
  }
  // Not live, and never blocking: the recorder hands over the ring's frames at once.
  g_object_set(appsrc_, "caps", caps, "format", GST_FORMAT_TIME, "is-live", FALSE, "block", FALSE,
               "max-bytes", static_cast<guint64>(0), nullptr);
  g_object_set(sink, "location", path_.c_str(), "sync", FALSE, "async", FALSE, nullptr);
  gst_bin_add_many(GST_BIN(pipeline_), appsrc_, mux, sink, nullptr);
  gst_object_ref(appsrc_);
  if (!gst_element_link_many(appsrc_, mux, sink, nullptr) ||
      gst_element_set_state(pipeline_, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    gst_element_set_state(pipeline_, GST_STATE_NULL);
    gst_object_unref(appsrc_);
    gst_object_unref(pipeline_);
    throw Error("event clip " + path_.string() + ": the muxer does not start",
                "a writable directory and H.264 frames");
  }
}

ClipWriter::~ClipWriter() {
  gst_element_set_state(pipeline_, GST_STATE_NULL);
  gst_object_unref(appsrc_);
  gst_object_unref(pipeline_);
}

void ClipWriter::write(GstBuffer* coded, std::int64_t utc_us) {
  GstBuffer* buffer = gst_buffer_copy(coded);  // the memory shared; its own timestamps
  const GstClockTime dts = GST_BUFFER_DTS_OR_PTS(buffer);
  if (offset_ == GST_CLOCK_TIME_NONE) {
    offset_ = GST_CLOCK_TIME_IS_VALID(dts) ? dts : 0;
    first_utc_us_ = utc_us;
  }
  const auto rebase = [this](GstClockTime t) {
    return GST_CLOCK_TIME_IS_VALID(t) && t >= offset_ ? t - offset_ : GST_CLOCK_TIME_NONE;
  };
  GST_BUFFER_PTS(buffer) = rebase(GST_BUFFER_PTS(buffer));
  GST_BUFFER_DTS(buffer) = rebase(GST_BUFFER_DTS(buffer));
  gst_app_src_push_buffer(GST_APP_SRC(appsrc_), buffer);
  ++frames_;
  last_utc_us_ = utc_us;
}

bool ClipWriter::finish(std::chrono::milliseconds timeout, std::string* error) {
  gst_app_src_end_of_stream(GST_APP_SRC(appsrc_));
  GstBus* bus = gst_element_get_bus(pipeline_);
  GstMessage* message =
      gst_bus_timed_pop_filtered(bus, static_cast<GstClockTime>(timeout.count()) * GST_MSECOND,
                                 static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  gst_object_unref(bus);
  bool ok = message != nullptr && GST_MESSAGE_TYPE(message) == GST_MESSAGE_EOS;
  if (!ok && error != nullptr) {
    *error = "the muxer did not finish in time";
    if (message != nullptr) {
      GError* e = nullptr;
      gst_message_parse_error(message, &e, nullptr);
      *error =
          std::string(GST_MESSAGE_SRC_NAME(message)) + ": " + (e != nullptr ? e->message : "?");
      g_clear_error(&e);
    }
  }
  if (message != nullptr) gst_message_unref(message);
  gst_element_set_state(pipeline_, GST_STATE_NULL);
  return ok;
}

}  // namespace starsift::daemon
