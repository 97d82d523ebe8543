// SPDX-License-Identifier: LGPL-2.1-or-later
// Detection's line channel (line_channel.hpp): its bank's lines and their noise, a faint streak
// it finds where the point channel does not, white noise and a bright star left as they were,
// and its parameters refused out of range and read from YAML. The CUDA kernel against this
// reference: tests/detect/test_detect_cuda.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>
#include <random>
#include <set>
#include <vector>

#include "detect/streak_profile.hpp"
#include "pipeline/chain/chain_config.hpp"
#include "pipeline/detect/line_channel.hpp"
#include "pipeline/detect/reference.hpp"
#include "pipeline/error.hpp"
#include "support/test_image.hpp"

using namespace starsift;
using namespace starsift::test;
using Catch::Matchers::Contains;

namespace {

// A GRAY32F frame of unit white noise (none at noise 0) plus streaks (streak_profile.hpp) and
// point sources of the given peaks through the same PSF.
struct Point {
  double x, y, peak;
};
TestImage sky(int w, int h, double noise, const std::vector<Streak>& streaks,
              const std::vector<Point>& points, std::uint32_t seed) {
  TestImage img(w, h, PixelFormat::Gray32F);
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      double v = noise > 0 ? noise * n(rng) : 0.0;
      for (const Streak& s : streaks) v += streak_at(s, x, y);
      for (const Point& p : points) {
        const double r2 = (x - p.x) * (x - p.x) + (y - p.y) * (y - p.y);
        v += p.peak * std::exp(-r2 / (2 * kPsfSigma * kPsfSigma));
      }
      img.view().row_as<float>(y)[x] = static_cast<float>(v);
    }
  }
  return img;
}

// Detection on frames of unit noise: no background to estimate, the default 3 x 3 filter.
DetectParams unit_noise_params(int line_length) {
  DetectParams p;
  p.background = DetectBackground::None;
  p.line_length = line_length;
  return p;
}

std::vector<DetectedObject> detect(const DetectParams& p, const TestImage& in) {
  DetectState state(p, {in.width, in.height, PixelFormat::Gray32F, 32});
  std::vector<DetectedObject> records(4096);
  TestImage out(in.width, in.height, PixelFormat::Gray32F);
  const DetectCounts counts = state.process(in.cview(), out.view(), records, shared_thread_pool());
  records.resize(counts.objects);
  return records;
}

// The records whose centroid lies within `tolerance` px of the streak's segment.
std::vector<DetectedObject> on_streak(const std::vector<DetectedObject>& records, const Streak& s,
                                      double tolerance) {
  std::vector<DetectedObject> near;
  for (const DetectedObject& o : records) {
    const double dx = o.x - s.cx, dy = o.y - s.cy;
    const double along = dx * std::cos(s.theta) + dy * std::sin(s.theta);
    const double across = -dx * std::sin(s.theta) + dy * std::cos(s.theta);
    if (std::abs(across) <= tolerance && std::abs(along) <= s.length / 2 + tolerance) {
      near.push_back(o);
    }
  }
  return near;
}

// The difference of two angles of lines (modulo pi), in [0, pi / 2].
double line_angle_error(double a, double b) {
  double d = std::fmod(std::abs(a - b), std::numbers::pi);
  return std::min(d, std::numbers::pi - d);
}

}  // namespace

TEST_CASE("the line bank: length + 1 orientations of distinct whole-pixel taps",
          "[detect][lines]") {
  DetectParams p;
  for (const int length : {5, 15, 31, 63}) {
    INFO("length " << length);
    const LineBank bank = make_line_bank(length, detect_kernel(p));
    CHECK(bank.length == length);
    CHECK(bank.radius == length / 2);
    REQUIRE(static_cast<int>(bank.orientations.size()) == length + 1);
    for (std::size_t k = 0; k < bank.orientations.size(); ++k) {
      const LineOrientation& o = bank.orientations[k];
      CHECK(o.theta == Approx(std::numbers::pi * k / (length + 1)));
      REQUIRE(static_cast<int>(o.taps.size()) == length);
      std::set<std::pair<int, int>> distinct;
      for (const LineTap& t : o.taps) {
        distinct.insert({t.dx, t.dy});
        CHECK(std::max(std::abs(t.dx), std::abs(t.dy)) <= bank.radius);
        // Each tap within half a pixel of the true line (its rounded coordinate).
        const double across = -t.dx * std::sin(o.theta) + t.dy * std::cos(o.theta);
        CHECK(std::abs(across) <= 0.5 + 1e-9);
      }
      CHECK(distinct.size() == o.taps.size());
      CHECK(o.inv_norm > 0.0f);
    }
  }
  // Without a filter the significances are independent: the sum's deviation is sqrt(length).
  p.filter = DetectFilter::None;
  const LineBank plain = make_line_bank(15, detect_kernel(p));
  for (const LineOrientation& o : plain.orientations)
    CHECK(o.inv_norm == Approx(1 / std::sqrt(15.0)));
  CHECK(make_line_bank(0, detect_kernel(p)).orientations.empty());
}

TEST_CASE("each line's sum over white noise has unit deviation, whatever its orientation",
          "[detect][lines]") {
  // The point channel's significance of white noise, then each orientation alone.
  const int w = 384, h = 384;
  for (const DetectFilter filter : {DetectFilter::Default, DetectFilter::Gaussian}) {
    DetectParams p = unit_noise_params(0);
    p.filter = filter;
    const TestImage in = sky(w, h, 1.0, {}, {}, 11);
    DetectState state(p, {w, h, PixelFormat::Gray32F, 32});
    std::vector<DetectedObject> records(4096);
    TestImage out(w, h, PixelFormat::Gray32F);
    state.process(in.cview(), out.view(), records, shared_thread_pool());
    const LineBank bank = make_line_bank(15, detect_kernel(p));
    for (std::size_t k = 0; k < bank.orientations.size(); k += 3) {
      LineBank one = bank;
      one.orientations = {bank.orientations[k]};
      Plane line(w, h);
      line_significance(state.significance(), one, line, shared_thread_pool());
      double sum = 0.0, sum2 = 0.0;
      int n = 0;
      for (int y = 20; y < h - 20; ++y) {
        for (int x = 20; x < w - 20; ++x) {
          sum += line.at(x, y);
          sum2 += static_cast<double>(line.at(x, y)) * line.at(x, y);
          ++n;
        }
      }
      const double mean = sum / n, deviation = std::sqrt(sum2 / n - mean * mean);
      INFO("filter " << to_string(filter) << ", theta " << bank.orientations[k].theta);
      CHECK(std::abs(mean) < 0.05);
      // The cap takes a little of the upper tail: about 1 % of the variance.
      CHECK(deviation > 0.93);
      CHECK(deviation < 1.05);
    }
  }
}

TEST_CASE("a streak too faint for the point channel is found whole by the line channel",
          "[detect][lines]") {
  // Amplitude 1.8 of the pixel noise: its filtered pixels reach about 2.9 sigma, under the
  // threshold of 4.5; lines of 15 px along it sum to about 9 sigma.
  const int w = 256, h = 200;
  for (const double theta : {0.0, 0.6, std::numbers::pi / 4, 1.9, std::numbers::pi / 2, 2.8}) {
    INFO("theta " << theta);
    const Streak s{128.0, 100.0, theta, 90.0, 1.8};
    const TestImage in = sky(w, h, 1.0, {s}, {}, 23);
    const auto point_only = on_streak(detect(unit_noise_params(0), in), s, 3.0);
    double longest = 0.0;
    for (const DetectedObject& o : point_only) longest = std::max(longest, double(o.length));
    CHECK(longest < 0.3 * s.length);  // at best a fragment

    const auto with_lines = on_streak(detect(unit_noise_params(15), in), s, 3.0);
    REQUIRE(with_lines.size() == 1);
    const DetectedObject& o = with_lines.front();
    // Its ends reach past the streak's by up to half a line where the sum still passes.
    CHECK(o.length > 0.85 * s.length);
    CHECK(o.length < s.length + 15.0);
    CHECK(line_angle_error(o.theta, theta) < 0.03);
    // The centroid on the streak's line, and near its middle (the ends' noise moves it along).
    const double dx = o.x - s.cx, dy = o.y - s.cy;
    INFO("length " << o.length << ", theta " << o.theta << ", centroid " << o.x << ", " << o.y);
    CHECK(std::abs(-dx * std::sin(theta) + dy * std::cos(theta)) < 0.5);
    CHECK(std::abs(dx * std::cos(theta) + dy * std::sin(theta)) < 6.0);
  }
}

TEST_CASE("white noise and a bright star stay as the point channel leaves them",
          "[detect][lines]") {
  // White noise: lines of 15 and 31 px add no detection over 1 Mpix (the threshold's
  // expected rate is under 0.01 per Mpix-frame).
  for (const int length : {15, 31}) {
    INFO("length " << length);
    int added = 0;
    for (std::uint32_t seed = 1; seed <= 4; ++seed) {
      const TestImage in = sky(512, 512, 1.0, {}, {}, seed);
      added += static_cast<int>(detect(unit_noise_params(length), in).size()) -
               static_cast<int>(detect(unit_noise_params(0), in).size());
    }
    CHECK(added == 0);
  }
  // A star of peak 300 sigma: each tap adds at most the cap, so lines through it pass no
  // threshold and its object keeps its pixels.
  const TestImage in = sky(96, 96, 1.0, {}, {{48.0, 48.0, 300.0}}, 5);
  const auto point_only = detect(unit_noise_params(0), in);
  const auto with_lines = detect(unit_noise_params(15), in);
  REQUIRE(point_only.size() == 1);
  REQUIRE(with_lines.size() == 1);
  CHECK(with_lines.front().npix == point_only.front().npix);
}

TEST_CASE("the line channel's parameters: ranges and YAML", "[detect][lines]") {
  for (const int bad : {-1, 3, 4, 16, 65}) {
    DetectParams p;
    p.line_length = bad;
    INFO("line-length " << bad);
    CHECK_THROWS_WITH(p.validate(),
                      Contains("line-length") && Contains("0 (off) or an odd length 5..63"));
  }
  DetectParams p;
  p.line_length = 15;
  p.line_threshold = 0.0;
  CHECK_THROWS_WITH(p.validate(), Contains("line-threshold"));
  p.line_threshold = 6.0;
  CHECK_NOTHROW(p.validate());
  p.threshold_mode = DetectThreshold::Absolute;
  CHECK_THROWS_WITH(p.validate(), Contains("line-length") && Contains("threshold-mode absolute"));

  const ChainConfig chain =
      parse_chain_yaml("- detect: {line-length: 31, line-threshold: 6}", "f.yaml");
  const auto& read = std::get<DetectParams>(chain.stages.at(0).params);
  CHECK(read.line_length == 31);
  CHECK(read.line_threshold == 6.0);
  CHECK_THROWS_WITH(parse_chain_yaml("- detect: {line-length: 8}", "f.yaml"),
                    Contains("line-length"));
}
