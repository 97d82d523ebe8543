// SPDX-License-Identifier: LGPL-2.1-or-later
// When event clips are due (clip_events.hpp): a track's first report is an event and later
// ones are not; a bright detection is one when asked for; a window opens before-s ahead of
// its event, later events extend it up to max-s, and max-per-hour windows open an hour.
#include <catch2/catch.hpp>

#include "daemon/clips/clip_events.hpp"

using namespace starsift;
using namespace starsift::daemon;

namespace {

Track mover(std::int32_t id, float x, float y) {
  Track t;
  t.id = id;
  t.mover = true;
  t.x = x;
  t.y = y;
  t.mean_flux = 100.0f;
  return t;
}

DetectedObject object(float flux) {
  DetectedObject o;
  o.flux = flux;
  o.x = 5.0f;
  o.y = 6.0f;
  return o;
}

ClipEvent event_at(std::int64_t utc_us) {
  ClipEvent e;
  e.utc_us = utc_us;
  return e;
}

}  // namespace

TEST_CASE("a track's first report is an event; its later reports are not", "[clips]") {
  ClipEventDetector detector(0.0);
  std::vector<ClipEvent> events;
  const std::vector<Track> first = {mover(3, 10, 20)};
  detector.on_frame(1, 1000, {}, first, events);
  REQUIRE(events.size() == 1);
  CHECK(events[0].kind == ClipEvent::Kind::Track);
  CHECK(events[0].track == 3);
  CHECK(events[0].frame == 1);
  CHECK(events[0].utc_us == 1000);
  CHECK(events[0].x == 10.0);
  detector.on_frame(2, 2000, {}, first, events);
  CHECK(events.empty());
  const std::vector<Track> two = {mover(3, 11, 20), mover(4, 50, 60), mover(-1, 0, 0)};
  detector.on_frame(3, 3000, {}, two, events);
  REQUIRE(events.size() == 1);  // the new one; a track without an id is no mover
  CHECK(events[0].track == 4);
  // Without min-flux, no detection is an event however bright.
  const std::vector<DetectedObject> bright = {object(1e6f)};
  detector.on_frame(4, 4000, bright, {}, events);
  CHECK(events.empty());
}

TEST_CASE("tracks long gone are forgotten, so the detector stays small", "[clips]") {
  ClipEventDetector detector(0.0);
  std::vector<ClipEvent> events;
  for (std::int32_t id = 0; id < 100; ++id) {
    const std::vector<Track> one = {mover(id, 0, 0)};
    detector.on_frame(static_cast<std::uint64_t>(id), 0, {}, one, events);
  }
  CHECK(detector.tracks_known() == 100);
  detector.on_frame(100 + 2 * ClipEventDetector::kForgetFrames, 0, {}, {}, events);
  CHECK(detector.tracks_known() == 0);
}

TEST_CASE("with min-flux, a frame's brightest detection at min-flux is an event", "[clips]") {
  ClipEventDetector detector(500.0);
  std::vector<ClipEvent> events;
  const std::vector<DetectedObject> faint = {object(100), object(499)};
  detector.on_frame(1, 10, faint, {}, events);
  CHECK(events.empty());
  const std::vector<DetectedObject> mixed = {object(100), object(900), object(600)};
  detector.on_frame(2, 20, mixed, {}, events);
  REQUIRE(events.size() == 1);
  CHECK(events[0].kind == ClipEvent::Kind::Bright);
  CHECK(events[0].flux == 900.0);
  CHECK(events[0].track == -1);
}

TEST_CASE("a window opens before-s ahead, later events extend it up to max-s", "[clips]") {
  ClipSchedule schedule(ClipTiming{2'000'000, 3'000'000, 8'000'000, 0});
  CHECK(schedule.on_event(event_at(10'000'000), 0) == ClipSchedule::Decision::Opened);
  REQUIRE(schedule.open());
  CHECK(schedule.open()->start_us == 8'000'000);
  CHECK(schedule.open()->end_us == 13'000'000);
  CHECK(schedule.on_event(event_at(11'000'000), 0) == ClipSchedule::Decision::Extended);
  CHECK(schedule.open()->end_us == 14'000'000);
  // Extended no further than start + max-s.
  CHECK(schedule.on_event(event_at(15'000'000), 0) == ClipSchedule::Decision::Extended);
  CHECK(schedule.open()->end_us == 16'000'000);
  CHECK(schedule.on_event(event_at(15'500'000), 0) == ClipSchedule::Decision::Joined);
  CHECK(schedule.open()->events.size() == 4);
  CHECK_FALSE(schedule.close_if_past(16'000'000));  // the end's own frame is in it
  const auto closed = schedule.close_if_past(16'000'001);
  REQUIRE(closed);
  CHECK(closed->events.size() == 4);
  CHECK_FALSE(schedule.open());
}

TEST_CASE("at most max-per-hour windows open an hour", "[clips]") {
  ClipSchedule schedule(ClipTiming{0, 1'000'000, 10'000'000, 2});
  const std::int64_t hour = 3'600'000'000;
  for (int i = 0; i < 2; ++i) {
    CHECK(schedule.on_event(event_at(i * 10'000'000), i) == ClipSchedule::Decision::Opened);
    REQUIRE(schedule.close_if_past(i * 10'000'000 + 2'000'000));
  }
  CHECK(schedule.on_event(event_at(30'000'000), 100) == ClipSchedule::Decision::Limited);
  CHECK_FALSE(schedule.open());
  // An hour after the first, one may open again.
  CHECK(schedule.on_event(event_at(40'000'000), hour) == ClipSchedule::Decision::Opened);
}
