// SPDX-License-Identifier: LGPL-2.1-or-later
// The quality benchmark's scoring: the hit/false-alarm matcher, the threshold at a
// false-alarm rate, and the intervals the report quotes (the peak finder's own test is in
// tests/detect/).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "app/quality/matching.hpp"
#include "app/quality/statistics.hpp"
#include "app/quality/threshold.hpp"
#include "app/rng.hpp"
#include "pipeline/detect/matched_filter.hpp"
#include "pipeline/detect/peaks.hpp"
#include "pipeline/detect/psf_kernel.hpp"
#include "pipeline/sky/sky_psf.hpp"

using namespace starsift;
using namespace starsift::quality;

namespace {

// The candidate false alarms of `frames` frames of white noise: every peak above `floor` of the
// matched filter's SNR, with nothing to hit.
std::vector<float> noise_peaks(std::uint64_t seed, int frames, int side, const Interior& interior,
                               float floor) {
  const sky::Psf psf(PsfKind::Gaussian, 3.0, 3.0);
  MatchedFilter filter(make_psf_kernel(psf), side, side);
  ThreadPool pool(2);
  app::Rng rng(seed);
  Plane noise(side, side), snr(side, side);
  std::vector<Peak> peaks;
  for (int f = 0; f < frames; ++f) {
    for (std::size_t i = 0; i < noise.size(); ++i)
      noise.data()[i] = static_cast<float>(rng.normal());
    filter.snr_with_sigma(noise, 1.0, snr, pool);
    find_peaks(snr, interior, floor, peaks);
  }
  std::vector<float> values;
  for (const Peak& p : peaks) values.push_back(p.snr);
  return values;
}

}  // namespace

TEST_CASE("the matcher counts hits along the streak and false alarms elsewhere", "[quality]") {
  MoverTruth still;  // stationary at (10, 10)
  still.x = 10.0;
  still.y = 10.0;
  MoverTruth fast;  // a streak from (40, 40) to (45, 40)
  fast.x = 42.5;
  fast.y = 40.0;
  fast.vx = 5.0;
  const std::vector<Streak> streaks{streak_of(still), streak_of(fast)};
  CHECK(distance_to_streak(streaks[1], 42.0, 43.0) == Approx(3.0));
  CHECK(distance_to_streak(streaks[1], 48.0, 44.0) == Approx(5.0));  // beyond the end: 3-4-5

  const std::vector<Peak> peaks{
      {11, 11, 6.0f},  // 1.41 px from the still mover: a hit
      {9, 10, 8.0f},   // the same mover again: still one hit
      {43, 41, 7.0f},  // 1 px from the middle of the streak: a hit
      {47, 40, 5.5f},  // 2 px beyond its end: a hit (the radius is inclusive)
      {48, 40, 6.0f},  // 3 px beyond it: a false alarm
      {20, 20, 9.0f},  // nowhere near: a false alarm
      {10, 13, 4.0f},  // 3 px from the still mover, below the threshold: nothing
  };
  const MatchCounts at5 = count_matches(peaks, streaks, 2.0, 5.0f);
  CHECK(at5.hits == 2);
  CHECK(at5.false_alarms == 2);
  // At 6.5 the still mover keeps its 8.0 detection, the streak its 7.0; one false alarm left.
  const MatchCounts at65 = count_matches(peaks, streaks, 2.0, 6.5f);
  CHECK(at65.hits == 2);
  CHECK(at65.false_alarms == 1);
  // At 7.5 only the still mover is found.
  CHECK(count_matches(peaks, streaks, 2.0, 7.5f).hits == 1);

  FrameMatch match;
  match_peaks(peaks, streaks, 2.0, match);
  CHECK(match.best[0] == 8.0f);
  CHECK(match.best[1] == 7.0f);
  CHECK(match.false_alarms.size() == 3);
  // A peak between two streaks belongs to the nearer one.
  CHECK(match_point(streaks, 10.0, 11.5, 2.0) == 0);
  CHECK(match_point(streaks, 30.0, 30.0, 2.0) == -1);
}

TEST_CASE("the threshold keeps false alarms on pure noise at or below the requested rate",
          "[quality]") {
  const int side = 144, border = 8;
  const Interior interior = Interior::of(side, side, border);
  const int frames = 24;
  const double area = static_cast<double>(interior.pixels()) * frames / 1.0e6;  // 0.4 Mpix-frames
  const double rate = 25.0;  // per Mpix-frame: ~10 allowed, so the test stays small
  const std::vector<float> candidates = noise_peaks(5, frames, side, interior, 3.0f);
  const ThresholdChoice t = choose_threshold(candidates, area, rate, 3.0f);
  REQUIRE_FALSE(t.at_floor);
  CHECK(t.allowed == static_cast<long long>(std::floor(rate * area)));
  CHECK(t.false_alarms <= t.allowed);
  CHECK(count_above(candidates, t.threshold) / area <= rate);
  // The threshold is the lowest that does it: just below it, one more peak would pass.
  CHECK(count_above(candidates, std::nextafter(t.threshold, 0.0f)) > t.allowed);
  // Gaussian noise: the threshold is where smoothed noise rarely peaks, between 3.5 and 5.
  CHECK(t.threshold > 3.5f);
  CHECK(t.threshold < 5.0f);
  // On fresh noise of the same kind the rate holds within Poisson scatter (~10 expected).
  const std::vector<float> fresh = noise_peaks(6, frames, side, interior, 3.0f);
  CHECK(count_above(fresh, t.threshold) <= 3 * t.allowed);

  SECTION("fewer candidates than allowed: the floor itself") {
    const ThresholdChoice loose = choose_threshold({4.0f, 5.0f}, 1.0, 10.0, 3.0f);
    CHECK(loose.at_floor);
    CHECK(loose.threshold == 3.0f);
    CHECK(loose.false_alarms == 2);
  }
  SECTION("ties at the threshold are not counted above it") {
    const ThresholdChoice tie = choose_threshold({6.0f, 5.0f, 5.0f, 4.0f}, 10.0, 0.1, 3.0f);
    CHECK(tie.allowed == 1);
    CHECK(tie.threshold == 5.0f);
    CHECK(tie.false_alarms == 1);
  }
}

TEST_CASE("robust sigma and the intervals the report quotes", "[quality]") {
  app::Rng rng(3);
  std::vector<float> v;
  for (int i = 0; i < 20000; ++i) v.push_back(static_cast<float>(2.0 + 4.0 * rng.normal()));
  for (int i = 0; i < 400; ++i) v.push_back(1.0e4f);  // 2 % outliers barely move it
  CHECK(mad_sigma(v) == Approx(4.0).epsilon(0.03));

  std::vector<float> q{4.0f, 1.0f, 3.0f, 2.0f};
  CHECK(quantile(q, 0.5) == Approx(2.5));
  CHECK(quantile(q, 1.0) == Approx(4.0));

  const Interval w = wilson_interval(90, 100);
  CHECK(w.low == Approx(0.8256).epsilon(1e-3));
  CHECK(w.high == Approx(0.9448).epsilon(1e-3));
  CHECK(wilson_interval(0, 0).high == 1.0);

  const Interval none = poisson_interval(0);
  CHECK(none.low == 0.0);
  CHECK(none.high == Approx(3.689).epsilon(1e-3));
  const Interval ten = poisson_interval(10);
  CHECK(ten.low == Approx(4.795).epsilon(1e-3));
  CHECK(ten.high == Approx(18.39).epsilon(1e-3));
}
