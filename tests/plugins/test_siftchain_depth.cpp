// SPDX-License-Identifier: LGPL-2.1-or-later
// siftchain with depth >= 2: frames in flight through the streaming engine, drained at EOS
// in input order with their timestamps, flushes counted as dropped, the latency the depth
// adds, and caps changes with frames in flight.
#include <gst/gst.h>
#include <gst/video/video.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "element_support.hpp"
#include "pipeline/backend.hpp"
#include "pipeline/median/params.hpp"

using starsift::BorderMode;
using starsift::MedianParams;
using starsift::PixelFormat;
using namespace starsift::test;

namespace {

constexpr const char* kTwoMedians = "[{median: {size: 3}}, {median: {size: 5}}]";
constexpr GstClockTime kFrame = GST_SECOND / 30;

TestImage two_medians(const TestImage& in) {
  return median_of({5, BorderMode::Reflect101, 0.0},
                   median_of({3, BorderMode::Reflect101, 0.0}, in));
}

// A harness around siftchain (kTwoMedians, backend=cpu) with `depth`.
GstElement* chain_element(int depth) {
  GstElement* element = make_element("siftchain", {{"chain", kTwoMedians}, {"backend", "cpu"}});
  g_object_set(element, "depth", depth, nullptr);
  return element;
}

GstStructure* stats_of(GstElement* element) {
  GstStructure* stats = nullptr;
  g_object_get(element, "stats", &stats, nullptr);
  REQUIRE(stats != nullptr);
  return stats;
}

guint64 stat_u64(GstElement* element, const char* field) {
  GstStructure* stats = stats_of(element);
  guint64 value = 0;
  CHECK(gst_structure_get_uint64(stats, field, &value));
  gst_structure_free(stats);
  return value;
}

int stat_int(GstElement* element, const char* field) {
  GstStructure* stats = stats_of(element);
  gint value = -1;
  CHECK(gst_structure_get_int(stats, field, &value));
  gst_structure_free(stats);
  return value;
}

// Pushes `frames` with timestamps first_index * kFrame, ... (one frame apart).
void push_frames(Harness& harness, const std::vector<TestImage>& frames, int first_index) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    GstBuffer* buffer = to_buffer(frames[i]);
    GST_BUFFER_PTS(buffer) = (first_index + static_cast<GstClockTime>(i)) * kFrame;
    GST_BUFFER_DURATION(buffer) = kFrame;
    REQUIRE(gst_harness_push(harness.get(), buffer) == GST_FLOW_OK);
  }
}

// Pulls frames.size() outputs and checks their timestamps and pixels.
void pull_and_check(Harness& harness, const std::vector<TestImage>& frames, int first_index) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    INFO("output " << i);
    GstBuffer* buffer = gst_harness_try_pull(harness.get());
    REQUIRE(buffer != nullptr);
    CHECK(GST_BUFFER_PTS(buffer) == (first_index + static_cast<GstClockTime>(i)) * kFrame);
    CHECK(GST_BUFFER_DURATION(buffer) == kFrame);
    const TestImage& in = frames[i];
    check_same(from_buffer(buffer, in.format, in.width, in.height), two_medians(in));
    gst_buffer_unref(buffer);
  }
}

std::vector<TestImage> make_frames(PixelFormat format, int width, int height, int count,
                                   std::uint32_t seed) {
  std::vector<TestImage> frames;
  for (int i = 0; i < count; ++i) frames.push_back(make_frame(format, width, height, seed + i));
  return frames;
}

GstClockTime min_latency(GstElement* element) {
  GstPad* src = gst_element_get_static_pad(element, "src");
  GstQuery* query = gst_query_new_latency();
  REQUIRE(gst_pad_query(src, query));
  gboolean live = FALSE;
  GstClockTime min = 0;
  GstClockTime max = 0;
  gst_query_parse_latency(query, &live, &min, &max);
  gst_query_unref(query);
  gst_object_unref(src);
  return min;
}

}  // namespace

TEST_CASE("siftchain depth is a documented property from 1 to 8, default 1", "[plugin][depth]") {
  GstElement* element = make_element("siftchain", {});
  GParamSpec* spec = g_object_class_find_property(G_OBJECT_GET_CLASS(element), "depth");
  REQUIRE(spec != nullptr);
  CHECK(spec->value_type == G_TYPE_INT);
  CHECK(G_PARAM_SPEC_INT(spec)->minimum == 1);
  CHECK(G_PARAM_SPEC_INT(spec)->maximum == 8);
  CHECK(G_PARAM_SPEC_INT(spec)->default_value == 1);
  check_properties_documented(element);
  GstStructure* stats = stats_of(element);
  for (const char* field : {"depth", "in-flight", "dropped", "zero-copy", "copied"}) {
    INFO("field " << field);
    CHECK(gst_structure_has_field(stats, field));
  }
  gst_structure_free(stats);
  gst_object_unref(element);
}

TEST_CASE("siftchain with depth 1..8 drains at EOS in input order with the right pixels",
          "[plugin][depth]") {
  for (int depth = 1; depth <= 8; ++depth) {
    INFO("depth " << depth);
    Harness harness(chain_element(depth));
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 23, 17).c_str());
    const int n = 3 * depth + 4;
    const std::vector<TestImage> frames = make_frames(PixelFormat::Gray8, 23, 17, n, 100);
    push_frames(harness, frames, 0);
    // depth - 1 frames stay in flight until EOS.
    CHECK(gst_harness_buffers_in_queue(harness.get()) == static_cast<guint>(n - (depth - 1)));
    CHECK(stat_int(harness.element(), "in-flight") == depth - 1);
    REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_eos()));
    CHECK(gst_harness_buffers_in_queue(harness.get()) == static_cast<guint>(n));
    pull_and_check(harness, frames, 0);
    CHECK(gst_harness_try_pull(harness.get()) == nullptr);

    CHECK(stat_u64(harness.element(), "frames") == static_cast<guint64>(n));
    CHECK(stat_int(harness.element(), "depth") == depth);
    CHECK(stat_int(harness.element(), "in-flight") == 0);
    CHECK(stat_u64(harness.element(), "dropped") == 0);
    if (depth > 1) {
      CHECK(stat_u64(harness.element(), "zero-copy") + stat_u64(harness.element(), "copied") ==
            static_cast<guint64>(n));
    }
  }
}

TEST_CASE("siftchain with depth 4 drops the frames in flight at a flush, counted",
          "[plugin][depth]") {
  Harness harness(chain_element(4));
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, 31, 19).c_str());
  const std::vector<TestImage> before = make_frames(PixelFormat::Gray16, 31, 19, 5, 7);
  push_frames(harness, before, 0);
  // Two frames out, three in flight.
  pull_and_check(harness, {before[0], before[1]}, 0);
  CHECK(gst_harness_try_pull(harness.get()) == nullptr);
  CHECK(stat_int(harness.element(), "in-flight") == 3);

  REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_flush_start()));
  REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_flush_stop(TRUE)));
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_segment(&segment)));
  CHECK(stat_u64(harness.element(), "dropped") == 3);
  CHECK(stat_int(harness.element(), "in-flight") == 0);

  const std::vector<TestImage> after = make_frames(PixelFormat::Gray16, 31, 19, 9, 50);
  push_frames(harness, after, 10);
  REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_eos()));
  // Flushing may leave events but no buffers of before the flush.
  pull_and_check(harness, after, 10);
  CHECK(gst_harness_try_pull(harness.get()) == nullptr);
  CHECK(stat_u64(harness.element(), "frames") == 2 + 9);
  CHECK(stat_u64(harness.element(), "dropped") == 3);
}

TEST_CASE("siftchain latency grows by depth - 1 frame durations", "[plugin][depth]") {
  GstClockTime latency[2] = {0, 0};
  const int depths[2] = {1, 4};
  for (int i = 0; i < 2; ++i) {
    Harness harness(chain_element(depths[i]));
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 16, 8).c_str());
    push_frames(harness, make_frames(PixelFormat::Gray8, 16, 8, 1, 3), 0);
    latency[i] = min_latency(harness.element());
  }
  CHECK(latency[1] - latency[0] == gst_util_uint64_scale_int(3 * GST_SECOND, 1, 30));
  CHECK(latency[1] - latency[0] == 100 * GST_MSECOND);
}

TEST_CASE("siftchain with depth 3 pushes the frames of the old caps before a caps change",
          "[plugin][depth]") {
  Harness harness(chain_element(3));
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 37, 29).c_str());
  const std::vector<TestImage> first = make_frames(PixelFormat::Gray8, 37, 29, 4, 1);
  push_frames(harness, first, 0);
  CHECK(stat_int(harness.element(), "in-flight") == 2);

  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Bgrx, 53, 41).c_str());
  CHECK(stat_int(harness.element(), "in-flight") == 0);
  pull_and_check(harness, first, 0);

  const std::vector<TestImage> second = make_frames(PixelFormat::Bgrx, 53, 41, 6, 20);
  push_frames(harness, second, 4);
  REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_eos()));
  pull_and_check(harness, second, 4);
  CHECK(gst_harness_try_pull(harness.get()) == nullptr);
  CHECK(stat_u64(harness.element(), "dropped") == 0);
  CHECK(stat_u64(harness.element(), "frames") == 10);
}

TEST_CASE("siftchain with depth 4 counts the frames in flight at stop as dropped",
          "[plugin][depth]") {
  Harness harness(chain_element(4));
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 20, 12).c_str());
  push_frames(harness, make_frames(PixelFormat::Gray8, 20, 12, 3, 9), 0);
  CHECK(gst_harness_try_pull(harness.get()) == nullptr);
  REQUIRE(gst_element_set_state(harness.element(), GST_STATE_NULL) == GST_STATE_CHANGE_SUCCESS);
  CHECK(stat_u64(harness.element(), "dropped") == 3);
  CHECK(stat_int(harness.element(), "in-flight") == 0);
  CHECK(stat_u64(harness.element(), "frames") == 0);
}

TEST_CASE("siftchain proposes a pool of frame memory and reads its frames in place",
          "[plugin][depth]") {
  GstElement* element = make_element("siftchain", {{"chain", kTwoMedians}, {"backend", "auto"}});
  g_object_set(element, "depth", 3, nullptr);
  Harness harness(element);
  const std::string caps_text = caps_string(PixelFormat::Gray8, 64, 48);
  gst_harness_set_src_caps_str(harness.get(), caps_text.c_str());

  GstCaps* caps = gst_caps_from_string(caps_text.c_str());
  GstQuery* query = gst_query_new_allocation(caps, TRUE);
  gst_caps_unref(caps);
  REQUIRE(gst_pad_peer_query(harness.get()->srcpad, query));
  REQUIRE(gst_query_get_n_allocation_pools(query) >= 1);
  GstBufferPool* pool = nullptr;
  guint size = 0, min_buffers = 0, max_buffers = 0;
  gst_query_parse_nth_allocation_pool(query, 0, &pool, &size, &min_buffers, &max_buffers);
  gst_query_unref(query);
  REQUIRE(pool != nullptr);
  CHECK(min_buffers == 3 + 2);
  REQUIRE(gst_buffer_pool_set_active(pool, TRUE));

  const GstVideoInfo info = video_info(PixelFormat::Gray8, 64, 48);
  std::vector<TestImage> frames;
  for (int i = 0; i < 9; ++i) {
    frames.push_back(make_frame(PixelFormat::Gray8, 64, 48, 500 + static_cast<std::uint32_t>(i)));
    GstBuffer* buffer = nullptr;
    REQUIRE(gst_buffer_pool_acquire_buffer(pool, &buffer, nullptr) == GST_FLOW_OK);
    CHECK(gst_memory_is_type(gst_buffer_peek_memory(buffer, 0), "StarsiftFrameMemory"));
    GstVideoFrame frame;
    REQUIRE(gst_video_frame_map(&frame, &info, buffer, GST_MAP_WRITE));
    for (int y = 0; y < 48; ++y) {
      std::memcpy(static_cast<guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0)) +
                      y * GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0),
                  frames.back().cview().row(y), 64);
    }
    gst_video_frame_unmap(&frame);
    GST_BUFFER_PTS(buffer) = static_cast<GstClockTime>(i) * kFrame;
    GST_BUFFER_DURATION(buffer) = kFrame;
    REQUIRE(gst_harness_push(harness.get(), buffer) == GST_FLOW_OK);
  }
  REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_eos()));
  pull_and_check(harness, frames, 0);
  // Page-locked where a GPU is usable (read in place), ordinary memory otherwise (copied).
  const bool pinned = starsift::cuda_unusable_reason(0).empty();
  CHECK(stat_u64(element, "zero-copy") == (pinned ? 9u : 0u));
  CHECK(stat_u64(element, "copied") == (pinned ? 0u : 9u));
  // The output buffers come from the element's own pool of frame memory: the engine writes
  // each result straight into them where that memory is page-locked.
  CHECK(stat_u64(element, "direct-out") == (pinned ? 9u : 0u));
  CHECK(stat_u64(element, "qos-dropped") == 0u);
  gst_buffer_pool_set_active(pool, FALSE);
  gst_object_unref(pool);
}
