// SPDX-License-Identifier: LGPL-2.1-or-later
// siftcamsrc's parts that need no camera: the camera's frame ids as one growing frame number
// with the frames missing in between (16-bit GigE Vision ids wrap), and the settings' checks.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "pipeline/error.hpp"
#include "plugins/camera/camera_settings.hpp"
#include "plugins/camera/frame_numbers.hpp"

using starsift::Error;
using starsift::PixelFormat;
using starsift::camera::CameraSettings;
using starsift::camera::FrameNumbers;

TEST_CASE("camera frame numbers: consecutive ids, gaps, 16-bit wraps, restarts", "[camera]") {
  FrameNumbers numbers;
  FrameNumbers::Step s = numbers.next(100);
  CHECK(s.number == 100);
  CHECK(s.missing == 0);
  s = numbers.next(101);
  CHECK(s.number == 101);
  CHECK(s.missing == 0);
  s = numbers.next(105);  // 102, 103, 104 never arrived
  CHECK(s.number == 105);
  CHECK(s.missing == 3);

  SECTION("a 16-bit id wraps from 65535 to 1: 0 is not a block id") {
    FrameNumbers wrap;
    wrap.next(65534);
    s = wrap.next(65535);
    CHECK(s.number == 65535);
    s = wrap.next(1);
    CHECK(s.number == 65536);
    CHECK(s.missing == 0);
    CHECK_FALSE(s.restarted);
    s = wrap.next(2);
    CHECK(s.number == 65537);
  }
  SECTION("frames lost across the wrap are counted") {
    FrameNumbers wrap;
    wrap.next(65530);
    s = wrap.next(3);  // 65531..65535, 1, 2 lost
    CHECK(s.missing == 7);
    CHECK(s.number == 65530 + 8);
  }
  SECTION("64-bit ids (USB3 Vision, GigE Vision 2) do not wrap at 65535") {
    FrameNumbers wide;
    wide.next(65535);
    s = wide.next(65536);
    CHECK(s.number == 65536);
    CHECK(s.missing == 0);
    s = wide.next(70000);
    CHECK(s.missing == 70000 - 65536 - 1);
  }
  SECTION("an id that goes back a little: the camera restarted, nothing known missing") {
    s = numbers.next(7);
    CHECK(s.restarted);
    CHECK(s.missing == 0);
    CHECK(s.number == 106);
    s = numbers.next(8);
    CHECK(s.number == 107);
    CHECK_FALSE(s.restarted);
  }
  SECTION("the same id twice is a restart, not a gap of 65535") {
    s = numbers.next(105);
    CHECK(s.restarted);
    CHECK(s.missing == 0);
  }
  SECTION("after reset the next id starts afresh") {
    numbers.reset();
    s = numbers.next(9);
    CHECK(s.number == 9);
    CHECK(s.missing == 0);
  }
}

TEST_CASE("camera pixel formats: GenICam names to GStreamer formats and bit depths", "[camera]") {
  const auto* mono8 = starsift::camera::find_camera_pixel_format("Mono8");
  REQUIRE(mono8 != nullptr);
  CHECK(mono8->format == PixelFormat::Gray8);
  CHECK(mono8->bit_depth == 8);
  const auto* mono12 = starsift::camera::find_camera_pixel_format("Mono12");
  REQUIRE(mono12 != nullptr);
  CHECK(mono12->format == PixelFormat::Gray16);
  CHECK(mono12->bit_depth == 12);
  CHECK(starsift::camera::find_camera_pixel_format("Mono12Packed") == nullptr);
  CHECK(starsift::camera::find_camera_pixel_format("mono8") == nullptr);  // cameras' spelling
  CHECK(starsift::camera::camera_pixel_format_names() == "Mono8, Mono10, Mono12, Mono16");
}

TEST_CASE("camera settings: each value is checked, naming the property and what is allowed",
          "[camera]") {
  CameraSettings settings;
  CHECK_NOTHROW(settings.validate());  // every value the camera's own

  auto refused = [](const CameraSettings& s) -> std::string {
    try {
      s.validate();
    } catch (const Error& e) {
      return e.what();
    }
    return "(accepted)";
  };
  CameraSettings s = settings;
  s.exposure_us = 0.0;
  CHECK_THAT(refused(s), Catch::Contains("exposure-us 0 is out of range"));
  s = settings;
  s.gain_db = 101.0;
  CHECK_THAT(refused(s), Catch::Contains("gain-db 101 is out of range; allowed: 0..100"));
  s = settings;
  s.fps_n = 2001;
  s.fps_d = 2;
  CHECK_THAT(refused(s), Catch::Contains("fps 2001/2 is out of range"));
  s.fps_n = 30000;
  s.fps_d = 1001;
  CHECK_NOTHROW(s.validate());
  s = settings;
  s.pixel_format = "Mono14";
  CHECK_THAT(refused(s), Catch::Contains("pixel-format 'Mono14' is not supported; allowed: "
                                         "Mono8, Mono10, Mono12, Mono16"));
  s = settings;
  s.packet_size = 500;
  CHECK_THAT(refused(s), Catch::Contains("576..9000"));
  s.packet_size = 9000;
  CHECK_NOTHROW(s.validate());
  s = settings;
  s.buffers = 1;
  CHECK_THAT(refused(s), Catch::Contains("camera-buffers 1 is out of range; allowed: 2..256"));
}
