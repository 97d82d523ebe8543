// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/detection_marks.hpp"

#include <cmath>
#include <cstdint>

namespace starsift::app {

namespace {

constexpr std::uint8_t kMark = 255;
constexpr int kBoxMargin = 2;  // px around an object's bounding box
constexpr int kMoverRing = 9;  // px: the ring's radius

void put(ImageView image, int x, int y) {
  if (x < 0 || y < 0 || x >= image.width || y >= image.height) return;
  image.row_as<std::uint8_t>(y)[x] = kMark;
}

void draw_box(ImageView image, int x0, int y0, int x1, int y1) {
  for (int x = x0; x <= x1; ++x) {
    put(image, x, y0);
    put(image, x, y1);
  }
  for (int y = y0; y <= y1; ++y) {
    put(image, x0, y);
    put(image, x1, y);
  }
}

void draw_ring(ImageView image, float cx, float cy, int radius) {
  const int steps = 8 * radius;
  for (int i = 0; i < steps; ++i) {
    const double a = 2.0 * M_PI * i / steps;
    put(image, static_cast<int>(std::lround(cx + radius * std::cos(a))),
        static_cast<int>(std::lround(cy + radius * std::sin(a))));
  }
}

}  // namespace

void draw_detection_marks(ImageView image, std::span<const DetectedObject> objects,
                          std::span<const Track> movers) {
  for (const DetectedObject& o : objects) {
    draw_box(image, o.xmin - kBoxMargin, o.ymin - kBoxMargin, o.xmax + kBoxMargin,
             o.ymax + kBoxMargin);
  }
  for (const Track& t : movers) draw_ring(image, t.x, t.y, kMoverRing);
}

}  // namespace starsift::app
