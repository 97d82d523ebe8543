// SPDX-License-Identifier: LGPL-2.1-or-later
// The contract every starsift filter element keeps, whatever it filters: frames through the
// engine at every depth, caps that follow the chain's output (a chain whose output GStreamer
// cannot carry is refused, never written past a buffer), each stage's per-frame result on its
// buffer as a GstSiftResultMeta, the bit depth of GRAY16 reaching the stages, parameter
// changes applied live in frame order without a drain, format-dependent values refused while
// playing, and one error per failure.
#include <gst/gst.h>
#include <gst/video/video.h>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "element_support.hpp"
#include "pipeline/backend.hpp"
#include "pipeline/median/params.hpp"
#include "pipeline/whiten/stats.hpp"
#include "pipeline/whiten/whiten_stage.hpp"
#include "plugins/common/result_meta.hpp"

using starsift::BorderMode;
using starsift::MedianParams;
using starsift::PixelFormat;
using starsift::WhitenStats;
using namespace starsift::test;

namespace {

constexpr GstClockTime kFrame = GST_SECOND / 30;

void push(Harness& harness, const TestImage& frame, int index) {
  GstBuffer* buffer = to_buffer(frame);
  GST_BUFFER_PTS(buffer) = static_cast<GstClockTime>(index) * kFrame;
  GST_BUFFER_DURATION(buffer) = kFrame;
  REQUIRE(gst_harness_push(harness.get(), buffer) == GST_FLOW_OK);
}

guint64 stat_u64(GstElement* element, const char* field) {
  GstStructure* stats = nullptr;
  g_object_get(element, "stats", &stats, nullptr);
  REQUIRE(stats != nullptr);
  guint64 value = 0;
  CHECK(gst_structure_get_uint64(stats, field, &value));
  gst_structure_free(stats);
  return value;
}

int count_errors(GstBus* bus) {
  int errors = 0;
  while (GstMessage* message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
    ++errors;
    gst_message_unref(message);
  }
  return errors;
}

// The formats the element's sink pad offers now.
std::vector<std::string> sink_formats(GstElement* element) {
  GstPad* pad = gst_element_get_static_pad(element, "sink");
  GstCaps* caps = gst_pad_query_caps(pad, nullptr);
  gst_object_unref(pad);
  std::vector<std::string> formats;
  for (guint i = 0; i < gst_caps_get_size(caps); ++i) {
    const GValue* value = gst_structure_get_value(gst_caps_get_structure(caps, i), "format");
    if (value == nullptr) continue;
    if (G_VALUE_HOLDS_STRING(value)) formats.emplace_back(g_value_get_string(value));
    if (GST_VALUE_HOLDS_LIST(value)) {
      for (guint k = 0; k < gst_value_list_get_size(value); ++k) {
        formats.emplace_back(g_value_get_string(gst_value_list_get_value(value, k)));
      }
    }
  }
  gst_caps_unref(caps);
  return formats;
}

bool contains(const std::vector<std::string>& v, const char* s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("a chain whose output GStreamer cannot carry is refused at every depth",
          "[plugin][contract]") {
  init_gstreamer();
  for (int depth = 1; depth <= 8; ++depth) {
    INFO("depth " << depth);
    const std::string pipeline =
        "videotestsrc num-buffers=30 ! video/x-raw,format=GRAY16_LE,width=128,height=128 ! "
        "siftchain backend=cpu depth=" +
        std::to_string(depth) + " chain=\"[{whiten: {output: snr}}]\" ! fakesink";
    const PipelineResult result = run_pipeline(pipeline.c_str());
    CHECK_FALSE(result.eos);
    CHECK_THAT(result.error, Catch::Contains("stage 1 (whiten) writes GRAY32F") &&
                                 Catch::Contains("cannot carry"));
  }
  // A float frame between two stages is fine; the output is what matters.
  const PipelineResult mixed = run_pipeline(
      "videotestsrc num-buffers=3 ! video/x-raw,format=GRAY16_LE,width=64,height=64 ! "
      "siftchain backend=cpu chain=\"[{whiten: {output: float}}, {median: {size: 3}}]\" ! "
      "fakesink");
  CHECK_THAT(mixed.error, Catch::Contains("stage 1 (whiten) writes GRAY32F"));
}

TEST_CASE("a converting chain GStreamer can carry runs at every depth", "[plugin][contract]") {
  init_gstreamer();
  for (int depth = 1; depth <= 8; ++depth) {
    INFO("depth " << depth);
    const std::string pipeline =
        "videotestsrc num-buffers=30 ! video/x-raw,format=GRAY16_LE,width=128,height=128 ! "
        "siftchain backend=cpu depth=" +
        std::to_string(depth) +
        " chain=\"[{median: {size: 3}}, {whiten: {history: 4, output: residual}}]\" ! fakesink";
    const PipelineResult result = run_pipeline(pipeline.c_str());
    CHECK(result.error.empty());
    CHECK(result.eos);
  }
}

TEST_CASE("caps follow the chain: formats its stages cannot read are not offered",
          "[plugin][contract]") {
  init_gstreamer();
  GstElement* median = make_element("siftchain", {{"chain", "[{median: {size: 3}}]"}});
  const auto all = sink_formats(median);
  CHECK(contains(all, "RGBA"));
  CHECK(contains(all, "GRAY16_LE"));
  gst_object_unref(median);

  GstElement* whiten =
      make_element("siftchain", {{"chain", "[{median: {size: 3}}, {whiten: {history: 4}}]"}});
  const auto grey = sink_formats(whiten);
  CHECK(contains(grey, "GRAY8"));
  CHECK(contains(grey, "GRAY16_LE"));
  CHECK_FALSE(contains(grey, "RGBA"));
  CHECK_FALSE(contains(grey, "BGRA"));
  gst_object_unref(whiten);

  // videoconvert now picks a grey format instead of failing on BGRA.
  const PipelineResult result = run_pipeline(
      "videotestsrc num-buffers=4 ! video/x-raw,format=BGRA,width=64,height=48 ! videoconvert ! "
      "siftchain backend=cpu chain=\"[{whiten: {history: 3}}]\" ! fakesink");
  CHECK(result.error.empty());
  CHECK(result.eos);
}

TEST_CASE("each stage's per-frame result rides on its buffer, the same at depth 1 and 3",
          "[plugin][contract][result]") {
  init_gstreamer();
  const int frames = 10;
  std::vector<TestImage> inputs;
  for (int i = 0; i < frames; ++i) inputs.push_back(make_frame(PixelFormat::Gray16, 48, 32, i));
  std::vector<std::vector<WhitenStats>> by_depth;
  for (int depth : {1, 3}) {
    GstElement* element = make_element(
        "siftchain",
        {{"chain", "[{median: {size: 3}}, {whiten: {history: 3}}]"}, {"backend", "cpu"}});
    g_object_set(element, "depth", depth, nullptr);
    Harness harness(element);
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, 48, 32).c_str());
    for (int i = 0; i < frames; ++i) push(harness, inputs[i], i);
    gst_harness_push_event(harness.get(), gst_event_new_eos());
    std::vector<WhitenStats> stats;
    for (int i = 0; i < frames; ++i) {
      GstBuffer* out = gst_harness_pull(harness.get());
      REQUIRE(out != nullptr);
      CHECK(GST_BUFFER_PTS(out) == static_cast<GstClockTime>(i) * kFrame);
      const auto results = starsift::gst::buffer_results(out);
      REQUIRE(results.size() == 1);  // the median declares none
      CHECK(results[0].stage == 1);
      CHECK(results[0].stage_name == "whiten");
      CHECK(results[0].kind == starsift::kWhitenStatsKind);
      CHECK(results[0].overflow == 0);
      // The non-allocating reader finds the same record, and none of a kind not there.
      const auto last = starsift::gst::last_buffer_result(out, starsift::kWhitenStatsKind);
      REQUIRE(last.has_value());
      CHECK(last->stage == 1);
      CHECK(last->records == results[0].records);
      CHECK_FALSE(starsift::gst::last_buffer_result(out, "catalogue").has_value());
      const auto records = results[0].as<WhitenStats>();
      REQUIRE(records.size() == 1);
      CHECK(records[0].frame == static_cast<std::uint64_t>(i));
      stats.push_back(records[0]);
      // A whole copy of the buffer keeps its result.
      GstBuffer* copy = gst_buffer_copy(out);
      CHECK(starsift::gst::find_buffer_result(copy, starsift::kWhitenStatsKind).has_value());
      gst_buffer_unref(copy);
      gst_buffer_unref(out);
    }
    by_depth.push_back(stats);
  }
  for (int i = 0; i < frames; ++i) {
    INFO("frame " << i);
    CHECK(by_depth[0][i].history_used == by_depth[1][i].history_used);
    CHECK(by_depth[0][i].weight_sq_sum == by_depth[1][i].weight_sq_sum);
    CHECK(by_depth[0][i].rejected == by_depth[1][i].rejected);
  }
}

TEST_CASE("the bit depth of GRAY16 reaches the stages", "[plugin][contract][bit-depth]") {
  init_gstreamer();
  // warmup=zeros writes the zero level on the first frame: mid-range of the real bits.
  auto first_level = [](const char* bit_depth, const std::string& caps) {
    GstElement* element = make_element(
        "siftwhiten", {{"backend", "cpu"}, {"warmup", "zeros"}, {"bit-depth", bit_depth}});
    Harness harness(element);
    gst_harness_set_src_caps_str(harness.get(), caps.c_str());
    const TestImage out = push_and_pull(harness, make_frame(PixelFormat::Gray16, 32, 16, 3));
    return out.key(5, 5, 0);
  };
  const std::string plain = caps_string(PixelFormat::Gray16, 32, 16);
  CHECK(first_level("0", plain) == 32768u);
  CHECK(first_level("12", plain) == 2048u);
  CHECK(first_level("10", plain) == 512u);
  CHECK(first_level("0", plain + ",bit-depth=(int)12") == 2048u);   // what upstream says
  CHECK(first_level("14", plain + ",bit-depth=(int)12") == 8192u);  // the property wins

  // siftskysrc writes its bit depth into the caps.
  const PipelineResult sky = run_pipeline(
      "siftskysrc num-buffers=2 bit-depth=12 ! video/x-raw,width=64,height=48 ! "
      "siftwhiten backend=cpu bit-depth=0 ! fakesink");
  CHECK(sky.error.empty());
  CHECK(sky.eos);

  // A bit depth that does not fit the format is refused at caps, naming both.
  GstElement* element = make_element("siftmedian", {{"backend", "cpu"}, {"bit-depth", "12"}});
  Harness harness(element);
  GstBus* bus = harness.bus();
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 16, 16).c_str());
  GstBuffer* buffer = to_buffer(make_frame(PixelFormat::Gray8, 16, 16, 1));
  CHECK(gst_harness_push(harness.get(), buffer) != GST_FLOW_OK);
  GstMessage* message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  REQUIRE(message != nullptr);
  CHECK_THAT(parse_error(message).message, Catch::Contains("bit-depth 12 does not fit GRAY8"));
  gst_message_unref(message);
}

TEST_CASE("a property change at depth 3 applies from the next frame, without a drain",
          "[plugin][contract][live]") {
  init_gstreamer();
  const int depth = 3;
  const int frames = 10;
  const int changed_at = 5;
  GstElement* element = make_element("siftmedian", {{"backend", "cpu"}, {"size", "3"}});
  g_object_set(element, "depth", depth, nullptr);
  Harness harness(element);
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 40, 24).c_str());
  std::vector<TestImage> inputs;
  for (int i = 0; i < frames; ++i) inputs.push_back(make_frame(PixelFormat::Gray8, 40, 24, 10 + i));
  for (int i = 0; i < frames; ++i) {
    if (i == changed_at) g_object_set(element, "size", 7, nullptr);
    push(harness, inputs[i], i);
    // No drain: the frames in flight stay in flight.
    CHECK(gst_harness_buffers_received(harness.get()) ==
          static_cast<guint>(std::max(0, i + 1 - (depth - 1))));
  }
  gst_harness_push_event(harness.get(), gst_event_new_eos());
  for (int i = 0; i < frames; ++i) {
    INFO("frame " << i);
    GstBuffer* out = gst_harness_pull(harness.get());
    REQUIRE(out != nullptr);
    const TestImage got = from_buffer(out, PixelFormat::Gray8, 40, 24);
    gst_buffer_unref(out);
    const int size = i < changed_at ? 3 : 7;
    check_same(got, median_of({size, BorderMode::Reflect101, 0.0}, inputs[i]));
  }
}

TEST_CASE("siftchain diffs a new chain stage by stage", "[plugin][contract][live]") {
  init_gstreamer();
  GstElement* element = make_element(
      "siftchain",
      {{"chain", "[{median: {size: 3}}, {whiten: {history: 4}}]"}, {"backend", "cpu"}});
  g_object_set(element, "depth", 3, nullptr);
  Harness harness(element);
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, 32, 24).c_str());
  int index = 0;
  auto push_some = [&](int n) {
    for (int k = 0; k < n; ++k, ++index) {
      push(harness, make_frame(PixelFormat::Gray16, 32, 24, 100 + index), index);
    }
  };
  push_some(4);
  // Live: the median's size and whitening's gamma change, in place.
  g_object_set(element, "chain", "[{median: {size: 5}}, {whiten: {history: 4, gamma: 1e-3}}]",
               nullptr);
  push_some(3);
  CHECK(stat_u64(element, "live-updates") == 2);
  CHECK(stat_u64(element, "stages-replaced") == 0);
  CHECK(stat_u64(element, "dropped") == 0);
  // Restart: whitening's history length; only that stage starts over.
  g_object_set(element, "chain", "[{median: {size: 5}}, {whiten: {history: 6, gamma: 1e-3}}]",
               nullptr);
  push_some(3);
  CHECK(stat_u64(element, "live-updates") == 3);
  CHECK(stat_u64(element, "dropped") == 0);
  // Another filter in the first stage hands back another result: a new engine, after the
  // frames in flight (none dropped).
  g_object_set(element, "chain", "[{whiten: {history: 3}}, {whiten: {history: 6, gamma: 1e-3}}]",
               nullptr);
  push_some(3);
  CHECK(stat_u64(element, "dropped") == 0);
  gst_harness_push_event(harness.get(), gst_event_new_eos());
  REQUIRE(gst_harness_buffers_received(harness.get()) == static_cast<guint>(index));
  // The last stage's history: kept through the live change, started over by the restart and
  // by the new engine.
  const std::vector<std::uint64_t> expected = {0, 1, 2, 3, 4, 5, 6, 0, 1, 2, 0, 1, 2};
  for (int i = 0; i < index; ++i) {
    GstBuffer* out = gst_harness_pull(harness.get());
    REQUIRE(out != nullptr);
    const auto results = starsift::gst::buffer_results(out);
    REQUIRE_FALSE(results.empty());
    const auto last = results.back();
    CHECK(last.stage == 1);
    INFO("frame " << i);
    CHECK(last.as<WhitenStats>()[0].frame == expected[i]);
    gst_buffer_unref(out);
  }
}

TEST_CASE("values that do not fit the negotiated format are refused while playing",
          "[plugin][contract]") {
  init_gstreamer();
  {
    Harness harness("siftmedian", {{"backend", "cpu"}, {"border", "constant"}});
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 16, 8).c_str());
    push_and_pull(harness, make_frame(PixelFormat::Gray8, 16, 8, 1));
    WarningCapture warnings;
    g_object_set(harness.element(), "border-value", 300.0, nullptr);
    double value = -1;
    g_object_get(harness.element(), "border-value", &value, nullptr);
    CHECK(value == 0.0);
    CHECK_THAT(warnings.all(), Catch::Contains("border-value"));
    push_and_pull(harness, make_frame(PixelFormat::Gray8, 16, 8, 2));  // still running
  }
  {
    Harness harness("siftwhiten", {{"backend", "cpu"}});
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 32, 16).c_str());
    push_and_pull(harness, make_frame(PixelFormat::Gray8, 32, 16, 1));
    WarningCapture warnings;
    g_object_set(harness.element(), "offset", 300.0, nullptr);
    double value = 0;
    g_object_get(harness.element(), "offset", &value, nullptr);
    CHECK(value == -1.0);
    CHECK_THAT(warnings.all(), Catch::Contains("offset"));
    push_and_pull(harness, make_frame(PixelFormat::Gray8, 32, 16, 2));
  }
  {
    Harness harness("siftchain", {{"backend", "cpu"}, {"chain", "[{median: {size: 3}}]"}});
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 16, 8).c_str());
    push_and_pull(harness, make_frame(PixelFormat::Gray8, 16, 8, 1));
    WarningCapture warnings;
    g_object_set(harness.element(), "chain",
                 "[{median: {size: 3, border: constant, border-value: 256}}]", nullptr);
    CHECK_THAT(string_property(harness.element(), "chain"), Catch::Equals("[{median: {size: 3}}]"));
    CHECK_THAT(warnings.all(), Catch::Contains("border-value"));
    push_and_pull(harness, make_frame(PixelFormat::Gray8, 16, 8, 2));
  }
}

TEST_CASE("one failure posts one error", "[plugin][contract]") {
  init_gstreamer();
  if (starsift::cuda_unusable_reason(0).empty()) {
    SUCCEED("a CUDA device is usable here: backend=cuda does not fail");
    return;
  }
  GstElement* element = make_element("siftmedian", {{"backend", "cpu"}});
  g_object_set(element, "depth", 3, nullptr);
  Harness harness(element);
  GstBus* bus = harness.bus();
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 16, 8).c_str());
  for (int i = 0; i < 4; ++i) push(harness, make_frame(PixelFormat::Gray8, 16, 8, i), i);
  gst_util_set_object_arg(G_OBJECT(element), "backend", "cuda");
  for (int i = 4; i < 10; ++i) {
    GstBuffer* buffer = to_buffer(make_frame(PixelFormat::Gray8, 16, 8, i));
    CHECK(gst_harness_push(harness.get(), buffer) == GST_FLOW_ERROR);
  }
  gst_harness_push_event(harness.get(), gst_event_new_eos());
  CHECK(count_errors(bus) == 1);
}
