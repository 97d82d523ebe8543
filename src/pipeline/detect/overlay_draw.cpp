// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/detect/overlay_draw.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numbers>

namespace starsift {

namespace {

bool drawable(const ImageView& image) {
  return image.format == PixelFormat::Gray8 && image.data != nullptr && image.width > 0 &&
         image.height > 0;
}

void put(const ImageView& image, long x, long y, std::uint8_t level) {
  if (x < 0 || y < 0 || x >= image.width || y >= image.height) return;
  image.row_as<std::uint8_t>(static_cast<int>(y))[x] = level;
}

// Liang-Barsky: clips the segment to [-0.5, w - 0.5] x [-0.5, h - 0.5] (the frame's pixels
// to their outer edges); false when nothing of it is left.
bool clip_segment(const ImageView& image, double& x0, double& y0, double& x1, double& y1) {
  const double dx = x1 - x0, dy = y1 - y0;
  double t0 = 0.0, t1 = 1.0;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {x0 + 0.5, image.width - 0.5 - x0, y0 + 0.5, image.height - 0.5 - y0};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0.0) {
      if (q[i] < 0.0) return false;  // parallel to this edge and outside it
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0.0) {
      t0 = std::max(t0, t);
    } else {
      t1 = std::min(t1, t);
    }
    if (t0 > t1) return false;
  }
  const double ax = x0 + t0 * dx, ay = y0 + t0 * dy;
  x1 = x0 + t1 * dx;
  y1 = y0 + t1 * dy;
  x0 = ax;
  y0 = ay;
  return true;
}

}  // namespace

void draw_point(ImageView image, double x, double y, std::uint8_t level) noexcept {
  if (!drawable(image) || !std::isfinite(x) || !std::isfinite(y)) return;
  if (x < -0.5 || y < -0.5 || x >= image.width - 0.5 || y >= image.height - 0.5) return;
  put(image, std::lround(x), std::lround(y), level);
}

void draw_line(ImageView image, double x0, double y0, double x1, double y1,
               std::uint8_t level) noexcept {
  if (!drawable(image)) return;
  if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(x1) || !std::isfinite(y1)) return;
  if (!clip_segment(image, x0, y0, x1, y1)) return;
  // Clipped to the frame, the rounded end points lie in it or a pixel beyond its edge (put()
  // skips those): the loop below runs at most width + height + 2 steps.
  long x = std::lround(x0), y = std::lround(y0);
  const long xe = std::lround(x1), ye = std::lround(y1);
  const long dx = std::labs(xe - x), dy = -std::labs(ye - y);
  const long sx = x < xe ? 1 : -1, sy = y < ye ? 1 : -1;
  long err = dx + dy;
  for (;;) {
    put(image, x, y, level);
    if (x == xe && y == ye) break;
    const long e2 = 2 * err;
    if (e2 >= dy) {
      err += dy;
      x += sx;
    }
    if (e2 <= dx) {
      err += dx;
      y += sy;
    }
  }
}

void draw_ellipse(ImageView image, double xc, double yc, double a, double b, double theta,
                  std::uint8_t level) noexcept {
  if (!drawable(image)) return;
  if (!std::isfinite(xc) || !std::isfinite(yc) || !std::isfinite(a) || !std::isfinite(b) ||
      !std::isfinite(theta)) {
    return;
  }
  a = std::fabs(a);
  b = std::fabs(b);
  const double r = std::max(a, b);
  if (r < 0.5) {
    draw_point(image, xc, yc, level);
    return;
  }
  // Wholly outside the frame: nothing to step through.
  if (xc + r < -0.5 || yc + r < -0.5 || xc - r > image.width - 0.5 || yc - r > image.height - 0.5) {
    return;
  }
  // About one pixel of the outline per step on the major axis.
  const int steps = std::clamp(static_cast<int>(std::ceil(2.0 * std::numbers::pi * r)), 8, 4096);
  const double c = std::cos(theta), s = std::sin(theta);
  auto at = [&](int k, double& x, double& y) {
    const double t = 2.0 * std::numbers::pi * k / steps;
    const double u = a * std::cos(t), v = b * std::sin(t);
    x = xc + u * c - v * s;
    y = yc + u * s + v * c;
  };
  double px = 0.0, py = 0.0;
  at(0, px, py);
  for (int k = 1; k <= steps; ++k) {
    double x = 0.0, y = 0.0;
    at(k, x, y);
    draw_line(image, px, py, x, y, level);
    px = x;
    py = y;
  }
}

void draw_polyline(ImageView image, std::span<const TrackPoint> points,
                   std::uint8_t level) noexcept {
  if (points.size() == 1) {
    draw_point(image, points[0].x, points[0].y, level);
    return;
  }
  for (std::size_t i = 1; i < points.size(); ++i) {
    draw_line(image, points[i - 1].x, points[i - 1].y, points[i].x, points[i].y, level);
  }
}

void draw_cross(ImageView image, double x, double y, int half, std::uint8_t level) noexcept {
  if (!std::isfinite(x) || !std::isfinite(y)) return;
  const double cx = std::round(x), cy = std::round(y);
  draw_line(image, cx - half, cy, cx + half, cy, level);
  draw_line(image, cx, cy - half, cx, cy + half, level);
}

void draw_overlay(ImageView image, std::span<const DetectedObject> objects, const Tracker& tracker,
                  std::span<TrackPoint> scratch) noexcept {
  if (!drawable(image)) return;
  for (const DetectedObject& o : objects) {
    draw_ellipse(image, o.x, o.y, kOverlayEllipseScale * o.a, kOverlayEllipseScale * o.b, o.theta,
                 kOverlayEllipseLevel);
  }
  const std::span<const Track> movers = tracker.tracks();
  for (std::size_t i = 0; i < movers.size(); ++i) {
    const std::size_t n = tracker.tail(i, scratch);
    draw_polyline(image, scratch.first(n), kOverlayTrackLevel);
    const Track& t = movers[i];
    draw_cross(image, static_cast<double>(t.x) + t.vx, static_cast<double>(t.y) + t.vy,
               kOverlayMarkerHalf, kOverlayTrackLevel);
  }
}

}  // namespace starsift
