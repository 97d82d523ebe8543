// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/detect/peaks.hpp"

#include "pipeline/error.hpp"

namespace starsift {

void find_peaks(const Plane& snr, const Interior& interior, float floor, std::vector<Peak>& out) {
  if (interior.x0 < 1 || interior.y0 < 1 || interior.x1 > snr.width() - 1 ||
      interior.y1 > snr.height() - 1) {
    throw Error("find_peaks: the interior must leave a border of at least 1 pixel");
  }
  for (int y = interior.y0; y < interior.y1; ++y) {
    const float* up = snr.row(y - 1);
    const float* mid = snr.row(y);
    const float* down = snr.row(y + 1);
    for (int x = interior.x0; x < interior.x1; ++x) {
      const float v = mid[x];
      if (!(v > floor)) continue;
      const bool before = v > mid[x - 1] && v > up[x - 1] && v > up[x] && v > up[x + 1];
      const bool after = v >= mid[x + 1] && v >= down[x - 1] && v >= down[x] && v >= down[x + 1];
      if (before && after) out.push_back({x, y, v});
    }
  }
}

}  // namespace starsift
