// SPDX-License-Identifier: LGPL-2.1-or-later
// A fake GigE Vision camera for tests: aravis's own ArvGvFakeCamera, serving GVCP and GVSP
// over UDP on the loopback interface (127.0.0.1), so a client finds, configures and streams
// from it as from a real camera. Its frames hold aravis's diagonal ramp (fake_camera_pixel).
// One fake camera per host at a time: it takes GVCP's port 3956 on 127.0.0.1.
#pragma once

#include <arv.h>

#include <cstdint>
#include <string>

namespace starsift::test {

class FakeGigECamera {
 public:
  // Starts serving a camera with serial number `serial` (aravis's id: "Aravis-Fake-<serial>").
  explicit FakeGigECamera(const std::string& serial = "STARSIFT");
  // Stops serving, if it still does.
  ~FakeGigECamera();
  FakeGigECamera(const FakeGigECamera&) = delete;
  FakeGigECamera& operator=(const FakeGigECamera&) = delete;

  // False when it could not serve (no loopback interface, GVCP's port taken, another camera
  // answering on 127.0.0.1); why_not() says.
  bool running() const;
  std::string why_not() const;

  // The id a client opens it by, as arv-tool-0.8 lists it.
  const std::string& id() const { return id_; }

  // The image size it sends (its Width and Height registers; the sensor is 2048x2048).
  void set_size(int width, int height);

  // The camera disappears: it stops answering and streaming, as when unplugged.
  void vanish();

  // The camera behind the network side: registers, fill pattern. Null once vanished.
  ArvFakeCamera* fake() const;

 private:
  ArvGvFakeCamera* server_ = nullptr;
  std::string id_;
  std::string busy_;  // the camera that answered on 127.0.0.1 before this one could serve
};

// Pixel (x, y) of the frame with id `frame_id` as aravis's fake camera fills it (Mono8 when
// `sixteen_bit` is false, else Mono16), with its gain register `gain_raw` and its exposure
// `exposure_us`: a diagonal ramp that moves by one step per frame, scaled by
// 1 + gain + log10(exposure / 10 ms) and clamped.
std::uint16_t fake_camera_pixel(int x, int y, std::uint64_t frame_id, bool sixteen_bit,
                                int gain_raw = 0, double exposure_us = 10000.0);

}  // namespace starsift::test
