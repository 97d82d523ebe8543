// SPDX-License-Identifier: LGPL-2.1-or-later
// The merged flag (kObjectMerged): whether an object holds more than one source. One
// definition for the CPU reference and the CUDA kernels, which add one walk over the objects'
// pixels after the sums.
//
// z is a pixel's value above the background over its noise (sigma mode) or the value above the
// background itself (absolute mode): the units `threshold` is in. A pixel of an object is a
// *peak* when z >= 2 threshold and no neighbour of the same object (of its 8) is higher, nor as
// high and before it in raster order (a flat top gives one peak). The object's *top* is its
// brightest pixel, the record's peak (the highest value above the background, the first in
// raster order on a tie). The object is merged when some peak c other than the top is
// separated from it: the digital straight line from c to the top (Bresenham's, both
// ends left out) leaves the object, or comes down to z(c) - dip(c) or below, dip(c) being the
// larger of `threshold` and kDipFraction z(c). A dip that deep does not come from the noise
// of one source's profile: two stars whose light overlaps, a mover over a star, two crossing
// trails. A shallower saddle (two sources closer than their widths) is not told apart.
//
// Objects of more than kMaxArea pixels are not examined: in a frame-filling object every pixel
// may pass, and its neighbourhoods would cost a pass of their own.
#pragma once

#include <cstdint>

#include "pipeline/hd.hpp"

namespace starsift::blend {

inline constexpr float kDipFraction = 0.3f;
inline constexpr std::uint32_t kMaxArea = 65536;

STARSIFT_HD bool may_peak(float z, float threshold) {
  return z >= 2.0f * threshold;
}

// The z a line from peak c must come down to (or below) to separate c from the top.
STARSIFT_HD float separating_level(float z, float threshold) {
  const float fraction = kDipFraction * z;
  return z - (fraction > threshold ? fraction : threshold);
}

// Whether pixel (x, y) of z `z` (may_peak) is a peak: `z_at(nx, ny)` gives a neighbour's z,
// `inside(nx, ny)` whether it belongs to the same object.
template <class ZAt, class Inside>
STARSIFT_HD bool is_peak(int x, int y, float z, int width, int height, ZAt&& z_at,
                         Inside&& inside) {
  for (int dy = -1; dy <= 1; ++dy) {
    const int ny = y + dy;
    if (ny < 0 || ny >= height) continue;
    for (int dx = -1; dx <= 1; ++dx) {
      const int nx = x + dx;
      if ((dx == 0 && dy == 0) || nx < 0 || nx >= width || !inside(nx, ny)) continue;
      const float zn = z_at(nx, ny);
      const bool before = dy < 0 || (dy == 0 && dx < 0);
      if (before ? zn >= z : zn > z) return false;
    }
  }
  return true;
}

// Whether the line from (x0, y0) to (x1, y1), both ends left out, leaves the object or comes
// down to `level` or below.
template <class ZAt, class Inside>
STARSIFT_HD bool separated(int x0, int y0, int x1, int y1, float level, ZAt&& z_at,
                           Inside&& inside) {
  const int dx = x1 > x0 ? x1 - x0 : x0 - x1;
  const int dy = y1 > y0 ? y1 - y0 : y0 - y1;
  const int sx = x1 > x0 ? 1 : -1;
  const int sy = y1 > y0 ? 1 : -1;
  int error = dx - dy;
  int x = x0, y = y0;
  for (;;) {
    const int twice = 2 * error;
    if (twice > -dy) {
      error -= dy;
      x += sx;
    }
    if (twice < dx) {
      error += dx;
      y += sy;
    }
    if (x == x1 && y == y1) return false;
    if (!inside(x, y) || z_at(x, y) <= level) return true;
  }
}

}  // namespace starsift::blend
