// SPDX-License-Identifier: LGPL-2.1-or-later
// siftmedian element tests: caps, pixel values against median_reference(), properties, errors
// on the bus, and a real pipeline.
#include <gst/gst.h>
#include <gst/video/video.h>

#include <catch2/catch.hpp>

#include <string>

#include "element_support.hpp"
#include "pipeline/backend.hpp"
#include "pipeline/median/params.hpp"

using starsift::MedianParams;
using starsift::PixelFormat;
using namespace starsift::test;

namespace {

// A siftmedian with `props` set from strings.
GstElement* make_median(Properties props) {
  return make_element("siftmedian", props);
}

}  // namespace

TEST_CASE("siftmedian documents every property with its range and default", "[plugin]") {
  GstElement* element = make_median({});
  GObjectClass* klass = G_OBJECT_GET_CLASS(element);

  check_properties_documented(element);

  auto* size = G_PARAM_SPEC_INT(g_object_class_find_property(klass, "size"));
  REQUIRE(size != nullptr);
  CHECK(size->minimum == MedianParams::kMinSize);
  CHECK(size->maximum == MedianParams::kMaxSize);
  CHECK(size->default_value == MedianParams::kDefaultSize);

  auto* border = G_PARAM_SPEC_ENUM(g_object_class_find_property(klass, "border"));
  REQUIRE(border != nullptr);
  CHECK(border->default_value == static_cast<gint>(MedianParams::kDefaultBorder));
  for (const char* nick : {"replicate", "reflect-101", "constant"}) {
    CHECK(g_enum_get_value_by_nick(border->enum_class, nick) != nullptr);
  }

  auto* border_value = G_PARAM_SPEC_DOUBLE(g_object_class_find_property(klass, "border-value"));
  REQUIRE(border_value != nullptr);
  CHECK(border_value->default_value == MedianParams::kDefaultBorderValue);
  CHECK(border_value->minimum == 0.0);
  CHECK(border_value->maximum == 65535.0);

  auto* backend = G_PARAM_SPEC_ENUM(g_object_class_find_property(klass, "backend"));
  REQUIRE(backend != nullptr);
  CHECK(backend->default_value == static_cast<gint>(starsift::Backend::Auto));
  for (const char* nick : {"auto", "cuda", "cpu"}) {
    CHECK(g_enum_get_value_by_nick(backend->enum_class, nick) != nullptr);
  }

  auto* device_id = G_PARAM_SPEC_INT(g_object_class_find_property(klass, "device-id"));
  REQUIRE(device_id != nullptr);
  CHECK(device_id->minimum == 0);
  CHECK(device_id->default_value == 0);

  GParamSpec* active = g_object_class_find_property(klass, "active-backend");
  REQUIRE(active != nullptr);
  CHECK((active->flags & G_PARAM_WRITABLE) == 0);

  for (const char* name : {"size", "border", "border-value"}) {
    INFO("property " << name);
    CHECK((g_object_class_find_property(klass, name)->flags & GST_PARAM_CONTROLLABLE) != 0);
  }
  gst_object_unref(element);
}

TEST_CASE("gst-inspect-1.0 siftmedian shows every property with its range", "[plugin]") {
  check_inspect_shows(
      "siftmedian",
      {"size:", "Integer. Range: 3 - 31 Default: 3", "border:", "Default: 1, \"reflect-101\"",
       "border-value:", "Double. Range: 0 - 65535 Default: 0", "backend:", "Default: 0, \"auto\"",
       "device-id:", "Integer. Range: 0 - 2147483647 Default: 0", "active-backend:", "GRAY16_LE"});
}

TEST_CASE("siftmedian negotiates every supported format, same caps out", "[plugin]") {
  for (const PixelFormat format : kGstFormats) {
    INFO("format " << gst_format_name(format));
    Harness harness("siftmedian", {{"backend", "cpu"}});
    const std::string caps = caps_string(format, 37, 9);
    gst_harness_set_src_caps_str(harness.get(), caps.c_str());

    const TestImage in = make_frame(format, 37, 9, 11);
    const TestImage out = push_and_pull(harness, in);
    check_same(out, median_of(MedianParams{}, in));

    check_output_caps(harness, caps);
  }
}

TEST_CASE("siftmedian refuses formats it does not process", "[plugin]") {
  check_refuses_other_formats("siftmedian");
}

TEST_CASE("siftmedian output equals median_reference on GRAY8 with a padded stride", "[plugin]") {
  // 37 pixels of GRAY8 give GStreamer's default stride of 40: 3 padding bytes per row.
  const GstVideoInfo info = video_info(PixelFormat::Gray8, 37, 29);
  REQUIRE(GST_VIDEO_INFO_PLANE_STRIDE(&info, 0) == 40);
  const TestImage in = make_frame(PixelFormat::Gray8, 37, 29, 1);

  struct Case {
    const char* size;
    const char* border;
    const char* border_value;
    MedianParams params;
  };
  const Case cases[] = {
      {"3", "reflect-101", "0", {3, starsift::BorderMode::Reflect101, 0.0}},
      {"5", "replicate", "0", {5, starsift::BorderMode::Replicate, 0.0}},
      {"7", "constant", "200", {7, starsift::BorderMode::Constant, 200.0}},
      {"31", "reflect-101", "0", {31, starsift::BorderMode::Reflect101, 0.0}},
  };
  for (const Case& c : cases) {
    INFO("size " << c.size << " border " << c.border << " border-value " << c.border_value);
    Harness harness("siftmedian", {{"backend", "cpu"},
                                   {"size", c.size},
                                   {"border", c.border},
                                   {"border-value", c.border_value}});
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 37, 29).c_str());
    check_same(push_and_pull(harness, in), median_of(c.params, in));
  }
}

TEST_CASE("siftmedian output equals median_reference on GRAY16_LE", "[plugin]") {
  // 37 pixels of GRAY16_LE give 74 bytes, padded to a stride of 76.
  const TestImage in = make_frame(PixelFormat::Gray16, 37, 23, 2);
  REQUIRE(in.stride == 76);
  Harness harness(
      "siftmedian",
      {{"backend", "cpu"}, {"size", "5"}, {"border", "constant"}, {"border-value", "65535"}});
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, 37, 23).c_str());
  check_same(push_and_pull(harness, in),
             median_of({5, starsift::BorderMode::Constant, 65535.0}, in));
}

TEST_CASE("siftmedian output equals median_reference on RGBA with a GstVideoMeta stride",
          "[plugin]") {
  // RGBA rows are never padded by default; upstream's video meta says 12 extra bytes here.
  const TestImage in = make_frame(PixelFormat::Rgba, 37, 21, 3, 37 * 4 + 12);
  Harness harness("siftmedian", {{"backend", "cpu"}, {"size", "3"}, {"border", "replicate"}});
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Rgba, 37, 21).c_str());
  check_same(push_and_pull(harness, in, /*add_meta=*/true),
             median_of({3, starsift::BorderMode::Replicate, 0.0}, in));
}

TEST_CASE("siftmedian with backend=auto equals median_reference (the GPU, where one is usable)",
          "[plugin]") {
  // On a GPU host this runs the CUDA stage through the element, strides and all.
  const char* sizes[] = {"3", "5", "9", "31"};
  const char* borders[] = {"replicate", "reflect-101", "constant"};
  for (const PixelFormat format : kGstFormats) {
    const TestImage in = make_frame(format, 67, 45, 7);
    for (const char* size : sizes) {
      for (const char* border : borders) {
        INFO(gst_format_name(format) << " size " << size << " border " << border);
        Harness harness(
            "siftmedian",
            {{"backend", "auto"}, {"size", size}, {"border", border}, {"border-value", "200"}});
        gst_harness_set_src_caps_str(harness.get(), caps_string(format, 67, 45).c_str());
        MedianParams params;
        params.size = std::stoi(size);
        params.border = starsift::parse_border_mode(border);
        params.border_value = 200.0;
        check_same(push_and_pull(harness, in), median_of(params, in));
      }
    }
  }
}

TEST_CASE("siftmedian properties round trip", "[plugin]") {
  GstElement* element = make_median({});
  g_object_set(element, "size", 9, "border-value", 17.0, "device-id", 3, nullptr);
  gst_util_set_object_arg(G_OBJECT(element), "border", "constant");
  gst_util_set_object_arg(G_OBJECT(element), "backend", "cpu");

  gint size = 0;
  gint border = -1;
  gdouble border_value = 0.0;
  gint backend = -1;
  gint device_id = -1;
  g_object_get(element, "size", &size, "border", &border, "border-value", &border_value, "backend",
               &backend, "device-id", &device_id, nullptr);
  CHECK(size == 9);
  CHECK(border == static_cast<gint>(starsift::BorderMode::Constant));
  CHECK(border_value == 17.0);
  CHECK(backend == static_cast<gint>(starsift::Backend::Cpu));
  CHECK(device_id == 3);
  CHECK(string_property(element, "active-backend").empty());  // not started
  gst_object_unref(element);
}

TEST_CASE("siftmedian refuses invalid values and keeps the old one", "[plugin]") {
  GstElement* element = make_median({{"size", "5"}, {"border-value", "9"}});
  for (const gint bad : {4, 33, 1, 0, -3}) {
    INFO("size=" << bad);
    WarningCapture warnings;
    g_object_set(element, "size", bad, nullptr);
    gint size = 0;
    g_object_get(element, "size", &size, nullptr);
    CHECK(size == 5);
    INFO(warnings.all());
    REQUIRE(warnings.messages().size() == 1);
    CHECK(warnings.messages()[0].find("size") != std::string::npos);
  }
  {
    // In range for GObject, refused by the element: the message names the allowed values.
    WarningCapture warnings;
    g_object_set(element, "size", 4, nullptr);
    REQUIRE(warnings.messages().size() == 1);
    CHECK(warnings.messages()[0].find("odd values 3..31") != std::string::npos);
  }
  check_double_refused(element, "border-value", 1.5, 9.0, "border-value");
  {
    WarningCapture warnings;
    g_object_set(element, "device-id", -1, nullptr);
    gint device_id = -1;
    g_object_get(element, "device-id", &device_id, nullptr);
    CHECK(device_id == 0);
    CHECK(warnings.messages().size() == 1);
  }
  gst_object_unref(element);
}

TEST_CASE("siftmedian applies a property change at the next frame", "[plugin]") {
  Harness harness("siftmedian", {{"backend", "cpu"}});
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 37, 29).c_str());
  const TestImage in = make_frame(PixelFormat::Gray8, 37, 29, 4);

  const TestImage first = push_and_pull(harness, in);
  check_same(first, median_of({3, starsift::BorderMode::Reflect101, 0.0}, in));

  g_object_set(harness.element(), "size", 7, nullptr);
  const TestImage second = push_and_pull(harness, in);
  check_same(second, median_of({7, starsift::BorderMode::Reflect101, 0.0}, in));
  CHECK_FALSE(second.same_pixels(first));

  gst_util_set_object_arg(G_OBJECT(harness.element()), "border", "constant");
  g_object_set(harness.element(), "border-value", 255.0, nullptr);
  check_same(push_and_pull(harness, in), median_of({7, starsift::BorderMode::Constant, 255.0}, in));
}

TEST_CASE("siftmedian reports and switches its backend at the next frame", "[plugin]") {
  Harness harness("siftmedian", {{"backend", "cpu"}});
  CHECK(string_property(harness.element(), "active-backend") == "cpu");
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 16, 8).c_str());
  const TestImage in = make_frame(PixelFormat::Gray8, 16, 8, 5);
  check_same(push_and_pull(harness, in), median_of(MedianParams{}, in));

  // auto runs on the GPU when one is usable, else on the CPU; the output is the same.
  gst_util_set_object_arg(G_OBJECT(harness.element()), "backend", "auto");
  check_same(push_and_pull(harness, in), median_of(MedianParams{}, in));
  const std::string expected = starsift::cuda_unusable_reason(0).empty() ? "cuda:0" : "cpu";
  CHECK(string_property(harness.element(), "active-backend") == expected);
}

TEST_CASE("siftmedian backend=cuda without a usable GPU fails with a message", "[plugin]") {
  init_gstreamer();
  const std::string why_not = starsift::cuda_unusable_reason(0);
  const PipelineResult result = run_pipeline(
      "videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=32,height=16 ! "
      "siftmedian backend=cuda ! fakesink");
  if (why_not.empty()) {
    CHECK(result.eos);
    CHECK(result.error.empty());
    return;
  }
  INFO("CUDA not usable: " << why_not);
  CHECK_FALSE(result.eos);
  CHECK(result.error.find("backend=cuda") != std::string::npos);
  CHECK(result.error.find(why_not) != std::string::npos);
}

TEST_CASE("siftmedian switched to backend=cuda mid-stream without a GPU stops with an error",
          "[plugin]") {
  Harness harness("siftmedian", {{"backend", "cpu"}});
  check_switch_to_cuda_fails(harness);
}

TEST_CASE("siftmedian refuses a border-value that does not fit the format", "[plugin]") {
  const PipelineResult result = run_pipeline(
      "videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=32,height=16 ! "
      "siftmedian backend=cpu border=constant border-value=300 ! fakesink");
  CHECK_FALSE(result.eos);
  CHECK(result.error.find("border-value") != std::string::npos);
  CHECK(result.error.find("0..255") != std::string::npos);
}

TEST_CASE("siftmedian runs in a real pipeline to EOS", "[plugin]") {
  const PipelineResult result = run_pipeline(
      "videotestsrc num-buffers=3 pattern=snow ! video/x-raw,format=GRAY16_LE,width=64,height=48 "
      "! siftmedian size=5 border=reflect-101 backend=cpu ! fakesink");
  CHECK(result.error.empty());
  CHECK(result.eos);
}
