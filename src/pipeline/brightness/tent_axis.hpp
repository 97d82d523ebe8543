// SPDX-License-Identifier: LGPL-2.1-or-later
// The tents of LuminanceBlur's small plane along one axis (luminance_blur.hpp, step 1), on the
// host or the device, so that the CPU's fast path and the CUDA kernels weigh every pixel with
// the same floats. Samples lie spacing() apart, the first on pixel 0 and the last on the last
// pixel; pixel p lies between samples `left` and left + 1, `fraction` of the spacing past the
// first, under those two tents only, with weights 1 - fraction and fraction, doubled next to an
// edge sample for the pixel's mirror image under reflect-101. Each tent's weights are divided
// by their total (total()), summed in double in the order LuminanceBlur::Axis::build sums it,
// so that both sides round the same totals.
#pragma once

#include "pipeline/hd.hpp"

namespace starsift::tent_axis {

// The distance between samples, in pixels (1 for a single sample).
STARSIFT_HD double spacing(int pixels, int samples) {
  return samples > 1 ? static_cast<double>(pixels - 1) / (samples - 1) : 1.0;
}

// Where pixel p lies (samples >= 2), and its two weights before division by the totals.
struct Spot {
  int left;
  double fraction;
  double to_left;
  double to_right;
};

STARSIFT_HD Spot spot(int p, int pixels, int samples, double spacing) {
  const double u = p / spacing;
  const int i = static_cast<int>(u) < samples - 2 ? static_cast<int>(u) : samples - 2;
  const double t = u - i < 1.0 ? u - i : 1.0;
  Spot s;
  s.left = i;
  s.fraction = t;
  s.to_left = (1.0 - t) * (i == 0 && p > 0 ? 2.0 : 1.0);
  s.to_right = t * (i == samples - 2 && p < pixels - 1 ? 2.0 : 1.0);
  return s;
}

// The total weight under sample j's tent (samples >= 2): the pixels whose left is j (their
// to_left) and j - 1 (their to_right), added from the last pixel down, as Axis::build adds
// them while it walks the pixels from the last.
// The pixels total() walks for sample j, `first` down to `last`: the tent's
// (j - 1) spacing .. (j + 1) spacing and one more on each side for the quotient's rounding
// (spot() decides).
STARSIFT_HD void tent_pixels(int j, int pixels, double spacing, int& first, int& last) {
  const double top = (j + 1) * spacing + 1.0;
  const double bottom = (j - 1) * spacing - 1.0;
  first = top < pixels - 1 ? static_cast<int>(top) : pixels - 1;
  last = bottom > 0.0 ? static_cast<int>(bottom) : 0;
}

// What pixel p adds to sample j's total: its to_left under its own sample, its to_right under
// the next, else nothing.
STARSIFT_HD double tent_share(int j, int p, int pixels, int samples, double spacing) {
  const Spot s = spot(p, pixels, samples, spacing);
  if (s.left == j) return s.to_left;
  if (s.left == j - 1) return s.to_right;
  return 0.0;
}

STARSIFT_HD double total(int j, int pixels, int samples, double spacing) {
  int first = 0;
  int last = 0;
  tent_pixels(j, pixels, spacing, first, last);
  double sum = 0.0;  // adding a 0 share leaves it as it is: the shares are >= 0
  for (int p = first; p >= last; --p) sum += tent_share(j, p, pixels, samples, spacing);
  return sum;
}

// Pixel p's floats as LuminanceBlur::Axis holds them: `left` and `fraction` above, and its
// weights towards each sample divided by that sample's total.
struct Entry {
  int left;
  float fraction;
  float to_left;
  float to_right;
};

STARSIFT_HD Entry entry(int p, int pixels, int samples, double spacing) {
  if (samples == 1) return {0, 0.0f, 1.0f, 0.0f};  // one pixel: the sample is that pixel
  const Spot s = spot(p, pixels, samples, spacing);
  return {s.left, static_cast<float>(s.fraction),
          static_cast<float>(s.to_left / total(s.left, pixels, samples, spacing)),
          static_cast<float>(s.to_right / total(s.left + 1, pixels, samples, spacing))};
}

// Whether pixel p is the first of its run (the pixels whose left is the same sample).
STARSIFT_HD bool run_starts(int p, int pixels, int samples, double spacing) {
  if (p == 0 || samples == 1) return p == 0;
  return spot(p - 1, pixels, samples, spacing).left != spot(p, pixels, samples, spacing).left;
}

}  // namespace starsift::tent_axis
