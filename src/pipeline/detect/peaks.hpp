// SPDX-License-Identifier: LGPL-2.1-or-later
// Detections: local maxima of a matched-filter SNR image.
#pragma once

#include <vector>

#include "pipeline/plane.hpp"

namespace starsift {

struct Peak {
  int x = 0;
  int y = 0;
  float snr = 0.0f;
};

// Appends to `out` every pixel of `interior` whose snr is above `floor`, at least as high as
// its 8 neighbours and higher than the 4 that come before it in raster order (left, and the
// three above), so a flat top gives one peak, not several. Only positive peaks: movers are
// brighter than the sky. `interior` must leave a border of at least 1 pixel.
void find_peaks(const Plane& snr, const Interior& interior, float floor, std::vector<Peak>& out);

}  // namespace starsift
