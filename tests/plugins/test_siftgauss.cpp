// SPDX-License-Identifier: LGPL-2.1-or-later
// siftgauss element tests: caps, pixel values against gauss_reference() (bit for bit through
// the direct sums, within a stated tolerance through the recursion from sigma 50), alpha
// untouched, sigma 0 the identity, properties and their refusals, a live change, and real
// pipelines: after siftskysrc, and in a siftchain with whitening and detection that finds the
// sky's movers.
#include <gst/gst.h>
#include <gst/video/video.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "element_support.hpp"
#include "pipeline/backend.hpp"
#include "pipeline/detect/catalogue.hpp"
#include "pipeline/gauss/gauss_iir.hpp"
#include "pipeline/gauss/params.hpp"
#include "pipeline/gauss/reference.hpp"
#include "pipeline/thread_pool.hpp"
#include "plugins/common/result_meta.hpp"
#include "plugins/common/sky_truth_meta.hpp"

using starsift::BorderMode;
using starsift::GaussParams;
using starsift::PixelFormat;
using namespace starsift::test;

namespace {

// gauss_reference() of `in`, on a small thread pool.
TestImage gauss_of(const GaussParams& params, const TestImage& in) {
  static starsift::ThreadPool pool(2);
  TestImage out(in.width, in.height, in.format);
  starsift::gauss_reference(params, in.cview(), out.view(), pool);
  return out;
}

GaussParams gauss(double sigma_x, double sigma_y, BorderMode border = GaussParams::kDefaultBorder,
                  double border_value = 0.0, int radius_x = 0, int radius_y = 0) {
  GaussParams p;
  p.sigma_x = sigma_x;
  p.sigma_y = sigma_y;
  p.radius_x = radius_x;
  p.radius_y = radius_y;
  p.border = border;
  p.border_value = border_value;
  return p;
}

double sample_max(PixelFormat format) {
  return format_info(format).bytes_per_sample == 1 ? 255.0 : 65535.0;
}

// A frame with structure across the whole range: a bright square (the format's maximum) on a
// dark noisy ground, so a blur of the wrong width or shape shows at the square's edges.
// Alpha/padding bytes keep make_frame's random values.
TestImage square_frame(PixelFormat format, int width, int height, std::uint32_t seed) {
  TestImage frame = make_frame(format, width, height, seed);
  const auto max = static_cast<std::uint32_t>(sample_max(format));
  std::mt19937 rng(seed);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const bool inside =
          x >= width / 4 && x < 3 * width / 4 && y >= height / 4 && y < 3 * height / 4;
      for (int c = 0; c < format_info(format).color_channels; ++c) {
        frame.set_key(x, y, c, inside ? max : static_cast<std::uint32_t>(rng() % (max / 16)));
      }
    }
  }
  return frame;
}

// The largest difference between two frames' colour samples.
std::uint32_t worst_difference(const TestImage& a, const TestImage& b) {
  REQUIRE(a.format == b.format);
  std::uint32_t worst = 0;
  for (int y = 0; y < a.height; ++y) {
    for (int x = 0; x < a.width; ++x) {
      for (int c = 0; c < format_info(a.format).color_channels; ++c) {
        const std::uint32_t u = a.key(x, y, c), v = b.key(x, y, c);
        worst = std::max(worst, u > v ? u - v : v - u);
      }
    }
  }
  return worst;
}

// Alpha/padding samples of `out` are those of `in`.
void check_alpha_untouched(const TestImage& out, const TestImage& in) {
  const starsift::FormatInfo& info = format_info(in.format);
  for (int y = 0; y < in.height; ++y) {
    for (int x = 0; x < in.width; ++x) {
      for (int c = info.color_channels; c < info.channels; ++c) {
        INFO("pixel " << x << "," << y << " channel " << c);
        REQUIRE(out.key(x, y, c) == in.key(x, y, c));
      }
    }
  }
}

// What the recursion (sigma >= 50) is held to against the exact blur: 0.2 % of the format's
// full range, and at least one count (the rounding of a sample near .5). Its measured error is
// 0.11 % of the peak at most (tests/gauss/test_gauss_iir.cpp).
std::uint32_t recursion_tolerance(PixelFormat format) {
  return std::max<std::uint32_t>(1, static_cast<std::uint32_t>(0.002 * sample_max(format)));
}

}  // namespace

TEST_CASE("siftgauss documents every property with its range and default", "[plugin][gauss]") {
  GstElement* element = make_element("siftgauss", {});
  GObjectClass* klass = G_OBJECT_GET_CLASS(element);
  const GaussParams defaults;

  check_properties_documented(element);

  for (const char* name : {"sigma", "sigma-x", "sigma-y"}) {
    INFO("property " << name);
    auto* sigma = G_PARAM_SPEC_DOUBLE(g_object_class_find_property(klass, name));
    REQUIRE(sigma != nullptr);
    CHECK(sigma->minimum == 0.0);
    CHECK(sigma->maximum == GaussParams::kMaxSigma);
    CHECK(sigma->default_value == defaults.sigma_x);
  }
  for (const char* name : {"radius", "radius-x", "radius-y"}) {
    INFO("property " << name);
    auto* radius = G_PARAM_SPEC_INT(g_object_class_find_property(klass, name));
    REQUIRE(radius != nullptr);
    CHECK(radius->minimum == 0);
    CHECK(radius->maximum == GaussParams::kMaxRadius);
    CHECK(radius->default_value == 0);
  }

  auto* border = G_PARAM_SPEC_ENUM(g_object_class_find_property(klass, "border"));
  REQUIRE(border != nullptr);
  CHECK(border->default_value == static_cast<gint>(GaussParams::kDefaultBorder));
  for (const char* nick : {"replicate", "reflect-101", "constant"}) {
    CHECK(g_enum_get_value_by_nick(border->enum_class, nick) != nullptr);
  }

  auto* border_value = G_PARAM_SPEC_DOUBLE(g_object_class_find_property(klass, "border-value"));
  REQUIRE(border_value != nullptr);
  CHECK(border_value->default_value == defaults.border_value);
  CHECK(border_value->minimum == 0.0);
  CHECK(border_value->maximum == 65535.0);

  for (const char* name : {"backend", "device-id", "active-backend", "depth", "bit-depth"}) {
    INFO("property " << name);
    CHECK(g_object_class_find_property(klass, name) != nullptr);
  }
  for (const char* name : {"sigma", "sigma-x", "sigma-y", "radius", "radius-x", "radius-y",
                           "border", "border-value"}) {
    INFO("property " << name);
    const GParamSpec* spec = g_object_class_find_property(klass, name);
    CHECK((spec->flags & GST_PARAM_CONTROLLABLE) != 0);
    CHECK((spec->flags & GST_PARAM_MUTABLE_PLAYING) != 0);
  }
  gst_object_unref(element);
}

TEST_CASE("gst-inspect-1.0 siftgauss shows every property with its range", "[plugin][gauss]") {
  check_inspect_shows("siftgauss",
                      {"sigma:", "sigma-x:", "sigma-y:", "Double. Range: 0 - 1000 Default: 1",
                       "radius:", "radius-x:", "radius-y:", "Integer. Range: 0 - 4000 Default: 0",
                       "border:", "Default: 1, \"reflect-101\"",
                       "border-value:", "Double. Range: 0 - 65535 Default: 0",
                       "backend:", "Default: 0, \"auto\"", "GRAY16_LE", "RGBA", "BGRx"});
}

TEST_CASE("siftgauss negotiates every supported format, same caps out", "[plugin][gauss]") {
  for (const PixelFormat format : kGstFormats) {
    INFO("format " << gst_format_name(format));
    Harness harness("siftgauss", {{"backend", "cpu"}});
    const std::string caps = caps_string(format, 37, 9);
    gst_harness_set_src_caps_str(harness.get(), caps.c_str());

    const TestImage in = make_frame(format, 37, 9, 11);
    const TestImage out = push_and_pull(harness, in);
    check_same(out, gauss_of(GaussParams{}, in));
    check_alpha_untouched(out, in);

    check_output_caps(harness, caps);
  }
}

TEST_CASE("siftgauss refuses formats it does not process", "[plugin][gauss]") {
  check_refuses_other_formats("siftgauss");
}

TEST_CASE("siftgauss output equals gauss_reference bit for bit on GRAY8 with a padded stride",
          "[plugin][gauss]") {
  // 37 pixels of GRAY8 give GStreamer's default stride of 40: 3 padding bytes per row.
  const GstVideoInfo info = video_info(PixelFormat::Gray8, 37, 29);
  REQUIRE(GST_VIDEO_INFO_PLANE_STRIDE(&info, 0) == 40);
  const TestImage in = make_frame(PixelFormat::Gray8, 37, 29, 1);

  struct Case {
    Properties props;
    GaussParams params;
  };
  const Case cases[] = {
      {{{"sigma", "1"}}, gauss(1.0, 1.0)},
      {{{"sigma", "2.5"}, {"border", "replicate"}}, gauss(2.5, 2.5, BorderMode::Replicate)},
      {{{"sigma-x", "4"}, {"sigma-y", "0.7"}, {"border", "constant"}, {"border-value", "200"}},
       gauss(4.0, 0.7, BorderMode::Constant, 200.0)},
      // An explicit radius, and a window wider than the frame.
      {{{"sigma", "3"}, {"radius", "2"}}, gauss(3.0, 3.0, GaussParams::kDefaultBorder, 0.0, 2, 2)},
      {{{"sigma", "12"}, {"radius-y", "40"}},
       gauss(12.0, 12.0, GaussParams::kDefaultBorder, 0.0, 0, 40)},
  };
  for (const Case& c : cases) {
    INFO("sigma-x " << c.params.sigma_x << " sigma-y " << c.params.sigma_y << " radius "
                    << c.params.radius_x << "/" << c.params.radius_y << " border "
                    << to_string(c.params.border));
    GstElement* element = make_element("siftgauss", c.props);
    gst_util_set_object_arg(G_OBJECT(element), "backend", "cpu");
    Harness harness(element);
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 37, 29).c_str());
    const TestImage out = push_and_pull(harness, in);
    check_same(out, gauss_of(c.params, in));
    CHECK_FALSE(out.same_pixels(in));
  }
}

TEST_CASE("siftgauss output equals gauss_reference bit for bit on GRAY16_LE", "[plugin][gauss]") {
  // 37 pixels of GRAY16_LE give 74 bytes, padded to a stride of 76.
  const TestImage in = make_frame(PixelFormat::Gray16, 37, 23, 2);
  REQUIRE(in.stride == 76);
  Harness harness(
      "siftgauss",
      {{"backend", "cpu"}, {"sigma", "24.5"}, {"border", "constant"}, {"border-value", "65535"}});
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, 37, 23).c_str());
  check_same(push_and_pull(harness, in),
             gauss_of(gauss(24.5, 24.5, BorderMode::Constant, 65535.0), in));
}

TEST_CASE(
    "siftgauss output equals gauss_reference on RGBA with a GstVideoMeta stride, alpha "
    "untouched",
    "[plugin][gauss]") {
  // RGBA rows are never padded by default; upstream's video meta says 12 extra bytes here.
  const TestImage in = make_frame(PixelFormat::Rgba, 37, 21, 3, 37 * 4 + 12);
  Harness harness("siftgauss", {{"backend", "cpu"}, {"sigma", "1.5"}, {"border", "replicate"}});
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Rgba, 37, 21).c_str());
  const TestImage out = push_and_pull(harness, in, /*add_meta=*/true);
  check_same(out, gauss_of(gauss(1.5, 1.5, BorderMode::Replicate), in));
  check_alpha_untouched(out, in);
}

TEST_CASE("siftgauss from sigma 50 (the recursion) lands within 0.2 % of the full range",
          "[plugin][gauss]") {
  // The recursion approximates the Gaussian; tolerance: recursion_tolerance().
  struct Case {
    PixelFormat format;
    const char* sigma_x;
    const char* sigma_y;
    const char* border;
  };
  const Case cases[] = {
      {PixelFormat::Gray16, "50", "50", "reflect-101"},
      {PixelFormat::Gray16, "60", "3", "replicate"},
      {PixelFormat::Gray8, "55", "55", "constant"},
      {PixelFormat::Rgba, "50", "60", "reflect-101"},
      {PixelFormat::Bgrx, "64", "64", "replicate"},
  };
  for (const Case& c : cases) {
    INFO(gst_format_name(c.format)
         << " sigma " << c.sigma_x << "/" << c.sigma_y << " border " << c.border);
    const TestImage in = square_frame(c.format, 160, 120, 5);
    Harness harness("siftgauss", {{"backend", "cpu"},
                                  {"sigma-x", c.sigma_x},
                                  {"sigma-y", c.sigma_y},
                                  {"border", c.border},
                                  {"border-value", "100"}});
    gst_harness_set_src_caps_str(harness.get(), caps_string(c.format, 160, 120).c_str());
    const TestImage out = push_and_pull(harness, in);
    const GaussParams params = gauss(std::stod(c.sigma_x), std::stod(c.sigma_y),
                                     starsift::parse_border_mode(c.border), 100.0);
    const TestImage exact = gauss_of(params, in);
    const std::uint32_t worst = worst_difference(out, exact);
    std::printf("siftgauss recursion: %s sigma %s/%s %s: worst difference %u of %.0f\n",
                gst_format_name(c.format).c_str(), c.sigma_x, c.sigma_y, c.border, worst,
                sample_max(c.format));
    CHECK(worst <= recursion_tolerance(c.format));
    // Not the direct sums: those would give the reference's bits exactly.
    if (c.format == PixelFormat::Gray16) CHECK_FALSE(out.same_pixels(exact));
    // Blurred at all: the square's edges moved by far more than the tolerance.
    CHECK(worst_difference(out, in) > sample_max(c.format) / 4);
    check_alpha_untouched(out, in);
  }
}

TEST_CASE("siftgauss with sigma 0 passes every format through unchanged", "[plugin][gauss]") {
  for (const PixelFormat format : kGstFormats) {
    INFO("format " << gst_format_name(format));
    Harness harness("siftgauss", {{"backend", "cpu"}, {"sigma", "0"}, {"radius", "7"}});
    gst_harness_set_src_caps_str(harness.get(), caps_string(format, 33, 17).c_str());
    const TestImage in = make_frame(format, 33, 17, 21);
    check_same(push_and_pull(harness, in), in);
  }
  // One axis at 0: the blur runs along the other only.
  Harness harness("siftgauss", {{"backend", "cpu"}, {"sigma-x", "0"}, {"sigma-y", "2"}});
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, 33, 17).c_str());
  const TestImage in = make_frame(PixelFormat::Gray16, 33, 17, 22);
  check_same(push_and_pull(harness, in), gauss_of(gauss(0.0, 2.0), in));
}

TEST_CASE("siftgauss sigma sets both axes and reads as sigma-x; radius likewise",
          "[plugin][gauss]") {
  GstElement* element = make_element("siftgauss", {});
  g_object_set(element, "sigma", 3.5, "radius", 9, nullptr);
  gdouble sigma = 0.0, sigma_x = 0.0, sigma_y = 0.0;
  gint radius = -1, radius_x = -1, radius_y = -1;
  g_object_get(element, "sigma", &sigma, "sigma-x", &sigma_x, "sigma-y", &sigma_y, "radius",
               &radius, "radius-x", &radius_x, "radius-y", &radius_y, nullptr);
  CHECK(sigma_x == 3.5);
  CHECK(sigma_y == 3.5);
  CHECK(radius_x == 9);
  CHECK(radius_y == 9);

  g_object_set(element, "sigma-y", 0.5, "radius-y", 2, nullptr);
  g_object_get(element, "sigma", &sigma, "sigma-x", &sigma_x, "sigma-y", &sigma_y, "radius",
               &radius, "radius-x", &radius_x, "radius-y", &radius_y, nullptr);
  CHECK(sigma == 3.5);  // sigma reads as sigma-x
  CHECK(sigma_y == 0.5);
  CHECK(radius == 9);
  CHECK(radius_y == 2);

  g_object_set(element, "sigma-x", 7.0, "border-value", 17.25, nullptr);
  gst_util_set_object_arg(G_OBJECT(element), "border", "constant");
  gint border = -1;
  gdouble border_value = 0.0;
  g_object_get(element, "sigma", &sigma, "border", &border, "border-value", &border_value, nullptr);
  CHECK(sigma == 7.0);
  CHECK(border == static_cast<gint>(BorderMode::Constant));
  CHECK(border_value == 17.25);
  CHECK(string_property(element, "active-backend").empty());  // not started
  gst_object_unref(element);
}

TEST_CASE("siftgauss refuses values out of range and keeps the old ones", "[plugin][gauss]") {
  GstElement* element =
      make_element("siftgauss", {{"sigma", "2"}, {"radius", "5"}, {"border-value", "9"}});
  const auto sigmas = [&] {
    gdouble x = 0.0, y = 0.0;
    g_object_get(element, "sigma-x", &x, "sigma-y", &y, nullptr);
    return std::pair{x, y};
  };
  // Beyond the param specs' ranges: GObject refuses them with a warning.
  for (const char* name : {"sigma", "sigma-x", "sigma-y"}) {
    for (const double bad : {-0.5, GaussParams::kMaxSigma + 1.0}) {
      INFO(name << "=" << bad);
      WarningCapture warnings;
      g_object_set(element, name, bad, nullptr);
      CHECK(sigmas() == std::pair{2.0, 2.0});
      INFO(warnings.all());
      CHECK(warnings.messages().size() == 1);
    }
  }
  for (const char* name : {"radius", "radius-x", "radius-y"}) {
    for (const gint bad : {-1, GaussParams::kMaxRadius + 1}) {
      INFO(name << "=" << bad);
      WarningCapture warnings;
      g_object_set(element, name, bad, nullptr);
      gint x = -1, y = -1;
      g_object_get(element, "radius-x", &x, "radius-y", &y, nullptr);
      CHECK(x == 5);
      CHECK(y == 5);
      CHECK(warnings.messages().size() == 1);
    }
  }
  {
    // NaN: refused too (GObject's range check, before GaussParams::validate() would).
    WarningCapture warnings;
    g_object_set(element, "sigma", std::numeric_limits<double>::quiet_NaN(), nullptr);
    CHECK(sigmas() == std::pair{2.0, 2.0});
    INFO(warnings.all());
    REQUIRE(warnings.messages().size() == 1);
    CHECK(warnings.messages()[0].find("sigma") != std::string::npos);
  }
  check_double_refused(element, "border-value", std::numeric_limits<double>::quiet_NaN(), 9.0,
                       "border-value");
  {
    // Before caps, any value in the param spec's range is taken (the format is not known).
    WarningCapture warnings;
    g_object_set(element, "border-value", 300.0, nullptr);
    gdouble border_value = 0.0;
    g_object_get(element, "border-value", &border_value, nullptr);
    CHECK(border_value == 300.0);
    CHECK(warnings.messages().empty());
  }
  gst_object_unref(element);
}

TEST_CASE("siftgauss refuses a border-value the negotiated format cannot hold", "[plugin][gauss]") {
  Harness harness("siftgauss", {{"backend", "cpu"}, {"border", "constant"}, {"border-value", "7"}});
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 16, 8).c_str());
  const TestImage in = make_frame(PixelFormat::Gray8, 16, 8, 8);
  check_same(push_and_pull(harness, in), gauss_of(gauss(1.0, 1.0, BorderMode::Constant, 7.0), in));

  WarningCapture warnings;
  g_object_set(harness.element(), "border-value", 300.0, nullptr);
  gdouble border_value = 0.0;
  g_object_get(harness.element(), "border-value", &border_value, nullptr);
  CHECK(border_value == 7.0);
  INFO(warnings.all());
  REQUIRE(warnings.messages().size() == 1);
  CHECK(warnings.messages()[0].find("border-value") != std::string::npos);
  CHECK(warnings.messages()[0].find("0..255") != std::string::npos);
  // The stream goes on with the old value.
  check_same(push_and_pull(harness, in), gauss_of(gauss(1.0, 1.0, BorderMode::Constant, 7.0), in));
}

TEST_CASE(
    "siftgauss set before caps to a border-value the format cannot hold stops with an "
    "error",
    "[plugin][gauss]") {
  const PipelineResult result = run_pipeline(
      "videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=32,height=16 ! "
      "siftgauss backend=cpu border=constant border-value=300 ! fakesink");
  CHECK_FALSE(result.eos);
  CHECK(result.error.find("border-value") != std::string::npos);
  CHECK(result.error.find("0..255") != std::string::npos);
}

TEST_CASE("siftgauss applies a property change at the next frame", "[plugin][gauss]") {
  Harness harness("siftgauss", {{"backend", "cpu"}});
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, 64, 48).c_str());
  const TestImage in = square_frame(PixelFormat::Gray16, 64, 48, 4);

  const TestImage first = push_and_pull(harness, in);
  check_same(first, gauss_of(GaussParams{}, in));

  g_object_set(harness.element(), "sigma", 3.0, nullptr);
  const TestImage second = push_and_pull(harness, in);
  check_same(second, gauss_of(gauss(3.0, 3.0), in));
  CHECK_FALSE(second.same_pixels(first));

  g_object_set(harness.element(), "sigma-y", 0.0, "radius-x", 4, nullptr);
  gst_util_set_object_arg(G_OBJECT(harness.element()), "border", "constant");
  g_object_set(harness.element(), "border-value", 65535.0, nullptr);
  check_same(push_and_pull(harness, in),
             gauss_of(gauss(3.0, 0.0, BorderMode::Constant, 65535.0, 4, 0), in));

  // Into the recursion, which has no radius (radius-x 4 plays no part), and back out.
  g_object_set(harness.element(), "sigma", 60.0, nullptr);
  const TestImage recursive = push_and_pull(harness, in);
  CHECK(worst_difference(recursive, gauss_of(gauss(60.0, 60.0, BorderMode::Constant, 65535.0),
                                             in)) <= recursion_tolerance(PixelFormat::Gray16));
  g_object_set(harness.element(), "sigma", 1.0, "radius", 0, nullptr);
  check_same(push_and_pull(harness, in),
             gauss_of(gauss(1.0, 1.0, BorderMode::Constant, 65535.0), in));
}

TEST_CASE("siftgauss with backend=cuda matches the reference (where a GPU is usable)",
          "[plugin][gauss][cuda]") {
  if (!cuda_usable_or_skip()) return;
  // The GPU sums with fused multiply-adds (within one count of the reference), and beyond
  // its fused kernel's radii decimates (from sigma 4, where the frame holds the small plane's
  // margins) or recurses (from sigma 3, GaussIir::kMinSigma), where the CPU still sums: there
  // within the recursion's tolerance, which holds the decimation's bound on noise (5e-4 of
  // the range and a count, tests/gauss/test_gauss_cuda.cpp).
  for (const PixelFormat format : kGstFormats) {
    const TestImage in = square_frame(format, 67, 45, 7);
    for (const char* sigma : {"0", "1", "2.5", "8", "30"}) {
      for (const char* border : {"replicate", "reflect-101", "constant"}) {
        INFO(gst_format_name(format) << " sigma " << sigma << " border " << border);
        Harness harness(
            "siftgauss",
            {{"backend", "cuda"}, {"sigma", sigma}, {"border", border}, {"border-value", "200"}});
        gst_harness_set_src_caps_str(harness.get(), caps_string(format, 67, 45).c_str());
        const double s = std::stod(sigma);
        const TestImage out = push_and_pull(harness, in);
        const TestImage exact =
            gauss_of(gauss(s, s, starsift::parse_border_mode(border), 200.0), in);
        CHECK(worst_difference(out, exact) <=
              (s >= starsift::GaussIir::kMinSigma ? recursion_tolerance(format) : 1u));
        check_alpha_untouched(out, in);
        CHECK(string_property(harness.element(), "active-backend") == "cuda:0");
      }
    }
  }
}

TEST_CASE("siftgauss backend=cuda without a usable GPU fails with a message", "[plugin][gauss]") {
  init_gstreamer();
  const std::string why_not = starsift::cuda_unusable_reason(0);
  const PipelineResult result = run_pipeline(
      "videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=32,height=16 ! "
      "siftgauss backend=cuda ! fakesink");
  if (why_not.empty()) {
    WARN("skipped: a CUDA device is usable here; the GPU test covers backend=cuda");
    return;
  }
  INFO("CUDA not usable: " << why_not);
  CHECK_FALSE(result.eos);
  CHECK(result.error.find("backend=cuda") != std::string::npos);
  CHECK(result.error.find(why_not) != std::string::npos);
}

TEST_CASE("siftgauss switched to backend=cuda mid-stream without a GPU stops with an error",
          "[plugin][gauss]") {
  Harness harness("siftgauss", {{"backend", "cpu"}});
  check_switch_to_cuda_fails(harness);
}

TEST_CASE("siftgauss runs after siftskysrc in a real pipeline to EOS", "[plugin][gauss]") {
  const PipelineResult result = run_pipeline(
      "siftskysrc num-buffers=4 ! video/x-raw,width=128,height=96 ! "
      "siftgauss sigma=1.5 backend=cpu ! siftgauss sigma=30 backend=cpu depth=2 ! fakesink");
  CHECK(result.error.empty());
  CHECK(result.eos);
}

namespace {

// What a fakesink named "sink" got: every buffer, until EOS or ERROR.
struct Received {
  std::vector<GstBuffer*> buffers;
  bool eos = false;
  std::string error;

  Received() = default;
  Received(const Received&) = delete;
  Received& operator=(const Received&) = delete;
  ~Received() {
    for (GstBuffer* b : buffers) gst_buffer_unref(b);
  }
};

void on_handoff(GstElement*, GstBuffer* buffer, GstPad*, gpointer data) {
  static_cast<Received*>(data)->buffers.push_back(gst_buffer_ref(buffer));
}

void receive(const std::string& description, Received& out) {
  init_gstreamer();
  GError* failure = nullptr;
  GstElement* pipeline = gst_parse_launch(description.c_str(), &failure);
  if (failure != nullptr) {
    const std::string message = failure->message;
    g_clear_error(&failure);
    FAIL("cannot parse '" << description << "': " << message);
  }
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  REQUIRE(sink != nullptr);
  g_object_set(sink, "signal-handoffs", TRUE, nullptr);
  g_signal_connect(sink, "handoff", G_CALLBACK(on_handoff), &out);
  GstBus* bus = gst_element_get_bus(pipeline);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstMessage* message = gst_bus_timed_pop_filtered(
      bus, 60 * GST_SECOND, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  if (message != nullptr) {
    if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_EOS) {
      out.eos = true;
    } else {
      out.error = parse_error(message).message;
    }
    gst_message_unref(message);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
}

}  // namespace

TEST_CASE("a siftchain of gauss, whiten and detect finds the synthetic sky's movers",
          "[plugin][gauss][chain]") {
  // The chain as a config file would hold it. The blur (sigma 1, about the sky's PSF) is the
  // matched filter, so detect filters no more: its threshold takes the noise as white, which
  // the blur's noise is not (with detect's default 3 x 3 filter on top, ~100 false objects a
  // frame here; docs/gauss.md).
  const int frames = 16, history = 4, width = 256, height = 192;
  Received out;
  receive("siftskysrc num-buffers=" + std::to_string(frames) +
              " movers=3 mover-snr-min=15 mover-snr-max=30 ! video/x-raw,width=" +
              std::to_string(width) + ",height=" + std::to_string(height) +
              " ! siftchain backend=cpu chain=\"[{gauss: {sigma: 1}}, {whiten: {history: " +
              std::to_string(history) + "}}, {detect: {filter: none}}]\" ! fakesink name=sink",
          out);
  CHECK(out.error.empty());
  CHECK(out.eos);
  REQUIRE(out.buffers.size() == static_cast<std::size_t>(frames));

  // Once the history is full: few objects a frame, and the movers (away from the frame's
  // edges, where whitening has less to go on) among them.
  int movers = 0, movers_found = 0;
  for (std::size_t k = 2 * history; k < out.buffers.size(); ++k) {
    INFO("frame " << k);
    GstBuffer* buffer = out.buffers[k];
    const auto catalogue = starsift::gst::last_buffer_result(buffer, starsift::kCatalogueKind);
    REQUIRE(catalogue.has_value());
    CHECK(catalogue->stage == 2);
    const auto objects = catalogue->as<starsift::DetectedObject>();
    const GstSiftSkyTruthMeta* truth = gst_buffer_get_sift_sky_truth_meta(buffer);
    REQUIRE(truth != nullptr);
    CHECK(objects.size() <= truth->truth.movers.size() + 3);
    for (const starsift::MoverTruth& mover : truth->truth.movers) {
      const double edge = 6.0;
      if (mover.x < edge || mover.y < edge || mover.x > width - edge || mover.y > height - edge) {
        continue;
      }
      ++movers;
      for (const starsift::DetectedObject& o : objects) {
        if (std::hypot(o.x - mover.x, o.y - mover.y) < 3.0) {
          ++movers_found;
          break;
        }
      }
    }
  }
  INFO(movers_found << " of " << movers << " movers found");
  CHECK(movers >= 16);
  CHECK(movers_found >= movers * 9 / 10);
}
