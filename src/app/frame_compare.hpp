// SPDX-License-Identifier: LGPL-2.1-or-later
// How far a frame is from its noiseless truth: the demo's before/after yardstick.
#pragma once

#include <cstdint>

#include "app/synthetic.hpp"
#include "pipeline/image.hpp"

namespace starsift::app {

struct FrameComparison {
  // Pixels further than `threshold_sigma` times the pixel's noise sigma from the truth:
  // impulses (salt, pepper, hot pixels) and nothing else, at 5 sigma.
  std::int64_t outliers = 0;
  // Root mean square of frame - truth over the other pixels, ADU: the Gaussian noise left.
  double rms = 0.0;
};

// Compares two GRAY16 frames of the sky's size; `sky` gives each pixel's noise sigma.
FrameComparison compare_to_truth(ConstImageView frame, ConstImageView truth,
                                 const SyntheticSky& sky, double threshold_sigma);

}  // namespace starsift::app
