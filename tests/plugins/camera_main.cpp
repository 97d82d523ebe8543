// SPDX-License-Identifier: LGPL-2.1-or-later
// Entry point of siftcamsrc's tests: they need aravis's fake GigE Vision camera on the loopback
// interface, in a network namespace of their own where the process may have one (so no other
// program's fake camera answers in their place). Where the camera cannot serve, says why and
// exits 77, which ctest reports as "Skipped".
#define CATCH_CONFIG_RUNNER
#include <gst/gst.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "support/fake_camera.hpp"
#include "support/fake_camera_network.hpp"

int main(int argc, char** argv) {
  // Before gst_init: GStreamer's and aravis's threads must start inside the namespace.
  const std::string network = starsift::test::isolate_loopback();
  std::printf("fake cameras on %s\n", network.c_str());
  gst_init(nullptr, nullptr);
  {
    const starsift::test::FakeGigECamera probe("PROBE");
    if (!probe.running()) {
      std::printf("SKIPPED: siftcamsrc tests need a fake camera: %s\n", probe.why_not().c_str());
      return 77;
    }
  }
  return Catch::Session().run(argc, argv);
}
