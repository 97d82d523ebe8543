// SPDX-License-Identifier: LGPL-2.1-or-later
// siftmedian with depth >= 2: the per-filter element runs through the same streaming engine as
// siftchain (GstSiftTransform's): frames in flight drained at EOS in input order with their
// timestamps, the latency the depth adds, and a property change taking effect in order.
#include <gst/gst.h>

#include <catch2/catch.hpp>
#include <vector>

#include "element_support.hpp"
#include "pipeline/median/params.hpp"

using starsift::BorderMode;
using starsift::MedianParams;
using starsift::PixelFormat;
using namespace starsift::test;

namespace {

constexpr GstClockTime kFrame = GST_SECOND / 30;

GstElement* median_element(int depth, const char* size) {
  GstElement* element = make_element("siftmedian", {{"size", size}, {"backend", "cpu"}});
  g_object_set(element, "depth", depth, nullptr);
  return element;
}

void push(Harness& harness, const TestImage& frame, int index) {
  GstBuffer* buffer = to_buffer(frame);
  GST_BUFFER_PTS(buffer) = static_cast<GstClockTime>(index) * kFrame;
  GST_BUFFER_DURATION(buffer) = kFrame;
  REQUIRE(gst_harness_push(harness.get(), buffer) == GST_FLOW_OK);
}

void pull_check(Harness& harness, const TestImage& in, int index, const MedianParams& params) {
  INFO("output " << index);
  GstBuffer* buffer = gst_harness_try_pull(harness.get());
  REQUIRE(buffer != nullptr);
  CHECK(GST_BUFFER_PTS(buffer) == static_cast<GstClockTime>(index) * kFrame);
  check_same(from_buffer(buffer, in.format, in.width, in.height), median_of(params, in));
  gst_buffer_unref(buffer);
}

}  // namespace

TEST_CASE("siftmedian pipelines depth frames and drains them at EOS", "[plugin][depth]") {
  for (int depth : {2, 3, 8}) {
    INFO("depth " << depth);
    Harness harness(median_element(depth, "5"));
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, 33, 21).c_str());
    std::vector<TestImage> frames;
    for (int i = 0; i < 2 * depth + 1; ++i) {
      frames.push_back(make_frame(PixelFormat::Gray16, 33, 21, 40 + static_cast<std::uint32_t>(i)));
      push(harness, frames.back(), i);
      // Nothing comes out until depth frames are in flight.
      CHECK(gst_harness_buffers_received(harness.get()) ==
            static_cast<guint>(i + 1 >= depth ? i + 2 - depth : 0));
    }
    REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_eos()));
    for (int i = 0; i < static_cast<int>(frames.size()); ++i) {
      pull_check(harness, frames[static_cast<std::size_t>(i)], i, {5, BorderMode::Reflect101, 0.0});
    }
    CHECK(gst_harness_try_pull(harness.get()) == nullptr);
  }
}

TEST_CASE("siftmedian reports depth - 1 frames more latency", "[plugin][depth]") {
  Harness harness(median_element(4, "3"));
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 16, 16).c_str());
  GstPad* src = gst_element_get_static_pad(harness.element(), "src");
  GstQuery* query = gst_query_new_latency();
  REQUIRE(gst_pad_query(src, query));
  GstClockTime min = 0;
  gst_query_parse_latency(query, nullptr, &min, nullptr);
  gst_query_unref(query);
  gst_object_unref(src);
  CHECK(min == gst_util_uint64_scale_int(3 * GST_SECOND, 1, 30));
}

TEST_CASE("siftmedian at depth 3: a new size applies from the next frame in", "[plugin][depth]") {
  Harness harness(median_element(3, "3"));
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 40, 30).c_str());
  std::vector<TestImage> frames;
  for (int i = 0; i < 6; ++i) {
    frames.push_back(make_frame(PixelFormat::Gray8, 40, 30, 90 + static_cast<std::uint32_t>(i)));
  }
  for (int i = 0; i < 3; ++i) push(harness, frames[static_cast<std::size_t>(i)], i);
  g_object_set(harness.element(), "size", 7, nullptr);
  for (int i = 3; i < 6; ++i) push(harness, frames[static_cast<std::size_t>(i)], i);
  REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_eos()));
  for (int i = 0; i < 6; ++i) {
    pull_check(harness, frames[static_cast<std::size_t>(i)], i,
               {i < 3 ? 3 : 7, BorderMode::Reflect101, 0.0});
  }
}
