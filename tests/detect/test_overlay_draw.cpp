// SPDX-License-Identifier: LGPL-2.1-or-later
// The overlay's drawing (pipeline/detect/overlay_draw.hpp) and the label frame's renumbering
// after a streak merge (label_remap.hpp): pixels on a drawn line and ellipse lie where they
// should, nothing is written outside the frame whatever the coordinates (a frame inside a
// guard border), degenerate ellipses and one-point tails, and ids mapped as the merge says.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <vector>

#include "pipeline/detect/label_remap.hpp"
#include "pipeline/detect/overlay_draw.hpp"

using namespace starsift;

namespace {

constexpr std::uint8_t kGuard = 77;
constexpr std::uint8_t kBackground = 0;
constexpr std::uint8_t kInk = 255;

// A GRAY8 frame of w x h inside a border of `guard` px filled with kGuard: the view is the
// inside, whose rows are as long as the whole (a padded stride).
class GuardedFrame {
 public:
  GuardedFrame(int w, int h, int guard = 8)
      : w_(w),
        h_(h),
        g_(guard),
        outer_w_(w + 2 * guard),
        bytes_(static_cast<std::size_t>(outer_w_) * (h + 2 * guard), std::byte{kGuard}) {
    for (int y = 0; y < h_; ++y) {
      for (int x = 0; x < w_; ++x) at(x, y) = kBackground;
    }
  }
  ImageView view() {
    return {bytes_.data() + static_cast<std::ptrdiff_t>(g_) * outer_w_ + g_, w_, h_, outer_w_,
            PixelFormat::Gray8};
  }
  std::uint8_t& at(int x, int y) {
    return reinterpret_cast<std::uint8_t&>(
        bytes_[static_cast<std::size_t>(y + g_) * outer_w_ + static_cast<std::size_t>(x + g_)]);
  }
  // Every byte of the border still holds kGuard.
  bool guard_intact() {
    for (int y = -g_; y < h_ + g_; ++y) {
      for (int x = -g_; x < w_ + g_; ++x) {
        const bool inside = x >= 0 && y >= 0 && x < w_ && y < h_;
        if (!inside && at(x, y) != kGuard) return false;
      }
    }
    return true;
  }
  int count(std::uint8_t level) {
    int n = 0;
    for (int y = 0; y < h_; ++y) {
      for (int x = 0; x < w_; ++x) n += at(x, y) == level ? 1 : 0;
    }
    return n;
  }

 private:
  int w_, h_, g_, outer_w_;
  std::vector<std::byte> bytes_;
};

}  // namespace

TEST_CASE("a line sets the pixels of Bresenham's line between its rounded ends",
          "[detect][overlay]") {
  GuardedFrame f(40, 30);
  draw_line(f.view(), 2.2, 3.0, 12.0, 3.4, kInk);  // horizontal, ends rounded to (2,3), (12,3)
  for (int x = 2; x <= 12; ++x) CHECK(f.at(x, 3) == kInk);
  CHECK(f.at(1, 3) == kBackground);
  CHECK(f.at(13, 3) == kBackground);
  CHECK(f.count(kInk) == 11);

  GuardedFrame d(40, 30);
  draw_line(d.view(), 5.0, 5.0, 15.0, 15.0, kInk);  // the diagonal, both ends included
  for (int k = 5; k <= 15; ++k) CHECK(d.at(k, k) == kInk);
  CHECK(d.count(kInk) == 11);

  // A steep line: one pixel per row, each within half a pixel of the exact line.
  GuardedFrame s(40, 30);
  draw_line(s.view(), 10.0, 2.0, 14.0, 22.0, kInk);
  CHECK(s.count(kInk) == 21);
  for (int y = 2; y <= 22; ++y) {
    const double exact = 10.0 + (y - 2) * 4.0 / 20.0;
    int on = 0;
    for (int x = 0; x < 40; ++x) {
      if (s.at(x, y) != kInk) continue;
      ++on;
      CHECK(std::fabs(x - exact) <= 0.5 + 1e-9);
    }
    CHECK(on == 1);
  }
}

TEST_CASE("lines are clipped to the frame; nothing is written beyond it", "[detect][overlay]") {
  GuardedFrame f(32, 24);
  ImageView v = f.view();
  // Through the frame from far outside on every side, wholly outside, along the edges, huge
  // and non-finite coordinates.
  draw_line(v, -100.0, 12.0, 200.0, 12.0, kInk);
  draw_line(v, 16.0, -1e9, 16.0, 1e9, kInk);
  draw_line(v, -50.0, -50.0, 100.0, 100.0, kInk);
  draw_line(v, -10.0, -3.0, 50.0, -2.0, kInk);  // above the frame
  draw_line(v, 40.0, 0.0, 40.0, 23.0, kInk);    // right of it
  draw_line(v, -0.4, 23.4, 31.4, 23.4, kInk);   // the last row, ends within the edge pixels
  draw_line(v, 0.0, 0.0, std::numeric_limits<double>::infinity(), 5.0, kInk);
  draw_line(v, std::numeric_limits<double>::quiet_NaN(), 0.0, 5.0, 5.0, kInk);
  CHECK(f.guard_intact());
  for (int x = 0; x < 32; ++x) CHECK(f.at(x, 12) == kInk);  // the horizontal line, edge to edge
  for (int y = 0; y < 24; ++y) CHECK(f.at(16, y) == kInk);  // the vertical one
  for (int k = 0; k < 24; ++k) CHECK(f.at(k, k) == kInk);   // the diagonal
  for (int x = 0; x < 32; ++x) CHECK(f.at(x, 23) == kInk);  // the last row
  CHECK(f.at(31, 0) == kBackground);                        // the lines outside drew nothing
  draw_point(v, 31.6, 5.0, kInk);                           // beyond the last column's edge
  draw_point(v, -0.6, 5.0, kInk);
  CHECK(f.guard_intact());
  CHECK(f.at(31, 5) == kBackground);
  CHECK(f.at(0, 5) == kBackground);
}

TEST_CASE("an ellipse's outline lies on the ellipse, closed, at any angle", "[detect][overlay]") {
  for (const double theta : {0.0, 0.4, -1.2, std::numbers::pi / 2}) {
    INFO("theta " << theta);
    GuardedFrame f(64, 64);
    const double xc = 31.3, yc = 30.8, a = 15.0, b = 6.0;
    draw_ellipse(f.view(), xc, yc, a, b, theta, kOverlayEllipseLevel);
    CHECK(f.guard_intact());
    const double c = std::cos(theta), s = std::sin(theta);
    int on = 0;
    for (int y = 0; y < 64; ++y) {
      for (int x = 0; x < 64; ++x) {
        if (f.at(x, y) == kBackground) continue;
        REQUIRE(f.at(x, y) == kOverlayEllipseLevel);
        ++on;
        // Each pixel lies within a pixel of the ellipse: its distance to the curve to first
        // order, |F| / |grad F| with F = (u/a)^2 + (w/b)^2 - 1 in the ellipse's own axes.
        const double u = (x - xc) * c + (y - yc) * s, w = -(x - xc) * s + (y - yc) * c;
        const double F = (u / a) * (u / a) + (w / b) * (w / b) - 1.0;
        const double grad = std::hypot(2.0 * u / (a * a), 2.0 * w / (b * b));
        CHECK(std::fabs(F) / grad < 1.0);
      }
    }
    // Closed: a drawn pixel next to (or on) every point of the exact outline.
    for (int k = 0; k < 144; ++k) {
      const double t = 2.0 * std::numbers::pi * k / 144.0;
      const double u = a * std::cos(t), w = b * std::sin(t);
      const long px = std::lround(xc + u * c - w * s), py = std::lround(yc + u * s + w * c);
      bool hit = false;
      for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
          hit = hit ||
                f.at(static_cast<int>(px) + dx, static_cast<int>(py) + dy) == kOverlayEllipseLevel;
        }
      }
      CHECK(hit);
    }
    // About the perimeter in pixels (Ramanujan's: 69), far from a filled ellipse's 283.
    CHECK(on > 45);
    CHECK(on < 110);
    // The centre stays clear.
    CHECK(f.at(31, 31) == kBackground);
  }
}

TEST_CASE("ellipses at the edge are clipped, degenerate ones are a pixel or a line",
          "[detect][overlay]") {
  GuardedFrame f(32, 24);
  ImageView v = f.view();
  draw_ellipse(v, 0.0, 0.0, 10.0, 5.0, 0.3, kInk);      // a corner
  draw_ellipse(v, 31.0, 23.0, 40.0, 30.0, -0.7, kInk);  // larger than the frame
  draw_ellipse(v, 500.0, -300.0, 8.0, 8.0, 0.0, kInk);  // far outside
  draw_ellipse(v, 10.0, 10.0, 1e12, 1e12, 0.0, kInk);   // absurd axes
  draw_ellipse(v, 10.0, 10.0, std::numeric_limits<double>::quiet_NaN(), 2.0, 0.0, kInk);
  CHECK(f.guard_intact());
  CHECK(f.count(kInk) > 0);

  GuardedFrame p(16, 16);
  draw_ellipse(p.view(), 7.2, 8.4, 0.0, 0.0, 0.0, kInk);  // a point: its pixel
  CHECK(p.count(kInk) == 1);
  CHECK(p.at(7, 8) == kInk);
  GuardedFrame l(16, 16);
  draw_ellipse(l.view(), 8.0, 8.0, 4.0, 0.0, 0.0, kInk);  // no minor axis: a segment
  CHECK(l.guard_intact());
  for (int x = 4; x <= 12; ++x) CHECK(l.at(x, 8) == kInk);
  CHECK(l.count(kInk) == 9);
}

TEST_CASE("a polyline joins its points; a single point is its pixel", "[detect][overlay]") {
  GuardedFrame f(32, 24);
  const std::vector<TrackPoint> path{{2.0f, 2.0f}, {10.0f, 2.0f}, {10.0f, 9.0f}};
  draw_polyline(f.view(), path, kInk);
  for (int x = 2; x <= 10; ++x) CHECK(f.at(x, 2) == kInk);
  for (int y = 2; y <= 9; ++y) CHECK(f.at(10, y) == kInk);
  CHECK(f.count(kInk) == 9 + 8 - 1);

  GuardedFrame one(8, 8);
  const std::vector<TrackPoint> point{{3.4f, 4.6f}};
  draw_polyline(one.view(), point, kInk);
  CHECK(one.count(kInk) == 1);
  CHECK(one.at(3, 5) == kInk);
  draw_polyline(one.view(), std::span<const TrackPoint>{}, kInk);  // empty: nothing
  const std::vector<TrackPoint> off{{-40.0f, 3.0f}};
  draw_polyline(one.view(), off, kInk);
  CHECK(one.count(kInk) == 1);
  CHECK(one.guard_intact());

  GuardedFrame cross(8, 8);
  draw_cross(cross.view(), 0.2, 6.9, kOverlayMarkerHalf, kInk);  // at the edge: clipped
  CHECK(cross.guard_intact());
  CHECK(cross.count(kInk) == 3 + 3 - 1);  // (0..2, 7) and (0, 5..7)
}

TEST_CASE("the overlay leaves frames of other formats alone", "[detect][overlay]") {
  std::vector<std::uint16_t> pixels(16 * 16, 0);
  const ImageView gray16{reinterpret_cast<std::byte*>(pixels.data()), 16, 16, 32,
                         PixelFormat::Gray16};
  draw_line(gray16, 0.0, 0.0, 15.0, 15.0, kInk);
  draw_ellipse(gray16, 8.0, 8.0, 4.0, 2.0, 0.0, kInk);
  for (const std::uint16_t p : pixels) CHECK(p == 0);
}

TEST_CASE("labels are renumbered as the merge says", "[detect][overlay]") {
  // Ids 1..5 in the catalogue; 2 and 4 merged into 2, so 3 -> 3, 4 -> 2, 5 -> 4; ids 6 and 7
  // were past the catalogue's capacity and move down by one; 65535 (clipped) stays.
  const std::vector<std::uint32_t> new_ids{0, 1, 2, 3, 2, 4};
  std::vector<std::uint16_t> pixels{0, 1, 2, 3, 4, 5, 6, 7, 65535, 0, 4, 4};
  const ImageView labels{reinterpret_cast<std::byte*>(pixels.data()), 6, 2, 12,
                         PixelFormat::Gray16};
  remap_labels(labels, new_ids, 1);
  CHECK(pixels == std::vector<std::uint16_t>{0, 1, 2, 3, 2, 4, 5, 6, 65535, 0, 2, 2});
  // Only the view's pixels: a padded row's tail is not touched.
  std::vector<std::uint16_t> padded{4, 4, 4, 9, 4, 4, 4, 9};
  const ImageView inside{reinterpret_cast<std::byte*>(padded.data()), 3, 2, 8, PixelFormat::Gray16};
  remap_labels(inside, new_ids, 1);
  CHECK(padded == std::vector<std::uint16_t>{2, 2, 2, 9, 2, 2, 2, 9});
}
