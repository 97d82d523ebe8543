// SPDX-License-Identifier: LGPL-2.1-or-later
// The quality benchmark's scoring of the shipped chain: catalogue objects against the
// movers, the threshold chosen on the other cells, and tracks that follow a mover or none.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "app/quality/chain_scoring.hpp"
#include "app/quality/chain_summary.hpp"
#include "pipeline/detect/tracker.hpp"

using namespace starsift;
using namespace starsift::quality;

namespace {

DetectedObject object_at(float x, float y) {
  DetectedObject o;
  o.x = x;
  o.y = y;
  o.xpeak = static_cast<std::int32_t>(std::lround(x));
  o.ypeak = static_cast<std::int32_t>(std::lround(y));
  o.npix = 9;
  return o;
}

MoverTruth mover(double x, double y, double vx, double vy) {
  MoverTruth m;
  m.x = x;
  m.y = y;
  m.vx = vx;
  m.vy = vy;
  return m;
}

// One cell's samples for summarise_chain(): `false_at` false detections per threshold,
// `hits_at` of `trials` trials hit per threshold.
CellResult cell_with(int index, const std::vector<long long>& false_at,
                     const std::vector<int>& hits_at, int trials) {
  CellResult c;
  c.cell.index = index;
  c.cell.snr = 5.0;
  c.cell.speed = 1.0 + index;
  c.cell.speed_index = index;
  c.area_mpix_frames = 10.0;
  ChainSamples& s = c.chains.emplace_back();
  for (std::size_t t = 0; t < false_at.size(); ++t) {
    ChainAtThreshold& at = s.at.emplace_back();
    at.false_detections = false_at[t];
    at.places[static_cast<std::size_t>(Place::Clear)] = false_at[t];
    at.hit.assign(static_cast<std::size_t>(trials), 0);
    for (int i = 0; i < hits_at[t]; ++i) at.hit[static_cast<std::size_t>(i)] = 1;
  }
  return c;
}

}  // namespace

TEST_CASE("catalogue objects: hits, false detections, the border, two movers", "[quality]") {
  const Interior interior = Interior::of(100, 100, 8);
  // A still mover at (30, 30); a streak from (60, 40) to (66, 40); a still mover at (31, 33).
  const std::vector<Streak> streaks{streak_of(mover(30, 30, 0, 0)), streak_of(mover(63, 40, 6, 0)),
                                    streak_of(mover(31, 33.5, 0, 0))};
  CHECK(label_object(object_at(30.5f, 31.0f), streaks, interior, 2.0) == 0);
  // Along the streak, 3 px from its middle but on the path: a hit.
  CHECK(label_object(object_at(65.5f, 40.5f), streaks, interior, 2.0) == 1);
  // Beyond the streak's end by more than the radius: false.
  CHECK(label_object(object_at(69.0f, 40.0f), streaks, interior, 2.0) == kFalseDetection);
  CHECK(label_object(object_at(50.0f, 70.0f), streaks, interior, 2.0) == kFalseDetection);
  // Between the two still movers: the nearer one takes it (1.1 px against 1.5).
  CHECK(label_object(object_at(30.2f, 32.4f), streaks, interior, 2.0) == 2);
  CHECK(label_object(object_at(30.0f, 31.5f), streaks, interior, 2.0) == 0);
  // The centroid 3 px off (pulled by a neighbour) but the peak pixel on the mover: a hit.
  DetectedObject pulled = object_at(33.0f, 30.0f);
  pulled.xpeak = 30;
  pulled.ypeak = 30;
  CHECK(label_object(pulled, streaks, interior, 2.0) == 0);
  // Centred in the border: not scored, even next to a mover's path.
  CHECK(label_object(object_at(5.0f, 50.0f), {streak_of(mover(5, 50, 0, 0))}, interior, 2.0) ==
        kNotScored);

  // One frame: the two still movers are targets, the streak a mover outside the trials.
  const std::vector<DetectedObject> objects{object_at(30.2f, 32.4f),  // the nearer: mover 2
                                            object_at(64.0f, 40.0f),  // the streak: no trial
                                            object_at(50.0f, 70.0f),  // false
                                            object_at(80.0f, 20.0f),  // false
                                            object_at(3.0f, 3.0f)};   // border: not scored
  std::vector<std::int64_t> labels;
  std::vector<unsigned char> hit;
  const long long false_detections =
      score_catalogue(objects, streaks, {0, 2}, interior, 2.0, labels, hit);
  CHECK(false_detections == 2);
  REQUIRE(hit.size() == 2);
  CHECK(hit[0] == 0);  // the object between the two counts for the nearer only
  CHECK(hit[1] == 1);
  CHECK(labels == std::vector<std::int64_t>{2, 1, kFalseDetection, kFalseDetection, kNotScored});
}

TEST_CASE("the chain's threshold: the lowest within the rate, held out on the other cells",
          "[quality]") {
  // Thresholds 4, 5, 6 over 10 Mpix-frames at 0.1 per Mpix-frame: at most 1 false detection.
  CHECK(lowest_within_rate(std::vector<long long>{5, 1, 0}, 10.0, 0.1) == 1);
  CHECK(lowest_within_rate(std::vector<long long>{5, 2, 0}, 10.0, 0.1) == 2);
  CHECK(lowest_within_rate(std::vector<long long>{5, 3, 2}, 10.0, 0.1) == -1);
  CHECK(lowest_within_rate(std::vector<long long>{0, 0, 0}, 0.0, 0.1) == -1);  // nothing to count

  // Three cells of 10 Mpix-frames; the other two allow 2 false detections, all three 3.
  const std::vector<std::vector<long long>> false_per_cell{{3, 1, 0}, {0, 0, 0}, {1, 1, 0}};
  const std::vector<int> choice = held_out_choices(false_per_cell, {10.0, 10.0, 10.0}, 0.1);
  // Cell 0 on cells 1 and 2: {1, 1, 0} -> 4. Cell 1 on 0 and 2: {4, 2, 0} -> 5. Cell 2 on 0
  // and 1: {3, 1, 0} -> 5.
  CHECK(choice == std::vector<int>{0, 1, 1});

  QualityConfig config;
  config.snrs = {5.0};
  config.speeds = {1.0, 2.0, 3.0};
  config.chain_thresholds = {4.0, 5.0, 6.0};
  config.chains = {ChainKind::Defaults};
  config.scored_frames = 16;
  const std::vector<CellResult> cells{cell_with(0, {3, 1, 0}, {9, 8, 5}, 10),
                                      cell_with(1, {0, 0, 0}, {10, 10, 9}, 10),
                                      cell_with(2, {1, 1, 0}, {7, 6, 6}, 10)};
  const ChainSummary s = summarise_chain(config, cells, 0);
  CHECK(s.chosen == 1);  // all cells: {4, 2, 0} in 30 Mpix-frames, 3 allowed -> 5
  CHECK(s.within);
  CHECK(s.false_detections == 2);
  REQUIRE(s.cells.size() == 3);
  CHECK(s.cells[0].held_out_threshold == 4.0);
  CHECK(s.cells[0].held_out_hits == 9);
  CHECK(s.cells[0].hits == 8);  // at the threshold chosen on every cell
  CHECK(s.cells[1].held_out_threshold == 5.0);
  CHECK(s.cells[2].held_out_hits == 6);
  // Held out: 3 (cell 0 at 4) + 0 + 1 (cell 2 at 5) over 30 Mpix-frames.
  CHECK(s.held_out_false_detections == 4);
  CHECK(s.held_out_rate == Approx(4.0 / 30.0));
  CHECK(s.held_out_none_within == 0);
  REQUIRE(s.scan.size() == 3);
  CHECK(s.scan[0].false_rate == Approx(4.0 / 30.0));
  CHECK(s.scan[0].completeness[0] == Approx(26.0 / 30.0));
  CHECK(s.scan[0].worst_completeness[0] == Approx(0.7));
  CHECK(s.chosen_off_stars == 1);  // every false detection is on clear sky here
  CHECK(s.held_out_off_stars == 4);

  // Cell 0's three false detections at 4 lie at stars: away from stars 4 is within the rate
  // ({1, 1, 0}), and held out every cell takes 4 (cell 0 on the others: {1, 1, 0}; cell 1:
  // {1, 2, 0}; cell 2: {0, 1, 0}).
  std::vector<CellResult> starry = cells;
  starry[0].chains[0].at[0].places = {};
  starry[0].chains[0].at[0].places[static_cast<std::size_t>(Place::Star)] = 3;
  const ChainSummary t = summarise_chain(config, starry, 0);
  CHECK(t.chosen == 1);  // all false detections still count for the threshold itself
  CHECK(t.chosen_off_stars == 0);
  CHECK(t.held_out_off_stars_low == 4.0);
  CHECK(t.held_out_off_stars_high == 4.0);
  CHECK(t.held_out_off_stars == 1);
}

TEST_CASE("tracks that follow a mover count for it; false tracks count per hour", "[quality]") {
  Tracker tracker;  // siftdetect's defaults: confirm 3
  TrackScorer scorer;
  // Mover 7 at 2 px/frame; a star residual that stays put (false); a mover 9 detected once.
  for (int f = 0; f < 8; ++f) {
    std::vector<DetectedObject> objects{object_at(20.0f + 2.0f * f, 50.0f),
                                        object_at(80.0f, 80.0f)};
    std::vector<std::int64_t> labels{7, kFalseDetection};
    if (f == 4) {
      objects.push_back(object_at(50.0f, 20.0f));
      labels.push_back(9);
    }
    tracker.update(static_cast<std::uint64_t>(f), f * 40'000'000LL, objects);
    scorer.add_frame(tracker.tracks(), labels);
  }
  const TrackScorer::Result r = scorer.result();
  CHECK(r.tracks == 2);
  CHECK(r.followed == std::vector<std::uint64_t>{7});  // 9 never reached confirm
  CHECK(r.false_tracks == 1);
  CHECK(r.still_false_tracks == 1);

  // A track whose detections are mostly a mover's is that mover's; mostly false, false.
  TrackScorer mixed;
  Track t;
  t.id = 0;
  t.state = TrackState::Confirmed;
  t.detection = 0;
  t.vx = 1.0f;
  for (const std::int64_t label : {3, 3, -1}) {
    const std::vector<std::int64_t> labels{label};
    mixed.add_frame(std::span<const Track>(&t, 1), labels);
  }
  t.id = 1;
  for (const std::int64_t label : {4, -1, -1}) {
    const std::vector<std::int64_t> labels{label};
    mixed.add_frame(std::span<const Track>(&t, 1), labels);
  }
  t.id = 2;  // a tie goes to the mover
  for (const std::int64_t label : {5, -1}) {
    const std::vector<std::int64_t> labels{label};
    mixed.add_frame(std::span<const Track>(&t, 1), labels);
  }
  const TrackScorer::Result m = mixed.result();
  CHECK(m.followed == std::vector<std::uint64_t>{3, 5});
  CHECK(m.false_tracks == 1);
  CHECK(m.still_false_tracks == 0);  // 1 px/frame

  // Per hour: one false track in 2 cells x 16 frames at 25 frames/s.
  QualityConfig config;
  config.snrs = {5.0};
  config.speeds = {1.0, 2.0};
  config.chain_thresholds = {5.0};
  config.chains = {ChainKind::Defaults};
  config.scored_frames = 16;
  config.track_fps = 25.0;
  std::vector<CellResult> cells{cell_with(0, {0}, {1}, 1), cell_with(1, {0}, {1}, 1)};
  cells[0].chains[0].track_movers = {7, 8};
  cells[0].chains[0].at[0].tracked = {1, 0};
  cells[0].chains[0].at[0].false_tracks = 1;
  cells[1].chains[0].track_movers = {5};
  cells[1].chains[0].at[0].tracked = {1};
  const ChainSummary s = summarise_chain(config, cells, 0);
  CHECK(s.hours == Approx(32.0 / 25.0 / 3600.0));
  CHECK(s.held_out_false_tracks == 1);
  CHECK(s.held_out_false_tracks_per_hour == Approx(3600.0 * 25.0 / 32.0));
  CHECK(s.cells[0].track_completeness.value == Approx(0.5));
  CHECK(s.cells[1].track_completeness.value == Approx(1.0));
  CHECK(s.scan[0].track_completeness[0] == Approx(2.0 / 3.0));
}
