// SPDX-License-Identifier: LGPL-2.1-or-later
#include "support/rtsp_view_client.hpp"

#include <gst/app/gstappsink.h>
#include <gst/video/video.h>

#include <cstring>
#include <stdexcept>

namespace starsift::test {

RtspViewClient::RtspViewClient(const std::string& url, const std::string& user,
                               const std::string& password) {
  if (!gst_is_initialized()) gst_init(nullptr, nullptr);
  std::string launch = "rtspsrc name=src latency=0 protocols=tcp location=\"" + url + "\"";
  if (!user.empty()) launch += " user-id=\"" + user + "\" user-pw=\"" + password + "\"";
  launch +=
      " ! rtph264depay ! avdec_h264 max-threads=1 ! videoconvert ! video/x-raw,format=GRAY8 ! "
      "appsink name=out sync=false max-buffers=8 drop=false";
  start(launch);
}

RtspViewClient::RtspViewClient(const Launch& launch) {
  if (!gst_is_initialized()) gst_init(nullptr, nullptr);
  start(launch.text);
}

void RtspViewClient::start(const std::string& launch) {
  GError* error = nullptr;
  pipeline_ = gst_parse_launch(launch.c_str(), &error);
  if (pipeline_ == nullptr) {
    const std::string why = error != nullptr ? error->message : "unknown";
    g_clear_error(&error);
    throw std::runtime_error("view client: " + why);
  }
  g_clear_error(&error);
  sink_ = gst_bin_get_by_name(GST_BIN(pipeline_), "out");
  gst_element_set_state(pipeline_, GST_STATE_PLAYING);
}

RtspViewClient::~RtspViewClient() {
  gst_element_set_state(pipeline_, GST_STATE_NULL);
  gst_object_unref(sink_);
  gst_object_unref(pipeline_);
}

void RtspViewClient::drain_bus() {
  GstBus* bus = gst_element_get_bus(pipeline_);
  while (GstMessage* m = gst_bus_pop_filtered(
             bus, static_cast<GstMessageType>(GST_MESSAGE_ERROR | GST_MESSAGE_EOS))) {
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_EOS) {
      eos_ = true;
    } else if (error_.empty()) {
      GError* e = nullptr;
      gst_message_parse_error(m, &e, nullptr);
      error_ = std::string(GST_MESSAGE_SRC_NAME(m)) + ": " + (e != nullptr ? e->message : "?");
      g_clear_error(&e);
    }
    gst_message_unref(m);
  }
  gst_object_unref(bus);
}

std::optional<DecodedPicture> RtspViewClient::next(std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    drain_bus();
    if (!error_.empty() || eos_) return std::nullopt;
    GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink_), 50 * GST_MSECOND);
    if (sample != nullptr) {
      DecodedPicture picture;
      picture.decoded_utc_us = g_get_real_time();
      GstVideoInfo info;
      GstVideoFrame frame;
      const bool ok =
          gst_video_info_from_caps(&info, gst_sample_get_caps(sample)) &&
          gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample), GST_MAP_READ);
      if (ok) {
        picture.width = GST_VIDEO_FRAME_WIDTH(&frame);
        picture.height = GST_VIDEO_FRAME_HEIGHT(&frame);
        picture.luma.resize(static_cast<std::size_t>(picture.width) * picture.height);
        const auto* data = static_cast<const std::uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0));
        const int stride = GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0);
        for (int y = 0; y < picture.height; ++y) {
          std::memcpy(picture.luma.data() + static_cast<std::size_t>(y) * picture.width,
                      data + static_cast<std::ptrdiff_t>(y) * stride, picture.width);
        }
        gst_video_frame_unmap(&frame);
      }
      gst_sample_unref(sample);
      if (ok) return picture;
    }
    if (std::chrono::steady_clock::now() >= end) return std::nullopt;
  }
}

std::string RtspViewClient::error() {
  drain_bus();
  return error_;
}

bool RtspViewClient::ended() {
  drain_bus();
  return eos_;
}

}  // namespace starsift::test
