// SPDX-License-Identifier: LGPL-2.1-or-later
// One event clip's video file: coded H.264 frames (already encoded by the recorder) muxed
// into Matroska, which a player reads up to its last frame even when writing was cut short.
//   appsrc ! matroskamux ! filesink
// The frames keep their spacing; their timestamps start at 0.
#pragma once

#include <gst/gst.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

namespace starsift::daemon {

class ClipWriter {
 public:
  // Starts writing `path` for frames of `caps` (video/x-h264, avc, au). Throws Error naming
  // the file when the pipeline cannot start.
  ClipWriter(std::filesystem::path path, GstCaps* caps);
  ~ClipWriter();  // stops at once (an unfinished file may lack its index)
  ClipWriter(const ClipWriter&) = delete;
  ClipWriter& operator=(const ClipWriter&) = delete;

  // One coded frame (not taken: a reference is added) and its capture time.
  void write(GstBuffer* coded, std::int64_t utc_us);
  // The end of the clip: waits at most `timeout` for the muxer to finish the file. False,
  // with why in `error`, when it did not.
  bool finish(std::chrono::milliseconds timeout, std::string* error);

  const std::filesystem::path& path() const noexcept { return path_; }
  std::uint64_t frames() const noexcept { return frames_; }
  std::int64_t first_utc_us() const noexcept { return first_utc_us_; }
  std::int64_t last_utc_us() const noexcept { return last_utc_us_; }

 private:
  std::filesystem::path path_;
  GstElement* pipeline_ = nullptr;
  GstElement* appsrc_ = nullptr;
  GstClockTime offset_ = GST_CLOCK_TIME_NONE;  // the first frame's time
  std::uint64_t frames_ = 0;
  std::int64_t first_utc_us_ = 0, last_utc_us_ = 0;
};

}  // namespace starsift::daemon
