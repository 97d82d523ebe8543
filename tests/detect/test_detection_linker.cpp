// SPDX-License-Identifier: LGPL-2.1-or-later
// The host's steps on each frame's catalogue: a streak's pieces merged before tracking (so the
// merged record, not a piece, joins the track), the merge switched live, frames numbered in
// call order, tracks restarted by reset(), refused parameters, and no allocation per frame.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "pipeline/detect/detection_linker.hpp"
#include "pipeline/error.hpp"

using namespace starsift;

namespace {

constexpr std::int64_t kFrameNs = 40'000'000;  // 25 frames/s

DetectedObject star(std::uint32_t id, double x, double y) {
  DetectedObject o{};
  o.id = id;
  o.x = static_cast<float>(x);
  o.y = static_cast<float>(y);
  o.npix = 9;
  o.flux = 100.0f;
  o.a = o.b = 1.0f;
  o.elongation = 1.0f;
  return o;
}

// One piece of a streak along x, as detection reports it: centroid, length, end points.
DetectedObject piece(std::uint32_t id, double x, double y, double length) {
  DetectedObject o = star(id, x, y);
  o.npix = static_cast<std::uint32_t>(2.0 * length) + 2;
  o.flux = 10.0f * static_cast<float>(o.npix);
  o.length = static_cast<float>(length);
  o.a = static_cast<float>(length / std::sqrt(12.0) + 0.5);
  o.b = 0.6f;
  o.elongation = o.a / o.b;
  o.x2 = o.a * o.a;
  o.y2 = o.b * o.b;
  o.x_start = static_cast<float>(x - 0.5 * length);
  o.x_end = static_cast<float>(x + 0.5 * length);
  o.y_start = o.y_end = static_cast<float>(y);
  return o;
}

// Frame f: a streak broken in two whose centre moves 3 px/frame along x, and a still star.
std::vector<DetectedObject> frame_catalogue(int f) {
  const double cx = 50.0 + 3.0 * f;
  return {piece(1, cx - 12.0, 40.0, 20.0), piece(2, cx + 12.0, 40.0, 20.0), star(3, 10.0, 80.0)};
}

}  // namespace

TEST_CASE("the linker merges a streak's pieces, then tracks the merged record",
          "[detect][linker]") {
  DetectLinkParams params;
  params.tracker.min_speed = 1.0;  // the still star is followed but never a mover
  DetectionLinker linker(params, 16);
  for (int f = 0; f < 6; ++f) {
    INFO("frame " << f);
    const auto catalogue = frame_catalogue(f);
    linker.link(catalogue, f * kFrameNs);
    CHECK(linker.frame() == static_cast<std::uint64_t>(f));
    REQUIRE(linker.records().size() == 2);
    CHECK(linker.removed() == 1);
    CHECK((linker.records()[0].flags & kObjectStreakMerged) != 0);
    CHECK(linker.records()[0].npix == catalogue[0].npix + catalogue[1].npix);
    CHECK(linker.records()[1].id == 2);  // the star, renumbered after the merge
    // Where each old id went, for a labels frame.
    REQUIRE(linker.new_ids().size() >= 4);
    CHECK(linker.new_ids()[1] == 1);
    CHECK(linker.new_ids()[2] == 1);
    CHECK(linker.new_ids()[3] == 2);
    if (f + 1 < params.tracker.confirm) {
      CHECK(linker.tracks().empty());
      continue;
    }
    // One mover, the merged streak, at its centre and speed.
    REQUIRE(linker.tracks().size() == 1);
    const Track& t = linker.tracks()[0];
    CHECK(t.id == 0);
    CHECK(t.x == Approx(50.0 + 3.0 * f).margin(1e-3));
    CHECK(t.vx == Approx(3.0).margin(1e-3));
    CHECK(t.vx_s == Approx(75.0).margin(1e-2));
    CHECK(linker.records()[0].track == 0);
    CHECK(linker.records()[1].track == -1);
  }
}

TEST_CASE("without the merge each piece is a record, and the pieces make movers of their own",
          "[detect][linker]") {
  DetectionLinker linker({}, 16);
  linker.set_merge(false, {});
  for (int f = 0; f < 4; ++f) linker.link(frame_catalogue(f), f * kFrameNs);
  CHECK(linker.records().size() == 3);
  CHECK(linker.removed() == 0);
  CHECK(linker.tracks().size() == 3);  // two pieces and the star (min-speed 0)
  // Switched back on live: the next frame merges.
  linker.set_merge(true, {});
  linker.link(frame_catalogue(4), 4 * kFrameNs);
  CHECK(linker.records().size() == 2);
}

TEST_CASE("reset() starts the tracks over; frame numbers and ids go on", "[detect][linker]") {
  DetectionLinker linker({}, 16);
  for (int f = 0; f < 3; ++f) linker.link(frame_catalogue(f), f * kFrameNs);
  REQUIRE(linker.tracks().size() == 2);
  linker.reset();
  linker.link(frame_catalogue(3), 3 * kFrameNs);
  CHECK(linker.frame() == 3);
  CHECK(linker.tracks().empty());
  linker.link(frame_catalogue(4), 4 * kFrameNs);
  linker.link(frame_catalogue(5), 5 * kFrameNs);
  REQUIRE(linker.tracks().size() == 2);
  for (const Track& t : linker.tracks()) CHECK(t.id >= 2);  // never an id given before
}

TEST_CASE("the linker refuses invalid parameters by name", "[detect][linker]") {
  DetectLinkParams params;
  params.tracker.confirm = 0;
  CHECK_THROWS_AS(DetectionLinker(params, 4), Error);
  params = {};
  params.streak_merge.max_angle = 2.0;
  CHECK_THROWS_WITH(DetectionLinker(params, 4), Catch::Contains("max-angle"));
  DetectionLinker linker({}, 4);
  StreakMergeParams bad;
  bad.max_offset = -1.0;
  CHECK_THROWS_WITH(linker.set_merge(true, bad), Catch::Contains("max-offset"));
  CHECK(linker.params().streak_merge == StreakMergeParams{});  // unchanged
}

TEST_CASE("the linker allocates nothing from frame to frame", "[detect][linker]") {
  DetectionLinker linker({}, 16);
  linker.link(frame_catalogue(0), 0);
  const std::size_t tracker_bytes = linker.tracker().capacity_bytes();
  const auto* records = linker.records().data();
  for (int f = 1; f < 20; ++f) linker.link(frame_catalogue(f), f * kFrameNs);
  CHECK(linker.tracker().capacity_bytes() == tracker_bytes);
  CHECK(linker.records().data() == records);  // the reserved storage, reused
}
