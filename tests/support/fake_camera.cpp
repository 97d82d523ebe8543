// SPDX-License-Identifier: LGPL-2.1-or-later
#include "support/fake_camera.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace starsift::test {

FakeGigECamera::FakeGigECamera(const std::string& serial) : id_("Aravis-Fake-" + serial) {
  // Two fake cameras on 127.0.0.1 both bind GVCP's port (aravis lets them share it), and
  // requests reach either: a test would talk to the other one. Serve only where none answers.
  arv_update_device_list();
  for (unsigned i = 0; i < arv_get_n_devices(); ++i) {
    const char* address = arv_get_device_address(i);
    if (address != nullptr && std::strcmp(address, "127.0.0.1") == 0) {
      const char* other = arv_get_device_id(i);
      busy_ = other != nullptr ? other : "?";
      return;
    }
  }
  server_ = arv_gv_fake_camera_new("lo", serial.c_str());
}

FakeGigECamera::~FakeGigECamera() {
  vanish();
}

bool FakeGigECamera::running() const {
  return server_ != nullptr && arv_gv_fake_camera_is_running(server_);
}

std::string FakeGigECamera::why_not() const {
  if (running()) return {};
  if (!busy_.empty()) {
    return "another GigE Vision camera already answers on 127.0.0.1 (" + busy_ +
           "), and a second one there would share its port: stop it first";
  }
  return "aravis's fake GigE Vision camera could not serve on the loopback interface (lo, "
         "127.0.0.1): no such interface, or UDP port 3956 (GVCP) is taken by another camera";
}

void FakeGigECamera::set_size(int width, int height) {
  ArvFakeCamera* camera = fake();
  if (camera == nullptr) return;
  arv_fake_camera_write_register(camera, ARV_FAKE_CAMERA_REGISTER_WIDTH,
                                 static_cast<guint32>(width));
  arv_fake_camera_write_register(camera, ARV_FAKE_CAMERA_REGISTER_HEIGHT,
                                 static_cast<guint32>(height));
}

void FakeGigECamera::vanish() {
  if (server_ != nullptr) g_object_unref(server_);  // joins its threads, closes its sockets
  server_ = nullptr;
}

ArvFakeCamera* FakeGigECamera::fake() const {
  return server_ != nullptr ? arv_gv_fake_camera_get_fake_camera(server_) : nullptr;
}

std::uint16_t fake_camera_pixel(int x, int y, std::uint64_t frame_id, bool sixteen_bit,
                                int gain_raw, double exposure_us) {
  const double scale = 1.0 + gain_raw + std::log10(exposure_us / 10000.0);
  const std::uint64_t step =
      static_cast<std::uint64_t>(x) + static_cast<std::uint64_t>(y) + frame_id;
  if (!sixteen_bit) {
    const double value = static_cast<double>(step % 255) * scale;
    return static_cast<std::uint16_t>(std::clamp(value, 0.0, 255.0));
  }
  const double value = static_cast<double>((256 * step) % 65535) * scale;
  return static_cast<std::uint16_t>(std::clamp(value, 0.0, 65535.0));
}

}  // namespace starsift::test
