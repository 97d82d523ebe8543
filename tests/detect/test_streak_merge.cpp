// SPDX-License-Identifier: LGPL-2.1-or-later
// The streak merge: the pieces of a synthetic streak become the record of the union of their
// pixels (moments combined exactly), chains of pieces, two crossing trails one record each,
// fragments and short pieces on a trusted line, what must not merge (crossing, far apart, side
// by side, round), dense ids in order, the flag, and refused parameters.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numbers>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/detect/object_sums.hpp"
#include "pipeline/detect/streak_merge.hpp"
#include "pipeline/error.hpp"

using namespace starsift;
using Catch::Contains;

namespace {

constexpr int kWidth = 512, kHeight = 512;

struct Pixel {
  int x, y;
  float r;
  double t;  // where it lies along the streak, px from its start
};

// The pixels of a streak from (x0, y0), `length` px at angle `theta`: a line of amplitude 10
// with a Gaussian profile of sigma 1 across it, the pixels above 2 kept (what a threshold
// would find), in raster order.
std::vector<Pixel> streak(double x0, double y0, double theta, double length) {
  const double c = std::cos(theta), s = std::sin(theta);
  std::vector<Pixel> pixels;
  for (int y = 0; y < kHeight; ++y) {
    for (int x = 0; x < kWidth; ++x) {
      const double t = (x - x0) * c + (y - y0) * s;
      const double d = -(x - x0) * s + (y - y0) * c;
      if (t < 0.0 || t > length) continue;
      const double r = 10.0 * std::exp(-0.5 * d * d) * (1.0 + 0.2 * std::sin(0.37 * t));
      if (r > 2.0) pixels.push_back({x, y, static_cast<float>(r), t});
    }
  }
  return pixels;
}

// A round blob of `radius` px around (cx, cy).
std::vector<Pixel> blob(int cx, int cy, int radius) {
  std::vector<Pixel> pixels;
  for (int y = cy - radius; y <= cy + radius; ++y) {
    for (int x = cx - radius; x <= cx + radius; ++x) {
      const double r2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
      if (r2 <= radius * radius)
        pixels.push_back({x, y, static_cast<float>(5.0 + 10.0 / (1.0 + r2)), 0.0});
    }
  }
  return pixels;
}

// The record detection makes of these pixels (noise variance 1 each).
DetectedObject record_of(const std::vector<Pixel>& pixels, std::uint32_t id = 1) {
  ObjectSums sums;
  for (const Pixel& p : pixels) add_pixel(sums, p.x, p.y, p.r, 1.0f);
  return finalize_object(sums, id, kWidth, kHeight);
}

// The pixels with t in [from, to).
std::vector<Pixel> part(const std::vector<Pixel>& pixels, double from, double to) {
  std::vector<Pixel> out;
  for (const Pixel& p : pixels) {
    if (p.t >= from && p.t < to) out.push_back(p);
  }
  return out;
}

std::vector<Pixel> join(std::vector<Pixel> a, const std::vector<Pixel>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end(), [](const Pixel& p, const Pixel& q) {
    return std::pair(p.y, p.x) < std::pair(q.y, q.x);
  });
  return a;
}

// A catalogue as detection writes it: one record per object, numbered 1, 2, ... in raster
// order of each object's first pixel.
std::vector<DetectedObject> catalogue_of(std::vector<std::vector<Pixel>> objects) {
  auto first = [](const std::vector<Pixel>& o) {
    const auto it = std::min_element(o.begin(), o.end(), [](const Pixel& p, const Pixel& q) {
      return std::pair(p.y, p.x) < std::pair(q.y, q.x);
    });
    return std::pair(it->y, it->x);
  };
  std::sort(objects.begin(), objects.end(),
            [&](const auto& a, const auto& b) { return first(a) < first(b); });
  std::vector<DetectedObject> catalogue;
  for (const auto& o : objects) {
    catalogue.push_back(record_of(o, static_cast<std::uint32_t>(catalogue.size() + 1)));
  }
  return catalogue;
}

double axis_difference(double a, double b) {
  const double d = std::fmod(std::fabs(a - b), std::numbers::pi);
  return std::min(d, std::numbers::pi - d);
}

// The merged record against the record of the union of its pieces' pixels.
void require_union(const DetectedObject& m, const DetectedObject& u) {
  CHECK(m.npix == u.npix);
  CHECK(m.flux == Approx(u.flux).epsilon(1e-6));
  CHECK(m.flux_err == Approx(u.flux_err).epsilon(1e-6));
  CHECK(m.x == Approx(u.x).margin(1e-3));
  CHECK(m.y == Approx(u.y).margin(1e-3));
  CHECK(m.x2 == Approx(u.x2).epsilon(1e-4).margin(1e-3));
  CHECK(m.y2 == Approx(u.y2).epsilon(1e-4).margin(1e-3));
  CHECK(m.xy == Approx(u.xy).epsilon(1e-4).margin(1e-3));
  CHECK(m.a == Approx(u.a).epsilon(1e-4));
  CHECK(m.b == Approx(u.b).epsilon(1e-3));
  CHECK(axis_difference(m.theta, u.theta) < 1e-5);
  CHECK(m.x_err == Approx(u.x_err).epsilon(0.02));  // uniform noise: nearly exact
  CHECK(m.y_err == Approx(u.y_err).epsilon(0.02));
  CHECK(m.xmin == u.xmin);
  CHECK(m.xmax == u.xmax);
  CHECK(m.ymin == u.ymin);
  CHECK(m.ymax == u.ymax);
  CHECK(m.peak == u.peak);
  CHECK(m.xpeak == u.xpeak);
  CHECK(m.ypeak == u.ypeak);
  CHECK((m.flags & kObjectStreakMerged) != 0);
  CHECK((m.flags & ~kObjectStreakMerged) == u.flags);
}

void require_refused(const std::function<void(StreakMergeParams&)>& set, const std::string& key,
                     const std::string& value) {
  StreakMergeParams p;
  set(p);
  INFO(key << " = " << value);
  REQUIRE_THROWS_WITH(p.validate(),
                      Contains("streak-merge " + key + " " + value + " is not allowed") &&
                          Contains("allowed: finite numbers"));
}

}  // namespace

TEST_CASE("the flag of a merged record is its own bit", "[detect][streak-merge]") {
  CHECK(kObjectStreakMerged == 16u);
  for (const std::uint32_t other :
       {kObjectTouchesEdge, kObjectMerged, kObjectSingular, kObjectNoFlux}) {
    CHECK((other & kObjectStreakMerged) == 0);
  }
}

TEST_CASE("two pieces of a streak merge into the record of their union", "[detect][streak-merge]") {
  for (const double theta : {0.0, 0.3, -1.1, std::numbers::pi / 2}) {
    INFO("theta " << theta);
    const auto pixels = streak(100.5, 200.25, theta, 120.0);
    const auto a = part(pixels, 0.0, 50.0), b = part(pixels, 50.0, 121.0);
    auto catalogue = catalogue_of({a, b});
    REQUIRE(catalogue.size() == 2);
    REQUIRE(merge_streaks(catalogue, StreakMergeParams{}) == 1);
    REQUIRE(catalogue.size() == 1);
    const DetectedObject& m = catalogue[0];
    const DetectedObject u = record_of(pixels);
    CHECK(m.id == 1);
    require_union(m, u);
    // The whole streak: its length, angle and ends.
    CHECK(m.length == Approx(u.length).margin(1.0));
    CHECK(m.length == Approx(120.0).margin(1.5));
    CHECK(axis_difference(m.theta, theta) < 0.005);
    const double ends[2][2] = {{m.x_start, m.y_start}, {m.x_end, m.y_end}};
    const double want[2][2] = {{100.5, 200.25},
                               {100.5 + 120.0 * std::cos(theta), 200.25 + 120.0 * std::sin(theta)}};
    const bool forward = std::hypot(ends[0][0] - want[0][0], ends[0][1] - want[0][1]) <
                         std::hypot(ends[1][0] - want[0][0], ends[1][1] - want[0][1]);
    for (int k = 0; k < 2; ++k) {
      const double* got = ends[forward ? k : 1 - k];
      CHECK(std::hypot(got[0] - want[k][0], got[1] - want[k][1]) < 1.5);
    }
  }
}

TEST_CASE("a chain of pieces with gaps merges; the moments are those of the pixels kept",
          "[detect][streak-merge]") {
  const double theta = 0.7;
  const auto pixels = streak(60.0, 40.0, theta, 300.0);
  // Four pieces, with gaps of 6, 10 and 4 px between them, and the pieces of unequal length.
  const auto p1 = part(pixels, 0.0, 40.0), p2 = part(pixels, 46.0, 130.0),
             p3 = part(pixels, 140.0, 170.0), p4 = part(pixels, 174.0, 301.0);
  auto catalogue = catalogue_of({p3, p1, p4, p2});
  REQUIRE(catalogue.size() == 4);
  REQUIRE(merge_streaks(catalogue, StreakMergeParams{}) == 3);
  REQUIRE(catalogue.size() == 1);
  const DetectedObject& m = catalogue[0];
  require_union(m, record_of(join(join(p1, p2), join(p3, p4))));
  // The extent of the trail, gaps included: the outermost ends.
  CHECK(m.length == Approx(300.0).margin(1.5));
  CHECK(axis_difference(m.theta, theta) < 0.002);
}

TEST_CASE("the merge does not depend on which piece comes first", "[detect][streak-merge]") {
  const auto pixels = streak(30.0, 300.0, -0.4, 200.0);
  const auto a = record_of(part(pixels, 0.0, 70.0), 1);
  const auto b = record_of(part(pixels, 75.0, 120.0), 2);
  const auto c = record_of(part(pixels, 124.0, 201.0), 3);
  const StreakMergeParams p;
  for (const auto& [x, y] : {std::pair(a, b), std::pair(b, c), std::pair(a, c)}) {
    CHECK(streak_pieces_join(x, y, p) == streak_pieces_join(y, x, p));
  }
  // Whichever order the pieces are combined in, the same record (to float rounding).
  const DetectedObject* forward[] = {&a, &b, &c};
  const DetectedObject* backward[] = {&c, &a, &b};
  const DetectedObject f = merge_streak_pieces(forward, 3);
  DetectedObject g = merge_streak_pieces(backward, 3);
  CHECK(g.id == c.id);  // the first given: merge_streaks() gives the smallest id first
  CHECK(f.flux == Approx(g.flux).epsilon(1e-6));
  CHECK(f.x == Approx(g.x).epsilon(1e-6));
  CHECK(f.x2 == Approx(g.x2).epsilon(1e-5));
  CHECK(f.length == Approx(g.length).epsilon(1e-5));
  CHECK(f.peak == g.peak);
  CHECK(f.xpeak == g.xpeak);
}

TEST_CASE("merged records keep the smallest id's place; ids stay dense and in order",
          "[detect][streak-merge]") {
  const auto pixels = streak(50.0, 100.0, 0.05, 200.0);
  const auto left = part(pixels, 0.0, 90.0), right = part(pixels, 95.0, 201.0);
  // Stars before, between and after the pieces in raster order: the left piece's first pixel
  // is on row 98 or 99, the star at (10, 101) starts on row 100, the right piece below.
  auto catalogue = catalogue_of(
      {left, right, blob(400, 20, 2), blob(10, 101, 1), blob(300, 300, 3), blob(10, 400, 1)});
  REQUIRE(catalogue.size() == 6);
  std::vector<DetectedObject> stars;
  std::uint32_t left_id = 0, right_id = 0;
  for (const DetectedObject& o : catalogue) {
    if (o.npix == left.size() && o.xmin < 60)
      left_id = o.id;
    else if (o.npix == right.size() && o.xmin > 100)
      right_id = o.id;
    else
      stars.push_back(o);
  }
  REQUIRE(left_id < right_id);
  REQUIRE(right_id == left_id + 2);  // the star between them
  StreakMergeScratch scratch;
  std::vector<std::uint32_t> new_ids{99};
  REQUIRE(merge_streaks(catalogue, StreakMergeParams{}, scratch, &new_ids) == 1);
  // Where each old id went: both pieces to the merged record, the star between them and
  // those after moved down by one, those before kept.
  REQUIRE(new_ids.size() == 7);
  CHECK(new_ids[0] == 0);
  for (std::uint32_t k = 1; k <= 6; ++k) {
    INFO("old id " << k);
    const std::uint32_t expected = k < left_id ? k : k == right_id ? left_id : k - (k > right_id);
    CHECK(new_ids[k] == expected);
  }
  REQUIRE(catalogue.size() == 5);
  for (std::size_t i = 0; i < catalogue.size(); ++i) CHECK(catalogue[i].id == i + 1);
  std::size_t star = 0;
  for (const DetectedObject& o : catalogue) {
    if ((o.flags & kObjectStreakMerged) != 0) {
      CHECK(o.id == left_id);
      CHECK(o.npix == left.size() + right.size());
      continue;
    }
    REQUIRE(star < stars.size());
    CHECK(o.npix == stars[star].npix);  // the stars in their order, untouched but the id
    CHECK(o.x == stars[star].x);
    CHECK(o.flags == stars[star].flags);
    ++star;
  }
  CHECK(star == stars.size());
}

TEST_CASE("objects not on one line, far apart, side by side or round are not merged",
          "[detect][streak-merge]") {
  const StreakMergeParams p;
  SECTION("crossing at an angle, end to end") {
    const auto a = streak(100.0, 100.0, 0.0, 60.0);
    const auto b = streak(162.0, 100.0, 0.3, 60.0);
    auto catalogue = catalogue_of({a, b});
    CHECK(merge_streaks(catalogue, p) == 0);
    CHECK(catalogue.size() == 2);
  }
  SECTION("on one line, the gap larger than half their summed length") {
    const auto pixels = streak(20.0, 250.0, 0.2, 400.0);
    auto catalogue = catalogue_of({part(pixels, 0.0, 40.0), part(pixels, 100.0, 140.0)});
    CHECK(merge_streaks(catalogue, p) == 0);
    CHECK(catalogue.size() == 2);
    // A gap of 36 px between two 40 px pieces is within half of 80: merged.
    catalogue = catalogue_of({part(pixels, 0.0, 40.0), part(pixels, 76.0, 116.0)});
    CHECK(merge_streaks(catalogue, p) == 1);
  }
  SECTION("two parallel streaks side by side") {
    const auto a = streak(100.0, 100.0, 0.4, 150.0);
    const auto b = streak(100.0 - 6.0 * std::sin(0.4), 100.0 + 6.0 * std::cos(0.4), 0.4, 150.0);
    auto catalogue = catalogue_of({a, b});
    REQUIRE(catalogue.size() == 2);
    CHECK(merge_streaks(catalogue, p) == 0);
    // Parallel, 5 px apart and shifted 80 px along the line: overlapping in projection.
    const auto c = streak(100.0 + 80.0 * std::cos(0.4) - 5.0 * std::sin(0.4),
                          100.0 + 80.0 * std::sin(0.4) + 5.0 * std::cos(0.4), 0.4, 150.0);
    catalogue = catalogue_of({a, c});
    CHECK(merge_streaks(catalogue, p) == 0);
  }
  SECTION("round stars in a row") {
    auto catalogue = catalogue_of({blob(100, 100, 3), blob(108, 100, 3), blob(116, 100, 3)});
    CHECK(merge_streaks(catalogue, p) == 0);
    CHECK(catalogue.size() == 3);
  }
  SECTION("a star on the streak's line stays a star; the pieces around it merge") {
    const auto pixels = streak(50.0, 300.0, 0.0, 200.0);
    auto catalogue =
        catalogue_of({part(pixels, 0.0, 90.0), blob(145, 300, 4), part(pixels, 100.0, 201.0)});
    REQUIRE(catalogue.size() == 3);
    CHECK(merge_streaks(catalogue, p) == 1);
    REQUIRE(catalogue.size() == 2);
    CHECK(std::count_if(catalogue.begin(), catalogue.end(), [](const DetectedObject& o) {
            return (o.flags & kObjectStreakMerged) != 0;
          }) == 1);
  }
}

namespace {

// The pixels of both sets, each pixel once (the brighter where both have it), in raster order.
std::vector<Pixel> overlay(const std::vector<Pixel>& a, const std::vector<Pixel>& b) {
  std::vector<Pixel> all = join(a, b), out;
  for (const Pixel& p : all) {
    if (!out.empty() && out.back().x == p.x && out.back().y == p.y) {
      out.back().r = std::max(out.back().r, p.r);
      continue;
    }
    out.push_back(p);
  }
  return out;
}

std::size_t merged_count(const std::vector<DetectedObject>& catalogue) {
  return static_cast<std::size_t>(
      std::count_if(catalogue.begin(), catalogue.end(),
                    [](const DetectedObject& o) { return (o.flags & kObjectStreakMerged) != 0; }));
}

}  // namespace

TEST_CASE("two crossing trails merge into one record each, the crossing with its own trail",
          "[detect][streak-merge]") {
  // Trail A, 400 px, crossed in its middle by trail B: detection finds one object at the
  // crossing (A's middle and an arm of B on one side, which tilts its axis and pulls its
  // centroid off A's line), A's two ends apart from it, and B's pieces either side.
  const double ta = -0.55, tb = 1.07;
  const auto a = streak(60.0, 330.0, ta, 400.0);
  const double cx = 60.0 + 200.0 * std::cos(ta), cy = 330.0 + 200.0 * std::sin(ta);
  const auto b = streak(cx - 200.0 * std::cos(tb), cy - 200.0 * std::sin(tb), tb, 400.0);
  const auto a_start = part(a, 0.0, 70.0), a_end = part(a, 330.0, 401.0);
  const auto crossing = overlay(part(a, 80.0, 320.0), part(b, 200.0, 250.0));
  const auto b_start = part(b, 0.0, 185.0), b_end = part(b, 260.0, 401.0);
  auto catalogue = catalogue_of({a_start, a_end, crossing, b_start, b_end});
  REQUIRE(catalogue.size() == 5);
  // The crossing's axis is not A's: measured against it, A's ends lie off the line.
  const DetectedObject blob = record_of(crossing);
  const double c = std::cos(blob.theta), s = std::sin(blob.theta);
  const DetectedObject end = record_of(a_end);
  REQUIRE(std::fabs(-(end.x - blob.x) * s + (end.y - blob.y) * c) > 2.0);

  REQUIRE(merge_streaks(catalogue, StreakMergeParams{}) == 3);
  REQUIRE(catalogue.size() == 2);
  CHECK(merged_count(catalogue) == 2);
  const std::size_t a_npix = a_start.size() + a_end.size() + crossing.size();
  const std::size_t b_npix = b_start.size() + b_end.size();
  const bool a_first = catalogue[0].npix == a_npix;
  const DetectedObject& ma = catalogue[a_first ? 0 : 1];
  const DetectedObject& mb = catalogue[a_first ? 1 : 0];
  CHECK(ma.npix == a_npix);
  CHECK(mb.npix == b_npix);
  CHECK(axis_difference(ma.theta, ta) < 0.05);
  CHECK(axis_difference(mb.theta, tb) < 0.01);
  CHECK(ma.length == Approx(400.0).margin(3.0));
  CHECK(mb.length == Approx(400.0).margin(3.0));
}

TEST_CASE("pieces of two parallel trails 6 px apart stay with their own trail",
          "[detect][streak-merge]") {
  const double t = 0.4, c = std::cos(t), s = std::sin(t);
  const auto a = streak(80.0, 100.0, t, 300.0);
  const auto b = streak(80.0 - 6.0 * s, 100.0 + 6.0 * c, t, 300.0);
  // The gaps staggered, so that each piece of one trail overlaps a gap of the other; small
  // fragments of each in the other's gaps.
  const auto a1 = part(a, 0.0, 100.0), a2 = part(a, 110.0, 200.0), a3 = part(a, 212.0, 301.0);
  const auto b1 = part(b, 0.0, 50.0), b2 = part(b, 58.0, 150.0), b3 = part(b, 160.0, 301.0);
  const auto fa = part(a, 104.0, 106.0), fb = part(b, 53.0, 55.0);
  auto catalogue = catalogue_of({a1, a2, a3, b1, b2, b3, fa, fb});
  REQUIRE(catalogue.size() == 8);
  REQUIRE(merge_streaks(catalogue, StreakMergeParams{}) == 6);
  REQUIRE(catalogue.size() == 2);
  std::vector<std::uint32_t> npix{catalogue[0].npix, catalogue[1].npix};
  std::sort(npix.begin(), npix.end());
  std::vector<std::uint32_t> want{
      static_cast<std::uint32_t>(a1.size() + a2.size() + a3.size() + fa.size()),
      static_cast<std::uint32_t>(b1.size() + b2.size() + b3.size() + fb.size())};
  std::sort(want.begin(), want.end());
  CHECK(npix == want);
}

TEST_CASE("a fragment or a short piece of poor angle on a trusted line joins it",
          "[detect][streak-merge]") {
  const double t = 0.2;
  const auto pixels = streak(40.0, 120.0, t, 300.0);
  const auto left = part(pixels, 0.0, 140.0), right = part(pixels, 150.0, 301.0);
  const StreakMergeParams p;
  SECTION("a few pixels of the trail in its gap") {
    const auto fragment = part(pixels, 144.0, 146.5);
    const DetectedObject f = record_of(fragment);
    REQUIRE_FALSE(is_streak_piece(f, p));
    auto catalogue = catalogue_of({left, fragment, right});
    REQUIRE(catalogue.size() == 3);
    CHECK(merge_streaks(catalogue, p) == 2);
    REQUIRE(catalogue.size() == 1);
    CHECK(catalogue[0].npix == left.size() + fragment.size() + right.size());
  }
  SECTION("the same fragment 2 px off the line stays apart") {
    std::vector<Pixel> fragment = part(pixels, 144.0, 146.5);
    for (Pixel& q : fragment) q.y += 2;  // 2 cos(0.2) = 1.96 px across the line
    auto catalogue = catalogue_of({left, fragment, right});
    CHECK(merge_streaks(catalogue, p) == 1);
    CHECK(catalogue.size() == 2);
  }
  SECTION("a fragment beside a short piece, whose axis is not trusted, stays apart") {
    const auto shorter = part(pixels, 0.0, 12.0);
    const DetectedObject r = record_of(shorter);
    REQUIRE(is_streak_piece(r, p));
    REQUIRE(r.a < r.b / p.max_angle);
    auto catalogue = catalogue_of({shorter, part(pixels, 14.0, 16.5)});
    CHECK(merge_streaks(catalogue, p) == 0);
  }
  SECTION("a short piece at 0.3 rad to the line, within max_offset of it") {
    // 8 px centred in the gap: its ends 4 sin(0.3) = 1.2 px off the line.
    const auto piece_across =
        streak(40.0 + 145.0 * std::cos(t) - 4.0 * std::cos(t + 0.3),
               120.0 + 145.0 * std::sin(t) - 4.0 * std::sin(t + 0.3), t + 0.3, 8.0);
    const DetectedObject q = record_of(piece_across);
    REQUIRE(is_streak_piece(q, p));
    REQUIRE(axis_difference(q.theta, t) > p.max_angle);
    auto catalogue = catalogue_of({left, piece_across, right});
    CHECK(merge_streaks(catalogue, p) == 2);
    CHECK(catalogue.size() == 1);
    // Two such pieces, neither trusted, do not join each other at that angle.
    catalogue = catalogue_of({part(pixels, 130.0, 138.0), piece_across});
    CHECK(merge_streaks(catalogue, p) == 0);
  }
}

TEST_CASE("a merge that merges nothing leaves the id map alone", "[detect][streak-merge]") {
  auto catalogue = catalogue_of({blob(100, 100, 2), blob(300, 300, 2)});
  StreakMergeScratch scratch;
  std::vector<std::uint32_t> new_ids{7, 8};
  CHECK(merge_streaks(catalogue, StreakMergeParams{}, scratch, &new_ids) == 0);
  CHECK(new_ids == std::vector<std::uint32_t>{7, 8});
}

TEST_CASE("empty and one-record catalogues are unchanged", "[detect][streak-merge]") {
  std::vector<DetectedObject> empty;
  CHECK(merge_streaks(empty, StreakMergeParams{}) == 0);
  CHECK(empty.empty());
  auto one = catalogue_of({streak(10.0, 10.0, 0.5, 100.0)});
  const DetectedObject before = one[0];
  CHECK(merge_streaks(one, StreakMergeParams{}) == 0);
  REQUIRE(one.size() == 1);
  CHECK(one[0].flags == before.flags);
  CHECK(one[0].length == before.length);
}

TEST_CASE("streak merge parameters are refused with their name and range",
          "[detect][streak-merge]") {
  CHECK_NOTHROW(StreakMergeParams{}.validate());
  require_refused([](auto& p) { p.max_angle = 0.0; }, "max-angle", "0");
  require_refused([](auto& p) { p.max_angle = 0.6; }, "max-angle", "0.6");
  require_refused([](auto& p) { p.max_offset = -1.0; }, "max-offset", "-1");
  require_refused([](auto& p) { p.min_elongation = 0.5; }, "min-elongation", "0.5");
  require_refused([](auto& p) { p.min_length = NAN; }, "min-length", "nan");
  require_refused([](auto& p) { p.max_gap = 11.0; }, "max-gap", "11");
  REQUIRE_THROWS_AS(
      [] {
        StreakMergeParams p;
        p.max_gap = -0.1;
        p.validate();
      }(),
      Error);
}

namespace {

// A streak piece as detection reports one: centroid, angle, length, and the end points at
// length / 2 either side along the angle.
DetectedObject piece(std::uint32_t id, double x, double y, double theta, double length) {
  DetectedObject o{};
  o.id = id;
  o.x = static_cast<float>(x);
  o.y = static_cast<float>(y);
  o.npix = static_cast<std::uint32_t>(2.0 * length) + 2;
  o.flux = 10.0f * static_cast<float>(o.npix);
  o.flux_err = 1.0f;
  o.theta = static_cast<float>(theta);
  o.length = static_cast<float>(length);
  o.a = static_cast<float>(length / std::sqrt(12.0) + 0.5);
  o.b = 0.6f;
  o.elongation = o.a / o.b;
  const double c = std::cos(theta), s = std::sin(theta);
  o.x2 = static_cast<float>(o.a * o.a * c * c + o.b * o.b * s * s);
  o.y2 = static_cast<float>(o.a * o.a * s * s + o.b * o.b * c * c);
  o.xy = static_cast<float>((o.a * o.a - o.b * o.b) * s * c);
  o.x_start = static_cast<float>(x - 0.5 * length * c);
  o.y_start = static_cast<float>(y - 0.5 * length * s);
  o.x_end = static_cast<float>(x + 0.5 * length * c);
  o.y_end = static_cast<float>(y + 0.5 * length * s);
  return o;
}

}  // namespace

TEST_CASE("the merge's sweep joins the groups that testing every pair joins",
          "[detect][streak-merge]") {
  // Crowded catalogues of elongated records: broken streaks (short and meteor-long), some
  // with a fragment in a gap, among thousands of random pieces and fragments. The groups (the
  // id map) equal those of every pair tested with streak_pieces_join() and united, smallest
  // index the root.
  // Rounds 0-3 hold many pieces of trusted axis (the fragments sorted by x), rounds 4-5 few
  // broken streaks among many fragments, as a raw star field with a meteor (each trusted piece
  // scans every fragment).
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> where(0.0, 2048.0), angle(-1.5, 1.5), len(4.0, 20.0);
  for (int round = 0; round < 6; ++round) {
    const bool crowded = round < 4;
    std::vector<DetectedObject> records;
    for (int k = 0; k < (crowded ? 1500 : 0); ++k)
      records.push_back(piece(0, where(rng), where(rng), angle(rng), len(rng)));
    for (int k = 0; k < (crowded ? 40 : 3); ++k) {  // broken streaks: pieces with gaps on a line
      const double x = where(rng), y = where(rng), t = angle(rng);
      const double step = k % 10 == 0 ? 180.0 : 14.0;  // some meteor-long pieces
      for (int p = 0; p < 4; ++p) {
        records.push_back(
            piece(0, x + p * step * std::cos(t), y + p * step * std::sin(t), t, step * 0.8));
      }
      // A fragment in the last gap, on the line or beside it.
      const double f = 3.5 * step, side = k % 3 == 0 ? 3.0 : 0.3;
      records.push_back(piece(0, x + f * std::cos(t) - side * std::sin(t),
                              y + f * std::sin(t) + side * std::cos(t), angle(rng), 2.0));
    }
    for (int k = 0; k < (crowded ? 500 : 2500); ++k)  // fragments anywhere (too short to be pieces)
      records.push_back(piece(0, where(rng), where(rng), angle(rng), 2.0));
    std::sort(records.begin(), records.end(), [](const DetectedObject& a, const DetectedObject& b) {
      return a.y < b.y || (a.y == b.y && a.x < b.x);
    });
    for (std::size_t i = 0; i < records.size(); ++i)
      records[i].id = static_cast<std::uint32_t>(i + 1);

    // The reference: every pair.
    const StreakMergeParams params;
    const auto n = static_cast<std::uint32_t>(records.size());
    std::vector<std::uint32_t> parent(n);
    for (std::uint32_t i = 0; i < n; ++i) parent[i] = i;
    std::function<std::uint32_t(std::uint32_t)> root = [&](std::uint32_t i) {
      return parent[i] == i ? i : root(parent[i]);
    };
    for (std::uint32_t i = 0; i < n; ++i) {
      for (std::uint32_t j = i + 1; j < n; ++j) {
        if (!streak_pieces_join(records[i], records[j], params)) continue;
        const std::uint32_t ri = root(i), rj = root(j);
        if (ri != rj) parent[std::max(ri, rj)] = std::min(ri, rj);
      }
    }
    std::vector<std::uint32_t> expected(n + 1, 0);
    std::uint32_t next_id = 0, groups = 0;
    std::vector<std::uint32_t> id_of_root(n, 0);
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t r = root(i);
      if (r == i) id_of_root[i] = ++next_id;
      expected[records[i].id] = id_of_root[r];
      groups += r == i;
    }
    REQUIRE(groups < n);  // something merges

    std::vector<DetectedObject> merged = records;
    std::vector<std::uint32_t> new_ids;
    StreakMergeScratch scratch;
    merge_streaks(merged, params, scratch, &new_ids);
    INFO("round " << round);
    CHECK(merged.size() == groups);
    CHECK(new_ids == expected);
  }
}
