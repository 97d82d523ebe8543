// SPDX-License-Identifier: LGPL-2.1-or-later
// A GigE Vision or USB3 Vision camera through aravis, GenICam side only: opening it by id,
// setting what CameraSettings asks within the camera's own bounds (read from its features),
// reading back what it will send, starting and stopping acquisition, and noticing when it
// stops answering. Knows nothing of GStreamer.
#pragma once

#include <arv.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plugins/camera/camera_settings.hpp"

namespace starsift::camera {

// The camera once configured: what its frames will be, and what it was set to, read back.
struct CameraMode {
  std::string id;           // aravis's device id of the camera opened
  std::string description;  // "Aravis Fake (serial TEST01, GigEVision at 127.0.0.1)"
  int width = 0;
  int height = 0;
  CameraPixelFormat pixel{};
  std::size_t row_bytes = 0;  // width * bytes per pixel: the camera packs its rows
  std::size_t payload = 0;    // bytes the camera sends per frame, at least row_bytes * height
  double fps = 0.0;           // AcquisitionFrameRate; 0 when the camera has none
  std::optional<double> exposure_us;  // ExposureTime, when the camera has it
  std::optional<double> gain_db;      // Gain, when the camera has it
  int packet_size = 0;                // GigE Vision stream packet bytes; 0 for USB3 Vision
  bool gige = false;
  std::vector<std::string> warnings;  // values the camera took other than asked (rounded)
};

class CameraControl {
 public:
  // Opens camera `id` as aravis lists it (arv-tool-0.8), empty: the first camera found.
  // Throws Error naming the id and the cameras that were found.
  explicit CameraControl(const std::string& id);
  // Stops acquisition (unless the camera was lost) and releases the camera. Releasing a lost
  // camera waits for aravis's register timeouts (seconds): do it off the streaming thread.
  ~CameraControl();
  CameraControl(const CameraControl&) = delete;
  CameraControl& operator=(const CameraControl&) = delete;

  // Applies `settings` (validated) in the order their bounds depend on each other: pixel
  // format, packet size, exposure, frame rate, gain. Throws Error naming the camera, the
  // property, the value and the camera's range.
  CameraMode configure(const CameraSettings& settings);

  void start_acquisition();
  void stop_acquisition() noexcept;

  ArvCamera* camera() const noexcept { return camera_; }
  // True once aravis lost control of the camera (unplugged, powered off, network down).
  bool lost() const noexcept { return lost_->load(); }
  // The camera as messages name it: its id.
  const std::string& name() const noexcept { return name_; }

  // The cameras aravis finds now, one "id (protocol at address)" each.
  static std::vector<std::string> list_cameras();

 private:
  ArvCamera* camera_ = nullptr;
  std::string name_;
  std::shared_ptr<std::atomic<bool>> lost_ = std::make_shared<std::atomic<bool>>(false);
  gulong lost_handler_ = 0;
  bool acquiring_ = false;
};

}  // namespace starsift::camera
