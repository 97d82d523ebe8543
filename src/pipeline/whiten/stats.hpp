// SPDX-License-Identifier: LGPL-2.1-or-later
// What whitening reports about each frame: the numbers an element publishes per frame.
#pragma once

#include <cstdint>

namespace starsift {

struct WhitenStats {
  std::uint64_t frame = 0;     // index of the frame since the history (re)started, from 0
  int history_used = 0;        // n: history frames the prediction was made of (0..history)
  bool warmup = false;         // fewer than `history` frames were available
  bool refit = false;          // the weights were solved for this frame (else reused)
  double weight_sq_sum = 0.0;  // sum of a_k^2 (noise amplification of the prediction)
  double noise_floor = 1.0;    // sqrt(1 + sum a_k^2): residual noise / frame noise, at best
  double gamma = 0.0;          // the absolute regularisation the weights were solved with
  double shift_x = 0.0;        // the frame's shift against the first frame's grid (px)
  double shift_y = 0.0;
  double shift_peak = 0.0;         // phase-correlation peak height (1: perfect match; 0: none)
  bool reference_changed = false;  // this frame became the shift reference
  // The correlation's highest peak lay more than 2 px from the previous frame's shift without
  // standing out (a noise peak on a sparse field): the peak near the previous shift was taken.
  bool shift_rejected = false;
  std::uint64_t rejected = 0;  // camera pixels whose residual was an outlier (reject: mask)
  std::uint64_t excluded = 0;  // pixels of the fit rows left out of this frame's fit
  std::uint64_t despiked = 0;  // input samples taken as missing as spikes (despike)
};

}  // namespace starsift
