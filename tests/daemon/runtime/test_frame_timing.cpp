// SPDX-License-Identifier: LGPL-2.1-or-later
// Frame times (frame_timing.hpp): the measured rate, frames missing, a frame's UTC.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

#include "daemon/runtime/frame_timing.hpp"

using starsift::daemon::FrameTiming;

namespace {

std::int64_t at(double fps, double frame) {
  return static_cast<std::int64_t>(std::llround(frame * 1e9 / fps));
}

}  // namespace

TEST_CASE("the rate is measured from the timestamps, not taken from the caps", "[timing]") {
  FrameTiming timing(25.0);     // sold as 25 fps
  CHECK(timing.fps() == 25.0);  // before two timestamps: the nominal rate
  for (int i = 0; i < 1000; ++i) CHECK(timing.add(at(24.98, i)) == 0);
  CHECK(timing.fps() == Approx(24.98).epsilon(1e-6));
  CHECK(timing.dropped() == 0);
  CHECK(timing.frames() == 1000);
}

TEST_CASE("a gap of more than 1.5 periods is frames missing", "[timing]") {
  // The last frame before each gap is frame 49.
  FrameTiming jitter(0.0);  // no nominal rate: learnt from the stream
  for (int i = 0; i < 50; ++i) jitter.add(at(30, i));
  CHECK(jitter.add(at(30, 50.4)) == 0);  // 1.4 periods late: jitter, no frame missing
  FrameTiming late(0.0);
  for (int i = 0; i < 50; ++i) late.add(at(30, i));
  CHECK(late.add(at(30, 50.6)) == 1);  // 1.6 periods: one frame lost

  FrameTiming gaps(0.0);
  for (int i = 0; i < 50; ++i) gaps.add(at(30, i));
  CHECK(gaps.add(at(30, 51)) == 1);  // frame 50 missing
  CHECK(gaps.add(at(30, 56)) == 4);  // frames 52..55 missing
  CHECK(gaps.dropped() == 5);
  // The rate counts the periods, not the frames that came.
  CHECK(gaps.fps() == Approx(30.0).epsilon(1e-9));
}

TEST_CASE("an early frame does not set the period that gaps are judged by", "[timing]") {
  // A camera's second frame 37 ms after its first, then every 100 ms: no frame is missing.
  for (const double nominal : {10.0, 0.0}) {
    FrameTiming timing(nominal);
    timing.add(0);
    std::int64_t t = 37'000'000;
    std::uint64_t missing = timing.add(t);
    for (int i = 0; i < 60; ++i) {
      t += 100'000'000;
      missing += timing.add(t);
    }
    INFO("nominal " << nominal);
    CHECK(missing == 0);
    CHECK(timing.fps() == Approx(10.0).epsilon(0.02));
  }
}

TEST_CASE("timestamps that repeat or go back count no gap; restart starts over", "[timing]") {
  FrameTiming timing(10.0);
  timing.add(0);
  timing.add(100'000'000);
  CHECK(timing.add(100'000'000) == 0);
  CHECK(timing.add(50'000'000) == 0);
  CHECK(timing.add(-1) == 0);  // no timestamp
  CHECK(timing.frames() == 5);
  timing.restart();
  CHECK(timing.add(0) == 0);  // a new stream's first frame is no gap
  CHECK(timing.add(100'000'000) == 0);
  CHECK(timing.dropped() == 0);
}

TEST_CASE("a live frame's UTC is the wall clock less its age on the pipeline clock", "[timing]") {
  // Base time 1000 s, clock now 1010 s: running time now 10 s; the frame was captured at
  // running time 9.75 s, so it is 250 ms old.
  const std::int64_t utc = starsift::daemon::live_frame_utc_us(
      1'700'000'000'000'000, 1'010'000'000'000ULL, 1'000'000'000'000ULL, 9'750'000'000ULL);
  CHECK(utc == 1'700'000'000'000'000 - 250'000);
  // Rounded to the nearest microsecond.
  CHECK(starsift::daemon::live_frame_utc_us(1'000'000, 2'000'000'600ULL, 1'000'000'000ULL,
                                            1'000'000'000ULL) == 1'000'000 - 1);
  CHECK(starsift::daemon::file_frame_utc_us(5'000'000, 40'000'000) == 5'040'000);
}
