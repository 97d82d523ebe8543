// SPDX-License-Identifier: LGPL-2.1-or-later
// The brightness correction's parameters: every default valid, each bad value refused with
// the parameter, the value and the allowed range in the message, the checks against the
// frames (fixed stretch against the bit depth, clahe and GRAY32F), names, the percentile rank.
#include <catch2/catch.hpp>

#include <string>

#include "pipeline/brightness/params.hpp"
#include "pipeline/error.hpp"

using namespace starsift;

namespace {

// The message `params.validate()` (or validate_for(shape)) throws, "" when it accepts them.
std::string refusal(const BrightnessParams& params, const FrameShape* shape = nullptr) {
  try {
    if (shape != nullptr) {
      params.validate_for(*shape);
    } else {
      params.validate();
    }
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void check_refused(const BrightnessParams& params, const std::string& key, const std::string& value,
                   const std::string& allowed) {
  const std::string text = refusal(params);
  INFO(text);
  CHECK(text.find("brightness " + key + " " + value + " is not allowed") != std::string::npos);
  CHECK(text.find(allowed) != std::string::npos);
}

}  // namespace

TEST_CASE("brightness defaults are valid for every format", "[brightness]") {
  const BrightnessParams params;
  CHECK(refusal(params).empty());
  CHECK(params.mode == BrightnessMode::Local);
  CHECK(params.sigma == 40.0);
  CHECK(params.strength == 1.0);
  CHECK(params.alpha == 1.0);
  CHECK(params.stretch == BrightnessStretch::None);
  for (const auto& shape :
       {FrameShape{8, 8, PixelFormat::Gray8, 8}, FrameShape{8, 8, PixelFormat::Gray16, 12},
        FrameShape{8, 8, PixelFormat::Gray32F, 32}, FrameShape{8, 8, PixelFormat::Rgba, 8},
        FrameShape{8, 8, PixelFormat::Bgrx, 8}}) {
    CHECK(refusal(params, &shape).empty());
    CHECK(brightness_supports(shape.format));
  }
}

TEST_CASE("brightness refuses each bad value, naming it and the allowed range", "[brightness]") {
  BrightnessParams p;
  p.sigma = 0.0;
  check_refused(p, "sigma", "0", "finite numbers above 0 up to 1000 px");
  p.sigma = 1001.0;
  check_refused(p, "sigma", "1001", "finite numbers above 0 up to 1000 px");
  p = {};
  p.strength = -0.5;
  check_refused(p, "strength", "-0.5", "finite numbers from 0 up to 4");
  p.strength = 4.5;
  check_refused(p, "strength", "4.5", "from 0 up to 4");
  p = {};
  p.tiles_x = 0;
  check_refused(p, "tiles-x", "0", "1..64");
  p = {};
  p.tiles_y = 65;
  check_refused(p, "tiles-y", "65", "1..64");
  p = {};
  p.clip_limit = 0.5;
  check_refused(p, "clip-limit", "0.5", "0 (no limit) or a finite number from 1 up");
  p = {};
  p.alpha = 1.5;
  check_refused(p, "alpha", "1.5", "from 0 up to 1");
  p = {};
  p.stretch_min = -1.0;
  check_refused(p, "stretch-min", "-1", "from 0 up to 65535");
  p = {};
  p.stretch_max = 70000.0;
  check_refused(p, "stretch-max", "70000", "from 0 up to 65535");
  p = {};
  p.low_percentile = 101.0;
  check_refused(p, "low-percentile", "101", "from 0 up to 100 %");
  p = {};
  p.low_percentile = 60.0;
  p.high_percentile = 40.0;
  check_refused(p, "low-percentile", "60", "below high-percentile (40)");
  p = {};
  p.stretch = BrightnessStretch::Fixed;  // stretch-min 0, stretch-max 0: no range
  check_refused(p, "stretch-min", "0", "below stretch-max (0) when stretch is fixed");
  p.stretch_max = 100.0;
  CHECK(refusal(p).empty());

  // Not finite: refused by every number's check.
  p = {};
  p.sigma = std::numeric_limits<double>::quiet_NaN();
  check_refused(p, "sigma", "nan", "finite numbers");
  p = {};
  p.clip_limit = std::numeric_limits<double>::infinity();
  check_refused(p, "clip-limit", "inf", "0 (no limit)");
  p.clip_limit = 0.0;
  CHECK(refusal(p).empty());
}

TEST_CASE("brightness checks a fixed stretch against the frames' bit depth", "[brightness]") {
  BrightnessParams p;
  p.stretch = BrightnessStretch::Fixed;
  p.stretch_min = 100.0;
  p.stretch_max = 4095.0;
  const FrameShape twelve{16, 16, PixelFormat::Gray16, 12};
  const FrameShape ten{16, 16, PixelFormat::Gray16, 10};
  const FrameShape gray8{16, 16, PixelFormat::Gray8, 8};
  const FrameShape rgba{16, 16, PixelFormat::Rgba, 8};
  CHECK(refusal(p, &twelve).empty());
  const std::string at_ten = refusal(p, &ten);
  CHECK(at_ten.find("stretch-max 4095 does not fit") != std::string::npos);
  CHECK(at_ten.find("0..1023 for GRAY16_LE at bit depth 10") != std::string::npos);
  CHECK(refusal(p, &gray8).find("0..255 for GRAY8") != std::string::npos);
  CHECK(refusal(p, &rgba).find("0..255 for RGBA") != std::string::npos);
  // A float frame's range is 0..1.
  p.stretch_min = 0.1;
  p.stretch_max = 0.9;
  const FrameShape gray32f{16, 16, PixelFormat::Gray32F, 32};
  CHECK(refusal(p, &gray32f).empty());
  p.stretch_max = 2.0;
  CHECK(refusal(p, &gray32f).find("0..1 for GRAY32F") != std::string::npos);
  // Without a fixed stretch the values are not used, so not checked against the frames.
  p.stretch = BrightnessStretch::None;
  CHECK(refusal(p, &gray32f).empty());
}

TEST_CASE("brightness mode clahe refuses GRAY32F frames, local takes them", "[brightness]") {
  BrightnessParams p;
  const FrameShape gray32f{16, 16, PixelFormat::Gray32F, 32};
  CHECK(refusal(p, &gray32f).empty());
  p.mode = BrightnessMode::Clahe;
  const std::string text = refusal(p, &gray32f);
  CHECK(text.find("mode clahe does not take GRAY32F") != std::string::npos);
  CHECK(text.find("mode local takes GRAY32F too") != std::string::npos);
  const FrameShape gray16{16, 16, PixelFormat::Gray16, 12};
  CHECK(refusal(p, &gray16).empty());
}

TEST_CASE("brightness frames must match the shape", "[brightness]") {
  const BrightnessParams p;
  std::byte a[64], b[64];
  const FrameShape shape{8, 8, PixelFormat::Gray8, 8};
  CHECK_NOTHROW(
      p.validate_frames(shape, {a, 8, 8, 8, PixelFormat::Gray8}, {b, 8, 8, 8, PixelFormat::Gray8}));
  try {
    p.validate_frames(shape, {a, 8, 8, 8, PixelFormat::Gray8}, {b, 4, 8, 8, PixelFormat::Gray8});
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("output frame is 4x8 GRAY8, configured for 8x8 GRAY8") !=
          std::string::npos);
  }
}

TEST_CASE("brightness mode and stretch names", "[brightness]") {
  CHECK(parse_brightness_mode("local") == BrightnessMode::Local);
  CHECK(parse_brightness_mode("clahe") == BrightnessMode::Clahe);
  CHECK(to_string(BrightnessMode::Clahe) == "clahe");
  CHECK(parse_brightness_stretch("percentile") == BrightnessStretch::Percentile);
  CHECK(to_string(BrightnessStretch::Fixed) == "fixed");
  CHECK(brightness_mode_names() == "local, clahe");
  CHECK(brightness_stretch_names() == "none, fixed, percentile");
  try {
    parse_brightness_stretch("auto");
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("unknown brightness stretch 'auto'") != std::string::npos);
    CHECK(e.allowed() == "none, fixed, percentile");
  }
}

TEST_CASE("brightness sample maximum and percentile rank", "[brightness]") {
  CHECK(brightness_sample_max({4, 4, PixelFormat::Gray8, 8}) == 255.0);
  CHECK(brightness_sample_max({4, 4, PixelFormat::Gray16, 12}) == 4095.0);
  CHECK(brightness_sample_max({4, 4, PixelFormat::Gray16, 16}) == 65535.0);
  CHECK(brightness_sample_max({4, 4, PixelFormat::Bgra, 8}) == 255.0);
  CHECK(brightness_sample_max({4, 4, PixelFormat::Gray32F, 32}) == 1.0);
  // rank = ceil(p / 100 * N), within 1..N.
  CHECK(brightness_percentile_rank(0.0, 1000) == 1);
  CHECK(brightness_percentile_rank(0.5, 1000) == 5);
  CHECK(brightness_percentile_rank(0.55, 1000) == 6);
  CHECK(brightness_percentile_rank(99.5, 1000) == 995);
  CHECK(brightness_percentile_rank(100.0, 1000) == 1000);
  CHECK(brightness_percentile_rank(50.0, 1) == 1);
  CHECK(brightness_percentile_rank(10.0, 256) == 26);
  CHECK(brightness_percentile_rank(90.0, 256) == 231);
  CHECK(brightness_percentile_rank(7.0, 100) == 7);  // 7 / 100 * 100 is 7.000000000000001
  CHECK(brightness_percentile_rank(99.9, 1000) == 999);
}
