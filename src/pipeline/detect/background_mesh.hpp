// SPDX-License-Identifier: LGPL-2.1-or-later
// The background mesh's geometry and its interpolation: tiles of `side` px along each axis (the
// last one shorter), each with a sigma-clipped mean and sigma, interpolated bilinearly between
// tile centres and constant beyond the outer centres. One definition for the CPU reference and
// the CUDA kernels, so both read the same grid the same way.
#pragma once

#include "pipeline/hd.hpp"

namespace starsift {

struct MeshAxis {
  int side = 1;   // tile side, px
  int count = 1;  // tiles
  int size = 1;   // frame size along the axis, px

  STARSIFT_HD int begin(int i) const { return i * side; }
  STARSIFT_HD int end(int i) const { return (i + 1) * side < size ? (i + 1) * side : size; }
  STARSIFT_HD double centre(int i) const { return 0.5 * (begin(i) + end(i) - 1); }
};

STARSIFT_HD MeshAxis mesh_axis(int size, int side) {
  return {side, (size + side - 1) / side, size};
}

// The tile below position p along the axis and the weight of the next one.
STARSIFT_HD void mesh_locate(const MeshAxis& t, int p, int& i, double& w) {
  if (t.count == 1 || p <= t.centre(0)) {
    i = 0;
    w = 0.0;
    return;
  }
  if (p >= t.centre(t.count - 1)) {
    i = t.count - 1;
    w = 0.0;
    return;
  }
  i = p / t.side < t.count - 1 ? p / t.side : t.count - 1;
  if (p < t.centre(i)) --i;
  w = (p - t.centre(i)) / (t.centre(i + 1) - t.centre(i));
}
// The same with the weight rounded to float, as detection blends (mesh_blend<float>).
STARSIFT_HD void mesh_locate(const MeshAxis& t, int p, int& i, float& w) {
  double d = 0.0;
  mesh_locate(t, p, i, d);
  w = static_cast<float>(d);
}

// The bilinear blend of a grid of per-tile values (row-major, ax.count per row) at the place
// mesh_locate() gave for x (i, wx) and y (j, wy). Split from the location so that a kernel can
// locate each column and row once and blend per pixel. T is the arithmetic's type: detection
// blends in float (mesh_blend<float>), the same operations in the same order on both backends
// (no contraction into fused multiply-adds: see the build), so both get the same bits.
template <class T, class Get>
STARSIFT_HD T mesh_blend(const MeshAxis& ax, const MeshAxis& ay, int i, T wx, int j, T wy,
                         Get get) {
  const int i1 = i + 1 < ax.count ? i + 1 : ax.count - 1;
  const int j1 = j + 1 < ay.count ? j + 1 : ay.count - 1;
  const T one = 1;
  return (one - wy) * ((one - wx) * get(j * ax.count + i) + wx * get(j * ax.count + i1)) +
         wy * ((one - wx) * get(j1 * ax.count + i) + wx * get(j1 * ax.count + i1));
}

}  // namespace starsift
