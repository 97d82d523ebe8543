// SPDX-License-Identifier: LGPL-2.1-or-later
// The merged flag (pipeline/detect/blend.hpp) on the CPU: overlapping sources flagged, single
// sources and sources too close to tell apart not, with noise; a crowded field against its
// stars; the peak rule's ties; the line test; objects too large to examine.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "pipeline/detect/blend.hpp"
#include "pipeline/detect/reference.hpp"
#include "support/blob_frame.hpp"
#include "support/test_image.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

std::vector<DetectedObject> detect(const TestImage& in,
                                   DetectThreshold mode = DetectThreshold::Sigma,
                                   double threshold = 3.0) {
  DetectParams p;
  p.background = DetectBackground::None;
  p.filter = DetectFilter::Default;
  p.threshold_mode = mode;
  p.threshold = threshold;
  const FrameShape shape{in.cview().width, in.cview().height, PixelFormat::Gray32F, 32};
  DetectState state(p, shape);
  std::vector<DetectedObject> records(4096);
  TestImage out(shape.width, shape.height, PixelFormat::Gray32F);
  const DetectCounts counts = state.process(in.cview(), out.view(), records, shared_thread_pool());
  records.resize(counts.objects);
  return records;
}

bool merged(const DetectedObject& o) {
  return (o.flags & kObjectMerged) != 0;
}

}  // namespace

TEST_CASE("two overlapping stars are one object, flagged merged; one star is not",
          "[detect][blend]") {
  for (std::uint32_t seed = 1; seed <= 12; ++seed) {
    CAPTURE(seed);
    // 6 px apart at sigma 1.5: the light between them stays above the threshold (one object),
    // but comes down to about a third of the fainter peak.
    const auto pair =
        detect(blob_frame(64, 48, {{24.2, 20.6, 1.5, 40}, {30.1, 21.3, 1.5, 30}}, 1.0, seed));
    REQUIRE(pair.size() == 1);
    CHECK(merged(pair[0]));
    const auto single = detect(blob_frame(64, 48, {{24.2, 20.6, 2.0, 60}}, 1.0, seed));
    REQUIRE(single.size() == 1);
    CHECK_FALSE(merged(single[0]));
    // Two sources 2 px apart make one peak between them: nothing tells them apart.
    const auto close =
        detect(blob_frame(64, 48, {{24.0, 20.0, 1.5, 40}, {26.0, 20.0, 1.5, 40}}, 1.0, seed));
    REQUIRE(close.size() == 1);
    CHECK_FALSE(merged(close[0]));
  }
}

TEST_CASE("the merged flag in absolute units, and for objects apart", "[detect][blend]") {
  // Two separate objects: neither merged. In absolute mode z is the value above the
  // background, and the same pair at 100 times the scale is merged at 100 times the threshold.
  const auto apart = detect(blob_frame(96, 48, {{20, 20, 1.5, 40}, {70, 24, 1.5, 30}}, 0.0, 1));
  REQUIRE(apart.size() == 2);
  CHECK_FALSE(merged(apart[0]));
  CHECK_FALSE(merged(apart[1]));
  const auto pair = detect(blob_frame(64, 48, {{24, 20, 1.5, 4000}, {30, 21, 1.5, 3000}}, 0.0, 1),
                           DetectThreshold::Absolute, 300.0);
  REQUIRE(pair.size() == 1);
  CHECK(merged(pair[0]));
}

TEST_CASE("objects larger than blend::kMaxArea are not examined", "[detect][blend]") {
  // Two well separated peaks on a plateau above the threshold that joins them into one object
  // of 300 x 300 pixels.
  const TestImage in =
      blob_frame(300, 300, {{100, 150, 1.5, 40}, {200, 150, 1.5, 40}}, 0.0, 1, 10.0);
  const auto objects = detect(in);
  REQUIRE(objects.size() == 1);
  REQUIRE(objects[0].npix > blend::kMaxArea);
  CHECK_FALSE(merged(objects[0]));
  // The same peaks on a plateau of 200 x 200 (40 000 pixels) are examined, and merged.
  const TestImage smaller =
      blob_frame(200, 200, {{50, 100, 1.5, 40}, {150, 100, 1.5, 40}}, 0.0, 1, 10.0);
  const auto examined = detect(smaller);
  REQUIRE(examined.size() == 1);
  CHECK(merged(examined[0]));
}

TEST_CASE("blend rules: peaks on flat tops, lines, levels", "[detect][blend]") {
  // A 3 x 2 flat top: only its first pixel in raster order is a peak.
  const int w = 5, h = 4;
  const float z[h][w] = {{0, 0, 0, 0, 0}, {0, 9, 9, 9, 0}, {0, 9, 9, 9, 0}, {0, 0, 0, 0, 0}};
  const auto z_at = [&](int x, int y) { return z[y][x]; };
  const auto inside = [&](int x, int y) { return z[y][x] > 0; };
  int peaks = 0;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      if (inside(x, y) && blend::is_peak(x, y, z[y][x], w, h, z_at, inside)) {
        ++peaks;
        CHECK((x == 1 && y == 1));
      }
    }
  }
  CHECK(peaks == 1);
  // The level: z - max(threshold, 0.3 z).
  CHECK(blend::separating_level(10.0f, 4.5f) == 5.5f);
  CHECK(blend::separating_level(100.0f, 4.5f) == 70.0f);
  CHECK(blend::may_peak(9.0f, 4.5f));
  CHECK_FALSE(blend::may_peak(8.9f, 4.5f));
  // The line: ends left out; leaving the object or reaching the level separates.
  const float row[7] = {20, 12, 11, 10, 11, 12, 30};
  const auto along = [&](int x, int) { return row[x]; };
  const auto all = [](int, int) { return true; };
  CHECK(blend::separated(0, 0, 6, 0, 10.0f, along, all));
  CHECK_FALSE(blend::separated(0, 0, 6, 0, 9.9f, along, all));
  CHECK(blend::separated(0, 0, 6, 0, 0.0f, along, [](int x, int) { return x != 3; }));
  CHECK_FALSE(blend::separated(0, 0, 1, 0, 100.0f, along, all));  // neighbours: nothing between
  // A diagonal line visits one pixel a step.
  int visited = 0;
  blend::separated(
      0, 0, 4, 4, -1.0f,
      [&](int x, int y) {
        ++visited;
        CHECK(x == y);
        return 0.0f;
      },
      all);
  CHECK(visited == 3);
}

TEST_CASE("a crowded field: merged objects hold two stars or more, single stars are not merged",
          "[detect][blend]") {
  // Random stars at 0.6 per 100 pixels, many overlapping. An object's stars: those whose centre
  // (held in the frame) lies within a pixel of its box.
  for (const auto& [w, h] : {std::pair{203, 131}, std::pair{640, 360}}) {
    std::mt19937 rng(7u + static_cast<std::uint32_t>(w));
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<Blob> stars;
    for (int i = 0; i < w * h * 6 / 1000; ++i)
      stars.push_back({u(rng) * w, u(rng) * h, 0.8 + u(rng) * 2, 4 + 40 * u(rng)});
    const auto objects = detect(blob_frame(w, h, stars, 1.0, 3));
    std::size_t flagged = 0;
    for (const DetectedObject& o : objects) {
      int inside = 0;
      for (const Blob& b : stars) {
        const double x = std::clamp(b.x, 0.0, w - 1.0), y = std::clamp(b.y, 0.0, h - 1.0);
        inside += x > o.xmin - 1 && x < o.xmax + 1 && y > o.ymin - 1 && y < o.ymax + 1;
      }
      INFO("object " << o.id << " at " << o.x << ", " << o.y << ": " << inside << " stars");
      if (merged(o)) {
        ++flagged;
        CHECK(inside >= 2);
      }
      if (inside <= 1) CHECK_FALSE(merged(o));
    }
    INFO(w << "x" << h << ": " << flagged << " of " << objects.size() << " merged");
    CHECK(flagged >= 3);
    CHECK(flagged < objects.size());
  }
}
