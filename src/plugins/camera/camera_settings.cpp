// SPDX-License-Identifier: LGPL-2.1-or-later
#include "plugins/camera/camera_settings.hpp"

#include <cstdio>
#include <string>

#include "pipeline/error.hpp"

namespace starsift::camera {

namespace {

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

const CameraPixelFormat* find_camera_pixel_format(std::string_view genicam) noexcept {
  for (const CameraPixelFormat& f : kCameraPixelFormats) {
    if (f.genicam == genicam) return &f;
  }
  return nullptr;
}

std::string camera_pixel_format_names() {
  std::string names;
  for (const CameraPixelFormat& f : kCameraPixelFormats) {
    if (!names.empty()) names += ", ";
    names += f.genicam;
  }
  return names;
}

void CameraSettings::validate() const {
  if (exposure_us && !(*exposure_us > 0.0 && *exposure_us <= kMaxExposureUs)) {
    throw Error(
        "exposure-us " + number_text(*exposure_us) + " is out of range",
        "more than 0 and at most " + number_text(kMaxExposureUs) + " (or -1: the camera's own)");
  }
  if (gain_db && !(*gain_db >= 0.0 && *gain_db <= kMaxGainDb)) {
    throw Error("gain-db " + number_text(*gain_db) + " is out of range",
                "0.." + number_text(kMaxGainDb) + " (or -1: the camera's own)");
  }
  if (fps_n < 0 || fps_d <= 0 || (fps_n > 0 && fps() > kMaxFps)) {
    throw Error("fps " + std::to_string(fps_n) + "/" + std::to_string(fps_d) + " is out of range",
                "more than 0 and at most " + std::to_string(kMaxFps) +
                    " frames per second (or 0/1: the camera's own)");
  }
  if (!pixel_format.empty() && find_camera_pixel_format(pixel_format) == nullptr) {
    throw Error("pixel-format '" + shown_value(pixel_format) + "' is not supported",
                camera_pixel_format_names() + " (or empty: the camera's own)");
  }
  if (packet_size != 0 && (packet_size < kMinPacketSize || packet_size > kMaxPacketSize)) {
    throw Error("packet-size " + std::to_string(packet_size) + " is out of range",
                "0 (negotiated with the camera) or " + std::to_string(kMinPacketSize) + ".." +
                    std::to_string(kMaxPacketSize) + " bytes");
  }
  if (buffers < kMinBuffers || buffers > kMaxBuffers) {
    throw Error("camera-buffers " + std::to_string(buffers) + " is out of range",
                std::to_string(kMinBuffers) + ".." + std::to_string(kMaxBuffers));
  }
}

}  // namespace starsift::camera
