// SPDX-License-Identifier: LGPL-2.1-or-later
// Shifting a frame by a sub-pixel amount: bicubic convolution (Keys, a = -0.5), border
// replicate. A whole frame moves by one shift, so the 4 + 4 tap weights are computed once per
// frame (in double, stored as float) and every pixel is the same separable 4 x 4 sum. The
// per-pixel rule is host/device code so the CUDA kernels compute the same sum.
#pragma once

#include <cmath>

#include "pipeline/hd.hpp"
#include "pipeline/image.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

// out(q) = in(q + shift): the sample of `in` at q + shift, for every pixel q of `out`.
struct ShiftKernel {
  int ox = 0, oy = 0;          // floor(shift): the integer part
  double fx = 0.0, fy = 0.0;   // shift - floor(shift), in [0, 1)
  float wx[4] = {0, 1, 0, 0};  // weights of taps ox-1 .. ox+2 (relative to q)
  float wy[4] = {0, 1, 0, 0};
};

// Keys' cubic convolution kernel with a = -0.5 at distance t (|t| < 2; 0 beyond).
STARSIFT_HD double keys_cubic(double t) {
  t = t < 0.0 ? -t : t;
  if (t < 1.0) return (1.5 * t - 2.5) * t * t + 1.0;
  if (t < 2.0) return ((-0.5 * t + 2.5) * t - 4.0) * t + 2.0;
  return 0.0;
}

STARSIFT_HD ShiftKernel make_shift_kernel(double shift_x, double shift_y) {
  ShiftKernel k;
  const double flx = floor(shift_x);
  const double fly = floor(shift_y);
  k.ox = static_cast<int>(flx);
  k.oy = static_cast<int>(fly);
  k.fx = shift_x - flx;
  k.fy = shift_y - fly;
  for (int i = 0; i < 4; ++i) {
    // Tap i sits at distance (i - 1) - f from the sample point.
    k.wx[i] = static_cast<float>(keys_cubic((i - 1) - k.fx));
    k.wy[i] = static_cast<float>(keys_cubic((i - 1) - k.fy));
  }
  return k;
}

STARSIFT_HD int clamp_index(int i, int n) {
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

// The shifted sample at output pixel (x, y) of a w x h plane; `read(ix, iy)` returns the input
// sample (always in range: border replicate). Rows first (taps left to right), then the rows
// top to bottom, all in float.
template <class Read>
STARSIFT_HD float sample_shifted(const ShiftKernel& k, int x, int y, int w, int h, Read read) {
  float sum = 0.0f;
  for (int j = 0; j < 4; ++j) {
    const int iy = clamp_index(y + k.oy - 1 + j, h);
    float row = 0.0f;
    for (int i = 0; i < 4; ++i) row += k.wx[i] * read(clamp_index(x + k.ox - 1 + i, w), iy);
    sum += k.wy[j] * row;
  }
  return sum;
}

// True when the sample point (x, y) + shift lies on the input plane ([0, w-1] x [0, h-1]), so
// the value is interpolated rather than made up by the border rule.
STARSIFT_HD bool shifted_source_inside(const ShiftKernel& k, int x, int y, int w, int h) {
  const int sx = x + k.ox;
  const int sy = y + k.oy;
  const bool in_x = sx >= 0 && (sx < w - 1 || (sx == w - 1 && k.fx == 0.0));
  const bool in_y = sy >= 0 && (sy < h - 1 || (sy == h - 1 && k.fy == 0.0));
  return in_x && in_y;
}

// True when any of the 16 taps of (x, y) satisfies `bad(ix, iy)` (a saturated input sample).
template <class Bad>
STARSIFT_HD bool any_tap(const ShiftKernel& k, int x, int y, int w, int h, Bad bad) {
  for (int j = 0; j < 4; ++j) {
    const int iy = clamp_index(y + k.oy - 1 + j, h);
    for (int i = 0; i < 4; ++i) {
      if (bad(clamp_index(x + k.ox - 1 + i, w), iy)) return true;
    }
  }
  return false;
}

// The output columns [begin, end) of a w-wide plane whose 4 taps along x all lie on the plane
// (columns x + ox - 1 .. x + ox + 2 within 0 .. w - 1): there sample_shifted() needs no clamp.
struct InnerColumns {
  int begin, end;
};
InnerColumns shift_inner_columns(const ShiftKernel& k, int w);

// sample_shifted() of the output row's inner columns [c.begin, c.end), into out[c.begin ..]:
// rows[j] is input row clamp_index(y + oy - 1 + j, h). The same products and sums in the same
// order, without the clamps, so the loop vectorises and the values are the same bits.
void shift_row_inner(const ShiftKernel& k, const float* const rows[4], InnerColumns c, float* out);

// out = `in` shifted by `shift` (out(q) = in(q + shift)), both GRAY32F of the same size,
// distinct memory. Rows are shared out over `pool`.
void resample_shifted(ConstImageView in, ImageView out, const ShiftKernel& kernel,
                      ThreadPool& pool);

}  // namespace starsift
