// SPDX-License-Identifier: LGPL-2.1-or-later
// A viewer of one RTSP mount, as a person's player would be: GStreamer's rtspsrc over TCP,
// the H.264 depayloaded and decoded (avdec_h264, one thread: no frame of decoder delay), each
// picture handed over as 8-bit luma with the time it was decoded. Used by starsiftd's live
// view tests and by bench/rtsp_latency.
#pragma once

#include <gst/gst.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/image.hpp"

namespace starsift::test {

struct DecodedPicture {
  int width = 0, height = 0;
  std::vector<std::uint8_t> luma;   // width * height, rows packed
  std::int64_t decoded_utc_us = 0;  // the wall clock when it came out of the decoder
  ConstImageView view() const {
    return {reinterpret_cast<const std::byte*>(luma.data()), width, height, width,
            PixelFormat::Gray8};
  }
};

class RtspViewClient {
 public:
  // Starts playing `url`; with `user`, Basic auth with `password`.
  explicit RtspViewClient(const std::string& url, const std::string& user = {},
                          const std::string& password = {});
  // A viewer of another transport (RTP over UDP, shared memory): `launch` is its whole
  // gst-launch description, ending in GRAY8 frames into "appsink name=out".
  struct Launch {
    std::string text;
  };
  explicit RtspViewClient(const Launch& launch);
  ~RtspViewClient();  // stopped and freed
  RtspViewClient(const RtspViewClient&) = delete;
  RtspViewClient& operator=(const RtspViewClient&) = delete;

  // The next decoded picture, or nothing after `timeout`, an error or the end of the stream.
  std::optional<DecodedPicture> next(std::chrono::milliseconds timeout);
  // The first error the pipeline posted, or empty.
  std::string error();
  // True once the stream ended (EOS).
  bool ended();

 private:
  void start(const std::string& launch);
  void drain_bus();
  GstElement* pipeline_ = nullptr;
  GstElement* sink_ = nullptr;
  std::string error_;
  bool eos_ = false;
};

}  // namespace starsift::test
