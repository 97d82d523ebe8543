// SPDX-License-Identifier: LGPL-2.1-or-later
// What siftcamsrc asks of a camera (its properties), and the camera pixel formats it takes:
// plain values, no aravis and no GStreamer, so they can be checked and tested alone.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pipeline/pixel_format.hpp"

namespace starsift::camera {

// A GenICam pixel format the chain takes as a grey frame. Mono10 and Mono12 are unpacked:
// one little-endian 16-bit sample per pixel with the value in the low bits, as Mono16 is.
struct CameraPixelFormat {
  std::string_view genicam;  // the camera's PixelFormat entry: "Mono12"
  PixelFormat format;        // how the frame reaches GStreamer: GRAY8 or GRAY16_LE
  int bit_depth;             // the real bits per sample, as the caps' bit-depth field says
};

inline constexpr CameraPixelFormat kCameraPixelFormats[] = {
    {"Mono8", PixelFormat::Gray8, 8},
    {"Mono10", PixelFormat::Gray16, 10},
    {"Mono12", PixelFormat::Gray16, 12},
    {"Mono16", PixelFormat::Gray16, 16},
};

// The entry for a GenICam name (exact, as cameras spell them), or nullptr.
const CameraPixelFormat* find_camera_pixel_format(std::string_view genicam) noexcept;

// "Mono8, Mono10, Mono12, Mono16", for messages.
std::string camera_pixel_format_names();

// The properties, copied once at start. A value left unset keeps the camera's own setting.
struct CameraSettings {
  static constexpr double kMaxExposureUs = 600.0e6;  // 10 minutes
  static constexpr double kMaxGainDb = 100.0;
  static constexpr int kMaxFps = 1000;
  static constexpr int kMinPacketSize = 576;   // the smallest datagram every IPv4 host takes
  static constexpr int kMaxPacketSize = 9000;  // jumbo frames
  static constexpr int kDefaultBuffers = 8;
  static constexpr int kMinBuffers = 2;
  static constexpr int kMaxBuffers = 256;

  std::string camera;                 // aravis's device id; empty: the first camera found
  std::optional<double> exposure_us;  // ExposureTime, microseconds
  std::optional<double> gain_db;      // Gain, dB
  int fps_n = 0;                      // AcquisitionFrameRate as a fraction; 0: the camera's
  int fps_d = 1;
  std::string pixel_format;       // a kCameraPixelFormats name; empty: the camera's
  int packet_size = 0;            // GigE Vision stream packet bytes; 0: negotiated with the camera
  int buffers = kDefaultBuffers;  // frames lent to the camera's stream at a time

  bool has_fps() const noexcept { return fps_n > 0; }
  double fps() const noexcept { return fps_d > 0 ? static_cast<double>(fps_n) / fps_d : 0.0; }

  // Throws Error naming the property, its value and what is allowed. The camera's own bounds
  // are checked when it is configured (CameraControl::configure).
  void validate() const;
};

}  // namespace starsift::camera
