// SPDX-License-Identifier: LGPL-2.1-or-later
// siftbrightness element tests: caps, pixel values against brightness_reference() within the
// fast path's stated tolerance (GRAY8, GRAY16_LE at bit depth 12, RGBA), alpha untouched,
// properties and their refusals, the pair rules checked at start, a live change, and a real
// pipeline after siftskysrc.
#include <gst/gst.h>
#include <gst/video/video.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>

#include "element_support.hpp"
#include "pipeline/brightness/params.hpp"
#include "pipeline/brightness/reference.hpp"
#include "pipeline/thread_pool.hpp"

using starsift::BrightnessParams;
using starsift::BrightnessStretch;
using starsift::FrameShape;
using starsift::PixelFormat;
using namespace starsift::test;

namespace {

TestImage reference_of(const BrightnessParams& params, const TestImage& in, int bit_depth) {
  static starsift::ThreadPool pool(2);
  TestImage out(in.width, in.height, in.format);
  starsift::brightness_reference(params, FrameShape{in.width, in.height, in.format, bit_depth},
                                 in.cview(), out.view(), pool);
  return out;
}

// A dark frame with a bright band, samples up to `max` (alpha/padding keep make_frame's
// random values): dark regions to lift, and the band's surroundings to adapt to.
TestImage dark_frame(PixelFormat format, int width, int height, std::uint32_t max,
                     std::uint32_t seed) {
  TestImage frame = make_frame(format, width, height, seed);
  std::mt19937 rng(seed);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const bool band = x >= width / 2 && x < 3 * width / 4;
      for (int c = 0; c < format_info(format).color_channels; ++c) {
        frame.set_key(x, y, c, band ? max - rng() % (max / 8) : rng() % (max / 6));
      }
    }
  }
  return frame;
}

// The largest difference of the colour samples; alpha/padding must be identical.
std::uint32_t worst_difference(const TestImage& a, const TestImage& b) {
  const starsift::FormatInfo& info = format_info(a.format);
  std::uint32_t worst = 0;
  for (int y = 0; y < a.height; ++y) {
    for (int x = 0; x < a.width; ++x) {
      for (int c = 0; c < info.channels; ++c) {
        const std::uint32_t u = a.key(x, y, c), v = b.key(x, y, c);
        if (c >= info.color_channels) {
          INFO("alpha/padding at " << x << "," << y);
          REQUIRE(u == v);
        }
        worst = std::max(worst, u > v ? u - v : v - u);
      }
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("siftbrightness documents every property with its range and default",
          "[plugin][brightness]") {
  GstElement* element = make_element("siftbrightness", {});
  GObjectClass* klass = G_OBJECT_GET_CLASS(element);
  check_properties_documented(element);
  const BrightnessParams defaults;

  const auto number = [&](const char* name, double min, double max, double value) {
    INFO(name);
    auto* spec = G_PARAM_SPEC_DOUBLE(g_object_class_find_property(klass, name));
    REQUIRE(spec != nullptr);
    CHECK(spec->minimum == min);
    CHECK(spec->maximum == max);
    CHECK(spec->default_value == value);
    CHECK((G_PARAM_SPEC(spec)->flags & GST_PARAM_CONTROLLABLE) != 0);
  };
  number("sigma", 0.0, BrightnessParams::kMaxSigma, defaults.sigma);
  number("strength", 0.0, BrightnessParams::kMaxStrength, 1.0);
  number("clip-limit", 0.0, G_MAXDOUBLE, 2.0);
  number("alpha", 0.0, 1.0, 1.0);
  number("stretch-min", 0.0, 65535.0, 0.0);
  number("stretch-max", 0.0, 65535.0, 0.0);
  number("low-percentile", 0.0, 100.0, 0.5);
  number("high-percentile", 0.0, 100.0, 99.5);
  for (const char* name : {"tiles-x", "tiles-y"}) {
    auto* spec = G_PARAM_SPEC_INT(g_object_class_find_property(klass, name));
    REQUIRE(spec != nullptr);
    CHECK(spec->minimum == 1);
    CHECK(spec->maximum == BrightnessParams::kMaxTiles);
    CHECK(spec->default_value == 8);
  }
  auto* mode = G_PARAM_SPEC_ENUM(g_object_class_find_property(klass, "mode"));
  REQUIRE(mode != nullptr);
  CHECK(mode->default_value == static_cast<gint>(starsift::BrightnessMode::Local));
  CHECK(g_enum_get_value_by_nick(mode->enum_class, "clahe") != nullptr);
  auto* stretch = G_PARAM_SPEC_ENUM(g_object_class_find_property(klass, "stretch"));
  REQUIRE(stretch != nullptr);
  CHECK(stretch->default_value == static_cast<gint>(BrightnessStretch::None));
  for (const char* nick : {"none", "fixed", "percentile"}) {
    CHECK(g_enum_get_value_by_nick(stretch->enum_class, nick) != nullptr);
  }
  CHECK(g_object_class_find_property(klass, "backend") != nullptr);
  gst_object_unref(element);
}

TEST_CASE("siftbrightness negotiates every supported format, same caps out",
          "[plugin][brightness]") {
  for (const PixelFormat format : kGstFormats) {
    INFO("format " << gst_format_name(format));
    Harness harness("siftbrightness", {{"backend", "cpu"}, {"sigma", "3"}});
    const std::string caps = caps_string(format, 37, 9);
    gst_harness_set_src_caps_str(harness.get(), caps.c_str());
    const TestImage in = make_frame(format, 37, 9, 11);
    const TestImage out = push_and_pull(harness, in);
    CHECK(worst_difference(out, reference_of({.sigma = 3.0}, in,
                                             8 * format_info(format).bytes_per_sample)) <= 1);
    check_output_caps(harness, caps);
  }
}

TEST_CASE("siftbrightness output equals brightness_reference within the fast path's tolerance",
          "[plugin][brightness]") {
  // Sigma 4: the exact blur, so only the power's float arithmetic differs (one count at most).
  // Sigma 40: the downsampled blur too (tests/brightness/test_brightness_cpu.cpp: two counts).
  struct Case {
    PixelFormat format;
    int bit_depth;
    const char* sigma;
    std::uint32_t tolerance;
  };
  const Case cases[] = {{PixelFormat::Gray8, 8, "4", 1},   {PixelFormat::Gray8, 8, "40", 2},
                        {PixelFormat::Gray16, 12, "4", 1}, {PixelFormat::Gray16, 12, "40", 2},
                        {PixelFormat::Rgba, 8, "4", 1},    {PixelFormat::Rgba, 8, "40", 2}};
  for (const Case& c : cases) {
    INFO(gst_format_name(c.format) << " bit depth " << c.bit_depth << " sigma " << c.sigma);
    const std::uint32_t max = (1u << c.bit_depth) - 1;
    // 101 pixels: GRAY8 rows padded to 104, GRAY16 to 204.
    const TestImage in = dark_frame(c.format, 101, 67, max, 21);
    Harness harness("siftbrightness", {{"backend", "cpu"},
                                       {"sigma", c.sigma},
                                       {"bit-depth", std::to_string(c.bit_depth).c_str()}});
    gst_harness_set_src_caps_str(harness.get(), caps_string(c.format, 101, 67).c_str());
    const TestImage out = push_and_pull(harness, in);
    BrightnessParams params;
    params.sigma = std::stod(c.sigma);
    const TestImage expected = reference_of(params, in, c.bit_depth);
    CHECK(worst_difference(out, expected) <= c.tolerance);
    CHECK_FALSE(out.same_pixels(in));
    // 12 bits: nothing above 4095 comes out.
    if (c.bit_depth == 12) {
      for (int y = 0; y < out.height; ++y) {
        for (int x = 0; x < out.width; ++x) REQUIRE(out.key(x, y, 0) <= 4095u);
      }
    }
  }
}

TEST_CASE("siftbrightness with a percentile stretch on RGBA keeps alpha", "[plugin][brightness]") {
  const TestImage in = dark_frame(PixelFormat::Rgba, 64, 48, 255, 5);
  Harness harness("siftbrightness", {{"backend", "cpu"},
                                     {"sigma", "6"},
                                     {"strength", "2"},
                                     {"alpha", "0.7"},
                                     {"stretch", "percentile"},
                                     {"low-percentile", "2"},
                                     {"high-percentile", "98"}});
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Rgba, 64, 48).c_str());
  const TestImage out = push_and_pull(harness, in);
  BrightnessParams params;
  params.sigma = 6.0;
  params.strength = 2.0;
  params.alpha = 0.7;
  params.stretch = BrightnessStretch::Percentile;
  params.low_percentile = 2.0;
  params.high_percentile = 98.0;
  CHECK(worst_difference(out, reference_of(params, in, 8)) <= 2);  // alpha identical
}

TEST_CASE("siftbrightness applies a property change at the next frame", "[plugin][brightness]") {
  Harness harness("siftbrightness", {{"backend", "cpu"}, {"sigma", "4"}});
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 48, 32).c_str());
  const TestImage in = dark_frame(PixelFormat::Gray8, 48, 32, 255, 4);
  BrightnessParams params;
  params.sigma = 4.0;
  const TestImage first = push_and_pull(harness, in);
  CHECK(worst_difference(first, reference_of(params, in, 8)) <= 1);

  g_object_set(harness.element(), "strength", 3.0, nullptr);
  params.strength = 3.0;
  const TestImage second = push_and_pull(harness, in);
  CHECK(worst_difference(second, reference_of(params, in, 8)) <= 1);
  CHECK_FALSE(second.same_pixels(first));

  // A stretch given in two steps, the pair complete after the second.
  gst_util_set_object_arg(G_OBJECT(harness.element()), "stretch", "fixed");
  g_object_set(harness.element(), "stretch-min", 20.0, "stretch-max", 200.0, nullptr);
  params.stretch = BrightnessStretch::Fixed;
  params.stretch_min = 20.0;
  params.stretch_max = 200.0;
  CHECK(worst_difference(push_and_pull(harness, in), reference_of(params, in, 8)) <= 1);

  // strength 0: the identity, through the element.
  g_object_set(harness.element(), "strength", 0.0, nullptr);
  gst_util_set_object_arg(G_OBJECT(harness.element()), "stretch", "none");
  check_same(push_and_pull(harness, in), in);
}

TEST_CASE("siftbrightness refuses values out of range and keeps the old ones",
          "[plugin][brightness]") {
  GstElement* element = make_element("siftbrightness", {{"sigma", "12"}, {"clip-limit", "3"}});
  check_double_refused(element, "sigma", 0.0, 12.0, "finite numbers above 0 up to 1000 px");
  check_double_refused(element, "clip-limit", 0.5, 3.0, "0 (no limit) or a finite number from 1");
  {
    // Out of the param spec's range: GObject itself refuses.
    WarningCapture warnings;
    g_object_set(element, "strength", 9.0, nullptr);
    gdouble strength = 0.0;
    g_object_get(element, "strength", &strength, nullptr);
    CHECK(strength == 1.0);
    CHECK(warnings.messages().size() == 1);
  }
  {
    // A pair in either order: low above the current high is taken, judged at start.
    WarningCapture warnings;
    g_object_set(element, "low-percentile", 99.7, "high-percentile", 100.0, nullptr);
    gdouble low = 0.0;
    g_object_get(element, "low-percentile", &low, nullptr);
    CHECK(low == 99.7);
    CHECK(warnings.messages().empty());
    // 100 is never below a high percentile.
    g_object_set(element, "low-percentile", 100.0, nullptr);
    REQUIRE(warnings.messages().size() == 1);
    CHECK(warnings.messages()[0].find("below high-percentile") != std::string::npos);
  }
  gst_object_unref(element);
}

TEST_CASE("siftbrightness stops at start on parameters whose pair or frames do not fit",
          "[plugin][brightness]") {
  PipelineResult result = run_pipeline(
      "videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=32,height=16 ! "
      "siftbrightness backend=cpu stretch=fixed stretch-min=10 ! fakesink");
  CHECK_FALSE(result.eos);
  CHECK(result.error.find("below stretch-max (0) when stretch is fixed") != std::string::npos);

  result = run_pipeline(
      "videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=32,height=16 ! "
      "siftbrightness backend=cpu stretch=fixed stretch-min=10 stretch-max=1000 ! fakesink");
  CHECK_FALSE(result.eos);
  CHECK(result.error.find("stretch-max 1000 does not fit") != std::string::npos);
}

TEST_CASE("siftbrightness runs after siftskysrc in a real pipeline to EOS",
          "[plugin][brightness]") {
  const PipelineResult result = run_pipeline(
      "siftskysrc num-buffers=3 ! video/x-raw,format=GRAY16_LE,width=160,height=120 ! "
      "siftbrightness backend=cpu stretch=percentile ! "
      "siftbrightness backend=cpu mode=local sigma=5 alpha=0.5 depth=2 ! fakesink");
  CHECK(result.error.empty());
  CHECK(result.eos);
}
