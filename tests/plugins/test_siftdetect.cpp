// SPDX-License-Identifier: LGPL-2.1-or-later
// siftdetect element tests: the catalogue, tracks and ROI metas on every buffer, the movers
// of the synthetic sky confirmed as tracks after `confirm` frames, messages (rate-limited),
// the JSON lines file (one valid line per frame, a file per pattern), caps of the output
// modes, refused values, the whole science chain in a pipeline, a broken trail merged
// into one object (merge-streaks) with its labels renumbered to match, two overlapping stars
// flagged merged, the overlay's ellipses and tails drawn once a mover is confirmed, and on
// CUDA the input buffer handed on with its catalogue (output: input: no copy, no download).
#include <gst/gst.h>
#include <gst/video/video.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "detect_frames.hpp"
#include "element_support.hpp"
#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/overlay_draw.hpp"
#include "pipeline/detect/params.hpp"
#include "pipeline/detect/tracker.hpp"
#include "pipeline/sky/sky_generator.hpp"
#include "plugins/common/result_meta.hpp"

using starsift::DetectedObject;
using starsift::PixelFormat;
using starsift::Track;
using namespace starsift::test;

namespace {

std::string temp_path(const char* name) {
  return std::string(g_get_tmp_dir()) + "/starsift_test_detect_" + std::to_string(getpid()) + "_" +
         name;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("siftdetect publishes the catalogue, tracks and regions on every buffer",
          "[plugin][detect]") {
  init_gstreamer();
  const int frames = 10;
  const auto inputs = sky_frames(frames, 256, 192);
  const std::string json = temp_path("metas.jsonl");
  std::remove(json.c_str());
  GstElement* element = make_element(
      "siftdetect", {{"backend", "cpu"}, {"json-file", json.c_str()}, {"post-messages", "true"}});
  Harness harness(element);
  GstBus* bus = harness.bus();
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, 256, 192).c_str());
  int movers_seen = 0;
  for (int i = 0; i < frames; ++i) {
    GstBuffer* in = to_buffer(inputs[i]);
    GST_BUFFER_PTS(in) = i * kFrame;
    const GstMemory* sent = gst_buffer_peek_memory(in, 0);
    REQUIRE(gst_harness_push(harness.get(), in) == GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(harness.get());
    REQUIRE(out != nullptr);
    INFO("frame " << i);
    // The frame itself passes unchanged (output: input): the input's own memory goes on.
    CHECK(gst_buffer_peek_memory(out, 0) == sent);
    CHECK(from_buffer(out, PixelFormat::Gray16, 256, 192).same_pixels(inputs[i]));
    const auto catalogue = starsift::gst::find_buffer_result(out, starsift::kCatalogueKind);
    REQUIRE(catalogue.has_value());
    const auto objects = catalogue->as<DetectedObject>();
    CHECK(objects.size() == 3);  // the three movers, nothing else
    const auto tracks = starsift::gst::find_buffer_result(out, "tracks");
    REQUIRE(tracks.has_value());
    const auto movers = tracks->as<Track>();
    // Confirmed from the third detection on (confirm = 3): then every object is a mover.
    if (i >= 2) {
      CHECK(movers.size() == 3);
      for (const DetectedObject& o : objects) CHECK(o.track >= 0);
      for (const Track& t : movers) {
        CHECK(std::hypot(t.vx, t.vy) > 0.7);
        CHECK(std::hypot(t.vx, t.vy) < 2.5);
        CHECK(std::hypot(t.vx_s, t.vy_s) == Approx(30.0 * std::hypot(t.vx, t.vy)).epsilon(0.02));
      }
    } else {
      CHECK(movers.empty());
    }
    movers_seen = static_cast<int>(movers.size());
    int regions = 0;
    gpointer state = nullptr;
    while (GstMeta* meta = gst_buffer_iterate_meta_filtered(
               out, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
      auto* roi = reinterpret_cast<GstVideoRegionOfInterestMeta*>(meta);
      CHECK(g_quark_to_string(roi->roi_type) == std::string("object"));
      CHECK(gst_video_region_of_interest_meta_get_param(roi, "starsift-object") != nullptr);
      ++regions;
    }
    CHECK(regions == static_cast<int>(objects.size()));
    gst_buffer_unref(out);
  }
  CHECK(movers_seen == 3);
  // One message per frame.
  int messages = 0;
  while (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT)) {
    if (gst_structure_has_name(gst_message_get_structure(m), "siftdetect")) ++messages;
    gst_message_unref(m);
  }
  CHECK(messages == frames);
  GstStructure* stats = nullptr;
  g_object_get(harness.element(), "stats", &stats, nullptr);
  REQUIRE(stats != nullptr);
  guint64 value = 0;
  CHECK(gst_structure_get_uint64(stats, "frames", &value));
  CHECK(value == static_cast<guint64>(frames));
  CHECK(gst_structure_get_uint64(stats, "tracks-confirmed", &value));
  CHECK(value == 3);
  CHECK(gst_structure_get_uint64(stats, "json-lines", &value));
  CHECK(value == static_cast<guint64>(frames));
  gst_structure_free(stats);
  // The JSON lines: one per frame, in order, with the schema's fields.
  const auto lines = read_lines(json);
  REQUIRE(lines.size() == static_cast<std::size_t>(frames));
  for (int i = 0; i < frames; ++i) {
    CHECK(lines[i].rfind("{\"frame\":" + std::to_string(i) + ",", 0) == 0);
    CHECK(lines[i].find("\"pts_ns\":" + std::to_string(i * kFrame)) != std::string::npos);
    CHECK(lines[i].find("\"utc\":\"20") != std::string::npos);
    CHECK(lines[i].find("\"objects\":[{\"id\":1,") != std::string::npos);
    CHECK(lines[i].back() == '}');
  }
  std::remove(json.c_str());
}

TEST_CASE("siftdetect backend=cuda hands the input on with its catalogue (where a GPU is usable)",
          "[plugin][detect][cuda]") {
  if (!cuda_usable_or_skip()) return;
  init_gstreamer();
  const int frames = 6;
  const auto inputs = sky_frames(frames, 256, 192);
  for (const char* depth : {"1", "3"}) {
    INFO("depth " << depth);
    Harness harness("siftdetect", {{"backend", "cuda"}, {"depth", depth}});
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, 256, 192).c_str());
    std::vector<const GstMemory*> sent;
    for (int i = 0; i < frames; ++i) {
      GstBuffer* in = to_buffer(inputs[i]);
      GST_BUFFER_PTS(in) = i * kFrame;
      sent.push_back(gst_buffer_peek_memory(in, 0));
      REQUIRE(gst_harness_push(harness.get(), in) == GST_FLOW_OK);
    }
    gst_harness_push_event(harness.get(), gst_event_new_eos());  // the frames in flight
    for (int i = 0; i < frames; ++i) {
      GstBuffer* out = gst_harness_pull(harness.get());
      REQUIRE(out != nullptr);
      INFO("frame " << i);
      CHECK(gst_buffer_peek_memory(out, 0) == sent[i]);
      CHECK(from_buffer(out, PixelFormat::Gray16, 256, 192).same_pixels(inputs[i]));
      const auto catalogue = starsift::gst::find_buffer_result(out, starsift::kCatalogueKind);
      REQUIRE(catalogue.has_value());
      CHECK(catalogue->as<DetectedObject>().size() == 3);
      gst_buffer_unref(out);
    }
    CHECK(string_property(harness.element(), "active-backend") == "cuda:0");
  }
}

TEST_CASE("siftdetect messages are rate-limited", "[plugin][detect]") {
  init_gstreamer();
  const auto inputs = sky_frames(6, 64, 48);
  Harness harness("siftdetect", {{"backend", "cpu"},
                                 {"post-messages", "true"},
                                 {"message-interval", "100000"},
                                 {"roi-metas", "false"}});
  GstBus* bus = harness.bus();
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, 64, 48).c_str());
  for (const TestImage& in : inputs) {
    GstBuffer* out = gst_harness_push_and_pull(harness.get(), to_buffer(in));
    REQUIRE(out != nullptr);
    CHECK(gst_buffer_get_meta(out, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE) == nullptr);
    gst_buffer_unref(out);
  }
  int messages = 0;
  while (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT)) {
    ++messages;
    gst_message_unref(m);
  }
  CHECK(messages == 1);
}

TEST_CASE("siftdetect output modes set the caps", "[plugin][detect]") {
  init_gstreamer();
  const PipelineResult labels = run_pipeline(
      "siftskysrc num-buffers=3 movers=2 ! video/x-raw,width=64,height=48 ! "
      "siftdetect backend=cpu output=labels ! video/x-raw,format=GRAY16_LE ! fakesink");
  CHECK(labels.error.empty());
  CHECK(labels.eos);
  const PipelineResult overlay = run_pipeline(
      "siftskysrc num-buffers=3 movers=2 ! video/x-raw,width=64,height=48 ! "
      "siftdetect backend=cpu output=overlay ! video/x-raw,format=GRAY8 ! fakesink");
  CHECK(overlay.error.empty());
  CHECK(overlay.eos);
}

TEST_CASE("siftdetect refuses values it cannot use", "[plugin][detect]") {
  init_gstreamer();
  GstElement* element = make_element("siftdetect", {});
  WarningCapture warnings;
  g_object_set(element, "connectivity", 6, "threshold", 0.0, nullptr);
  gint connectivity = 0;
  gdouble threshold = 0.0;
  g_object_get(element, "connectivity", &connectivity, "threshold", &threshold, nullptr);
  CHECK(connectivity == 8);
  CHECK(threshold == starsift::DetectParams::kDefaultThreshold);
  CHECK_THAT(warnings.all(), Catch::Contains("connectivity") && Catch::Contains("threshold"));
  // The line channel: odd lengths from 5, or 0; a refused value leaves the one before.
  g_object_set(element, "line-length", 15, "line-threshold", 6.0, nullptr);
  g_object_set(element, "line-length", 16, nullptr);
  gint line_length = 0;
  gdouble line_threshold = 0.0;
  g_object_get(element, "line-length", &line_length, "line-threshold", &line_threshold, nullptr);
  CHECK(line_length == 15);
  CHECK(line_threshold == 6.0);
  CHECK_THAT(warnings.all(), Catch::Contains("line-length") && Catch::Contains("5..63"));
  gst_object_unref(element);
}

TEST_CASE("the science chain runs: siftskysrc ! siftwhiten ! siftdetect", "[plugin][detect]") {
  init_gstreamer();
  const std::string json = temp_path("chain-%Y.jsonl");
  const PipelineResult result = run_pipeline(
      ("siftskysrc num-buffers=24 movers=3 mover-snr-min=15 mover-snr-max=30 ! "
       "video/x-raw,width=256,height=192 ! siftwhiten backend=cpu ! siftdetect backend=cpu "
       "json-file=" +
       json + " ! fakesink")
          .c_str());
  CHECK(result.error.empty());
  CHECK(result.eos);
  // The pattern's %Y became the year: a file per year here.
  GDateTime* now = g_date_time_new_now_utc();
  const std::string written =
      temp_path(("chain-" + std::to_string(g_date_time_get_year(now)) + ".jsonl").c_str());
  g_date_time_unref(now);
  const auto lines = read_lines(written);
  CHECK(lines.size() == 24);
  std::remove(written.c_str());
}

TEST_CASE("siftwhiten output=significance puts its scale on the caps", "[plugin][detect]") {
  init_gstreamer();
  struct Case {
    const char* output;
    const char* caps_extra;
    double offset, gain;  // gain 0: no scale on the caps
  };
  for (const Case& c :
       {Case{"significance", "", 32768.0, 1024.0},
        Case{"significance", ",bit-depth=(int)12", 2048.0, 64.0}, Case{"residual", "", 0.0, 0.0}}) {
    INFO(c.output << c.caps_extra);
    GstElement* element =
        make_element("siftwhiten", {{"backend", "cpu"}, {"output", c.output}, {"history", "2"}});
    Harness harness(element);
    gst_harness_set_src_caps_str(harness.get(),
                                 (caps_string(PixelFormat::Gray16, 64, 48) + c.caps_extra).c_str());
    REQUIRE(gst_harness_push(harness.get(),
                             to_buffer(make_frame(PixelFormat::Gray16, 64, 48, 1))) == GST_FLOW_OK);
    GstBuffer* out = gst_harness_pull(harness.get());
    REQUIRE(out != nullptr);
    gst_buffer_unref(out);
    GstCaps* caps = gst_pad_get_current_caps(harness.get()->sinkpad);
    REQUIRE(caps != nullptr);
    const GstStructure* s = gst_caps_get_structure(caps, 0);
    double offset = 0.0, gain = 0.0;
    CHECK(static_cast<bool>(gst_structure_get_double(s, "significance-gain", &gain)) ==
          (c.gain != 0.0));
    gst_structure_get_double(s, "significance-offset", &offset);
    CHECK(gain == c.gain);
    CHECK(offset == c.offset);
    gst_caps_unref(caps);
  }
}

TEST_CASE("siftdetect background=auto thresholds in the caps' significance scale",
          "[plugin][detect]") {
  init_gstreamer();
  // A flat significance image (sd 0.1 sigma) with one blob of 1 sigma at its peak: in the
  // scale whitening wrote (1024 levels a sigma) the 3 x 3 filter makes it ~2.7 sigma, under the
  // threshold; read as a plain frame, the mesh measures a noise of ~100 levels and the blob is
  // a ~27 sigma object.
  const int w = 128, h = 96;
  const TestImage frame = star_frame(w, h, 32768.0, 102.4, 5, {{60.3, 40.7, 2.0, 1024.0}});
  auto objects_found = [&](const std::string& caps) {
    GstElement* element = make_element("siftdetect", {{"backend", "cpu"}});
    Harness harness(element);
    gst_harness_set_src_caps_str(harness.get(), caps.c_str());
    const Detected d = push_and_pull(harness.get(), to_buffer(frame));
    gst_buffer_unref(d.buffer);
    return d.objects.size();
  };
  const std::string plain = caps_string(PixelFormat::Gray16, w, h);
  CHECK(objects_found(plain) == 1);
  CHECK(objects_found(plain +
                      ",significance-offset=(double)32768,significance-gain=(double)1024") == 0);
  // A tenth of the gain: the blob is 10 sigma.
  CHECK(objects_found(plain +
                      ",significance-offset=(double)32768,significance-gain=(double)102.4") == 1);
}

TEST_CASE("siftdetect merge-streaks makes a broken trail one object", "[plugin][detect]") {
  init_gstreamer();
  const int w = 256, h = 192;
  const TestImage frame = broken_trail_frame(w, h);
  const double dx = 190.0, dy = 70.0, length = std::hypot(dx, dy);
  GstElement* defaults = make_element("siftdetect", {});
  gboolean merge = FALSE;
  g_object_get(defaults, "merge-streaks", &merge, nullptr);
  CHECK(merge == TRUE);  // on by default
  gst_object_unref(defaults);

  auto objects_found = [&](const char* merge_streaks) {
    Harness harness("siftdetect", {{"backend", "cpu"}, {"merge-streaks", merge_streaks}});
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, w, h).c_str());
    const auto [out, objects] = push_and_pull(harness.get(), to_buffer(frame));
    int regions = 0;
    gpointer state = nullptr;
    while (
        gst_buffer_iterate_meta_filtered(out, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE)) {
      ++regions;
    }
    CHECK(regions == static_cast<int>(objects.size()));  // the ROIs follow the catalogue
    gst_buffer_unref(out);
    return objects;
  };
  const auto pieces = objects_found("false");
  REQUIRE(pieces.size() == 2);
  for (const DetectedObject& o : pieces) CHECK((o.flags & starsift::kObjectStreakMerged) == 0);
  const auto merged = objects_found("true");
  REQUIRE(merged.size() == 1);
  const DetectedObject& m = merged[0];
  CHECK(m.id == 1);
  CHECK((m.flags & starsift::kObjectStreakMerged) != 0);
  CHECK(m.npix == pieces[0].npix + pieces[1].npix);
  CHECK(m.flux == Approx(pieces[0].flux + pieces[1].flux).epsilon(1e-5));
  CHECK(m.length == Approx(length).epsilon(0.05));
  CHECK(std::fabs(m.theta - std::atan2(dy, dx)) < 0.01);
}

TEST_CASE("siftdetect flags two overlapping stars merged, in its catalogue and its JSON line",
          "[plugin][detect]") {
  init_gstreamer();
  // Two stars 6 px apart whose light joins them into one object, and a star on its own.
  const int w = 256, h = 192;
  const TestImage frame =
      star_frame(w, h, 1000.0, 10.0, 5,
                 {{80.2, 90.6, 1.5, 400.0}, {86.1, 91.3, 1.5, 300.0}, {180.4, 60.2, 1.5, 400.0}});
  const std::string json = temp_path("merged.jsonl");
  std::remove(json.c_str());
  {
    Harness harness("siftdetect", {{"backend", "cpu"}, {"json-file", json.c_str()}});
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, w, h).c_str());
    const auto [out, objects] = push_and_pull(harness.get(), to_buffer(frame));
    gst_buffer_unref(out);
    REQUIRE(objects.size() == 2);
    // Raster order: the pair's object first (its first pixel is higher in the frame).
    const DetectedObject& pair = objects[0].x < 130.0f ? objects[0] : objects[1];
    const DetectedObject& single = objects[0].x < 130.0f ? objects[1] : objects[0];
    CHECK((pair.flags & starsift::kObjectMerged) != 0);
    CHECK((single.flags & starsift::kObjectMerged) == 0);
  }
  const auto lines = read_lines(json);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("\"flags\":2") != std::string::npos);
  CHECK(lines[0].find("\"flags\":0") != std::string::npos);
  std::remove(json.c_str());
}

TEST_CASE("siftdetect output=labels numbers the pixels like the merged catalogue",
          "[plugin][detect]") {
  init_gstreamer();
  // The two pieces of the broken trail (ids 1, 2) and a star after them (id 3): merged, the
  // trail is 1 and the star 2, in the catalogue and in the label frame alike.
  const int w = 256, h = 192;
  const TestImage frame = broken_trail_frame(w, h, true);
  struct Run {
    std::vector<DetectedObject> objects;
    TestImage labels{1, 1, PixelFormat::Gray16};
  };
  auto run = [&](const char* merge_streaks) {
    Harness harness("siftdetect",
                    {{"backend", "cpu"}, {"output", "labels"}, {"merge-streaks", merge_streaks}});
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, w, h).c_str());
    const Detected d = push_and_pull(harness.get(), to_buffer(frame));
    Run r{d.objects, from_buffer(d.buffer, PixelFormat::Gray16, w, h)};
    gst_buffer_unref(d.buffer);
    return r;
  };
  const Run pieces = run("false");
  REQUIRE(pieces.objects.size() == 3);
  const Run merged = run("true");
  REQUIRE(merged.objects.size() == 2);
  REQUIRE((merged.objects[0].flags & starsift::kObjectStreakMerged) != 0);
  REQUIRE(merged.objects[1].npix == pieces.objects[2].npix);  // the star, now id 2
  std::vector<std::uint32_t> count(4, 0);
  for (int y = 0; y < h; ++y) {
    const auto* before = pieces.labels.cview().row_as<std::uint16_t>(y);
    const auto* after = merged.labels.cview().row_as<std::uint16_t>(y);
    for (int x = 0; x < w; ++x) {
      const std::uint16_t expected = before[x] == 0 ? 0 : before[x] <= 2 ? 1 : 2;
      if (after[x] != expected) {
        FAIL_CHECK("(" << x << ", " << y << "): " << after[x] << ", expected " << expected);
      }
      ++count[std::min<std::size_t>(after[x], 3)];
    }
  }
  // Each id's pixels are its record's.
  CHECK(count[1] == merged.objects[0].npix);
  CHECK(count[2] == merged.objects[1].npix);
  CHECK(count[3] == 0);
}

TEST_CASE("siftdetect output=overlay draws ellipses, and a mover's tail once it is confirmed",
          "[plugin][detect]") {
  init_gstreamer();
  // One round blob moving 4 px/frame along the row y = 48 on a noisy flat sky.
  const int w = 128, h = 96, frames = 6;
  const double y0 = 48.0;
  auto x_at = [](int i) { return 20.0 + 4.0 * i; };
  Harness harness("siftdetect", {{"backend", "cpu"}, {"output", "overlay"}});
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, w, h).c_str());
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0.0, 10.0);
  for (int i = 0; i < frames; ++i) {
    INFO("frame " << i);
    TestImage in = make_frame(PixelFormat::Gray16, w, h, 0);
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const double r2 = (x - x_at(i)) * (x - x_at(i)) + (y - y0) * (y - y0);
        const double v = 1000.0 + noise(rng) + 600.0 * std::exp(-r2 / (2 * 1.5 * 1.5));
        in.view().row_as<std::uint16_t>(y)[x] = static_cast<std::uint16_t>(std::lround(v));
      }
    }
    GstBuffer* in_buffer = to_buffer(in);
    GST_BUFFER_PTS(in_buffer) = i * kFrame;
    const Detected d = push_and_pull(harness.get(), in_buffer);
    REQUIRE(d.objects.size() == 1);
    const DetectedObject o = d.objects[0];
    const TestImage overlay = from_buffer(d.buffer, PixelFormat::Gray8, w, h);
    gst_buffer_unref(d.buffer);
    auto at = [&](int x, int y) { return overlay.cview().row_as<std::uint8_t>(y)[x]; };
    auto on_box = [&](int x, int y) {
      return (x == o.xmin || x == o.xmax) && y >= o.ymin && y <= o.ymax ||
             (y == o.ymin || y == o.ymax) && x >= o.xmin && x <= o.xmax;
    };
    // The ellipse at 3 a, 3 b: drawn pixels next to its exact outline all round, but where
    // the box, the tail or the cross (drawn over it) cross it.
    const double rx = starsift::kOverlayEllipseScale * o.a;
    const double ry = starsift::kOverlayEllipseScale * o.b;
    const double c = std::cos(o.theta), s = std::sin(o.theta);
    int ellipse_hits = 0;
    for (int k = 0; k < 36; ++k) {
      const double t = 2.0 * M_PI * k / 36.0;
      const double u = rx * std::cos(t), v = ry * std::sin(t);
      const long px = std::lround(o.x + u * c - v * s), py = std::lround(o.y + u * s + v * c);
      bool hit = false;
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          hit = hit || at(static_cast<int>(px) + dx, static_cast<int>(py) + dy) ==
                           starsift::kOverlayEllipseLevel;
        }
      }
      ellipse_hits += hit ? 1 : 0;
    }
    CHECK(ellipse_hits >= 30);
    // Track pixels (255) other than the box: none before the mover is confirmed (the third
    // frame, confirm = 3), then along its path from its first position to where it is.
    int off_path = 0, track_pixels = 0;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        if (at(x, y) != starsift::kOverlayTrackLevel || on_box(x, y)) continue;
        ++track_pixels;
        // The tail along the path, and the cross one frame ahead (2 px arms).
        const bool path = std::abs(y - y0) <= 1.0 && x >= x_at(0) - 1.0 && x <= x_at(i) + 1.0;
        const bool cross = std::abs(y - y0) <= 3.0 && std::abs(x - x_at(i + 1)) <= 3.0;
        if (!path && !cross) ++off_path;
      }
    }
    CHECK(off_path == 0);
    if (i < 2) {
      CHECK(track_pixels == 0);
      continue;
    }
    // Confirmed: every column of the path behind the object (outside its box) has a tail
    // pixel on the mover's row or next to it.
    for (int x = static_cast<int>(x_at(0)); x < o.xmin; ++x) {
      bool tail = false;
      for (int y = 47; y <= 49; ++y) tail = tail || at(x, y) == starsift::kOverlayTrackLevel;
      if (!tail) FAIL_CHECK("no tail pixel in column " << x);
    }
    CHECK(track_pixels >= static_cast<int>(o.xmin - x_at(0)));
  }
}
