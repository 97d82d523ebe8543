// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift_fake_camera: serves aravis's fake GigE Vision camera on 127.0.0.1 until SIGINT or
// SIGTERM, for tests that run the camera as a process of its own (killing it is a camera
// that vanishes). Prints "ready <id>" on stdout once it serves; exits 77 when it cannot.
//
//   starsift_fake_camera [--serial S] [--width W] [--height H] [--pixel-format Mono8|Mono16]
//                        [--fps F]

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "support/fake_camera.hpp"
#include "support/serve_until_signalled.hpp"

namespace {

int usage(const char* problem) {
  std::fprintf(stderr,
               "starsift_fake_camera: %s\n"
               "usage: starsift_fake_camera [--serial S] [--width W] [--height H] "
               "[--pixel-format Mono8|Mono16] [--fps F]\n",
               problem);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string serial = "STARSIFT";
  std::string pixel_format;
  int width = 0;
  int height = 0;
  double fps = 0.0;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) return usage(("no value after " + flag).c_str());
    const char* value = argv[++i];
    if (flag == "--serial") {
      serial = value;
    } else if (flag == "--width") {
      width = std::atoi(value);
    } else if (flag == "--height") {
      height = std::atoi(value);
    } else if (flag == "--pixel-format") {
      pixel_format = value;
      if (pixel_format != "Mono8" && pixel_format != "Mono16") {
        return usage("--pixel-format takes Mono8 or Mono16 (the fake camera's grey formats)");
      }
    } else if (flag == "--fps") {
      fps = std::atof(value);
    } else {
      return usage(("unknown option " + flag).c_str());
    }
  }
  if (width < 0 || height < 0 || width > 2048 || height > 2048 || fps < 0.0) {
    return usage("--width and --height take 1..2048, --fps a positive rate");
  }

  starsift::test::FakeGigECamera camera(serial);
  if (!camera.running()) {
    std::printf("SKIPPED: %s\n", camera.why_not().c_str());
    return 77;
  }
  if (width > 0 && height > 0) camera.set_size(width, height);
  ArvFakeCamera* fake = camera.fake();
  if (pixel_format == "Mono16") {
    arv_fake_camera_write_register(fake, ARV_FAKE_CAMERA_REGISTER_PIXEL_FORMAT,
                                   ARV_PIXEL_FORMAT_MONO_16);
  }
  if (fps > 0.0) {
    // The frame period register, in microseconds (AcquisitionFrameRate is its inverse).
    arv_fake_camera_write_register(fake, ARV_FAKE_CAMERA_REGISTER_ACQUISITION_FRAME_PERIOD_US,
                                   static_cast<guint32>(1e6 / fps));
  }
  std::printf("ready %s\n", camera.id().c_str());
  std::fflush(stdout);

  starsift::test::serve_until_signalled();
  return 0;
}
