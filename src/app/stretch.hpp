// SPDX-License-Identifier: LGPL-2.1-or-later
// Display stretch: 16-bit sky frames to 8-bit pictures in which faint stars show.
#pragma once

#include "pipeline/image.hpp"

namespace starsift::app {

// y = asinh((x - black) / softening) / asinh((white - black) / softening), clipped to
// [0, 1] and scaled to 0..255. asinh is linear near black (faint stars and noise keep their
// contrast) and logarithmic above (bright stars do not saturate at once).
struct AsinhStretch {
  double black = 0.0;
  double white = 65535.0;
  double softening = 1.0;
};

// Fits the stretch to a GRAY16 frame from its histogram: black a little below the darkest
// sky, softening the width of the background's noise, white the brightest star cores.
// Fit on the filtered frame and apply the same stretch to both halves of a comparison.
AsinhStretch fit_asinh_stretch(ConstImageView frame);

// GRAY16 `in` to GRAY8 `out` (same size).
void apply_stretch(const AsinhStretch& stretch, ConstImageView in, ImageView out);

}  // namespace starsift::app
