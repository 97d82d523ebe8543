// SPDX-License-Identifier: LGPL-2.1-or-later
// A siftchain whose chain ends in `detect` runs siftdetect's host steps on its catalogue: the
// same merged records, track ids and movers as siftdetect on the same frames, the chain's
// merge-streaks and tracker keys taken, labels renumbered like the merged catalogue, tracks
// restarted by a flush, and the movers in the stats.
#include <gst/gst.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "detect_frames.hpp"
#include "element_support.hpp"
#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/tracker.hpp"
#include "plugins/common/result_meta.hpp"

using starsift::DetectedObject;
using starsift::PixelFormat;
using starsift::Track;
using namespace starsift::test;

namespace {

// What one frame's buffer carries after detection: the catalogue and the movers.
struct Linked {
  std::vector<DetectedObject> objects;
  std::vector<Track> tracks;
};

// Pushes `frames` (each stamped kFrame apart) through `harness` and reads back every output.
std::vector<Linked> run_frames(Harness& harness, const std::vector<TestImage>& frames) {
  std::vector<Linked> out;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    GstBuffer* in = to_buffer(frames[i]);
    GST_BUFFER_PTS(in) = i * kFrame;
    const Detected detected = push_and_pull(harness.get(), in);
    const auto tracks = starsift::gst::find_buffer_result(detected.buffer, "tracks");
    REQUIRE(tracks.has_value());
    const auto movers = tracks->as<Track>();
    out.push_back({detected.objects, {movers.begin(), movers.end()}});
    gst_buffer_unref(detected.buffer);
  }
  return out;
}

void check_same_frames(const std::vector<Linked>& chain, const std::vector<Linked>& detect) {
  REQUIRE(chain.size() == detect.size());
  for (std::size_t f = 0; f < chain.size(); ++f) {
    INFO("frame " << f);
    REQUIRE(chain[f].objects.size() == detect[f].objects.size());
    for (std::size_t i = 0; i < chain[f].objects.size(); ++i) {
      const DetectedObject& a = chain[f].objects[i];
      const DetectedObject& b = detect[f].objects[i];
      CHECK(a.id == b.id);
      CHECK(a.x == b.x);
      CHECK(a.y == b.y);
      CHECK(a.flux == b.flux);
      CHECK(a.track == b.track);
    }
    REQUIRE(chain[f].tracks.size() == detect[f].tracks.size());
    for (std::size_t i = 0; i < chain[f].tracks.size(); ++i) {
      CHECK(chain[f].tracks[i].id == detect[f].tracks[i].id);
      CHECK(chain[f].tracks[i].x == detect[f].tracks[i].x);
      CHECK(chain[f].tracks[i].vx == detect[f].tracks[i].vx);
      CHECK(chain[f].tracks[i].vx_s == detect[f].tracks[i].vx_s);
    }
  }
}

guint chain_movers(Harness& harness) {
  GstStructure* stats = nullptr;
  g_object_get(harness.element(), "stats", &stats, nullptr);
  REQUIRE(stats != nullptr);
  guint movers = 0;
  CHECK(gst_structure_get_uint(stats, "movers", &movers));
  gst_structure_free(stats);
  return movers;
}

}  // namespace

TEST_CASE("siftchain ending in detect links its catalogue as siftdetect does",
          "[plugin][chain][detect]") {
  init_gstreamer();
  const int w = 128, h = 96;
  const auto frames = sky_frames(12, w, h);
  const std::string caps = caps_string(PixelFormat::Gray16, w, h);
  for (const int confirm : {3, 5}) {
    INFO("confirm " << confirm);
    const std::string yaml = "[{detect: {confirm: " + std::to_string(confirm) + ", gate: 4}}]";
    const std::string confirm_text = std::to_string(confirm);
    Harness chain("siftchain", {{"backend", "cpu"}, {"chain", yaml.c_str()}});
    Harness detect("siftdetect", {{"backend", "cpu"},
                                  {"confirm", confirm_text.c_str()},
                                  {"gate", "4"},
                                  {"roi-metas", "false"}});
    gst_harness_set_src_caps_str(chain.get(), caps.c_str());
    gst_harness_set_src_caps_str(detect.get(), caps.c_str());
    const auto from_chain = run_frames(chain, frames);
    check_same_frames(from_chain, run_frames(detect, frames));
    // Nothing is a mover before `confirm` detections; the sky's three are by the end.
    for (int f = 0; f + 1 < confirm; ++f) CHECK(from_chain[f].tracks.empty());
    CHECK(from_chain.back().tracks.size() == 3);
    int tracked = 0;
    for (const DetectedObject& o : from_chain.back().objects) tracked += o.track >= 0 ? 1 : 0;
    CHECK(tracked == 3);
    CHECK(chain_movers(chain) == 3);
  }
}

TEST_CASE("siftchain ending in detect merges a broken trail, and its labels follow",
          "[plugin][chain][detect]") {
  init_gstreamer();
  const int w = 256, h = 192;
  const TestImage frame = broken_trail_frame(w, h, true);
  const auto objects_found = [&](const std::string& detect_keys) {
    const std::string yaml = "[{detect: {" + detect_keys + "}}]";
    Harness harness("siftchain", {{"backend", "cpu"}, {"chain", yaml.c_str()}});
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, w, h).c_str());
    const Detected detected = push_and_pull(harness.get(), to_buffer(frame));
    std::uint16_t top_label = 0;
    if (detect_keys.find("labels") != std::string::npos) {
      const TestImage labels = from_buffer(detected.buffer, PixelFormat::Gray16, w, h);
      for (int y = 0; y < h; ++y) {
        const auto* row = labels.cview().row_as<const std::uint16_t>(y);
        top_label = std::max(top_label, *std::max_element(row, row + w));
      }
    }
    gst_buffer_unref(detected.buffer);
    return std::make_pair(detected.objects, top_label);
  };
  const auto [pieces, piece_labels] = objects_found("merge-streaks: false");
  REQUIRE(pieces.size() == 3);  // two pieces and the star
  const auto [merged, merged_labels] = objects_found("");
  REQUIRE(merged.size() == 2);
  CHECK((merged[0].flags & starsift::kObjectStreakMerged) != 0);
  CHECK(merged[0].npix == pieces[0].npix + pieces[1].npix);
  CHECK(merged[1].npix == pieces[2].npix);  // the star, renumbered 2
  CHECK(merged[1].id == 2);
  // output=labels: the frame's ids renumbered like the catalogue (the star's pixels 2, not 3).
  const auto [labelled, top_unmerged] = objects_found("merge-streaks: false, output: labels");
  CHECK(top_unmerged == 3);
  const auto [labelled_merged, top_merged] = objects_found("output: labels");
  CHECK(labelled_merged.size() == 2);
  CHECK(top_merged == 2);
}

TEST_CASE("siftchain ending in detect starts its tracks over after a flush",
          "[plugin][chain][detect]") {
  init_gstreamer();
  const int w = 128, h = 96;
  const auto frames = sky_frames(8, w, h);
  Harness harness("siftchain", {{"backend", "cpu"}, {"chain", "[{detect: {}}]"}});
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, w, h).c_str());
  const std::vector<TestImage> first(frames.begin(), frames.begin() + 5);
  CHECK(run_frames(harness, first).back().tracks.size() == 3);
  REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_flush_start()));
  REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_flush_stop(TRUE)));
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_segment(&segment)));
  const std::vector<TestImage> after(frames.begin() + 5, frames.end());
  const auto linked = run_frames(harness, after);
  // confirm 3: no movers in the first two frames after the flush, the three again in the third.
  CHECK(linked[0].tracks.empty());
  CHECK(linked[1].tracks.empty());
  CHECK(linked[2].tracks.size() == 3);
}
