// SPDX-License-Identifier: LGPL-2.1-or-later
// The brightness correction's fast CPU path, one row at a time: each step a loop over
// contiguous floats with no branch and no library call, which the compiler vectorises (on
// x86-64 also compiled for AVX2, chosen at run time). The steps follow reference.hpp's:
//   Y (load_luminance), log2 Y (log2_luminance, or a table for integer grey frames),
//   C (local_correct), v (blend), the stretch and the store (store_row).
#pragma once

#include <cstdint>

#include "pipeline/brightness/params.hpp"
#include "pipeline/image.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift::brightness_rows {

// Byte offsets of R, G and B in a pixel of a 4-channel format.
struct ColourOrder {
  int r, g, b;
};
inline ColourOrder colour_order(PixelFormat format) noexcept {
  const bool bgr = format == PixelFormat::Bgra || format == PixelFormat::Bgrx;
  return bgr ? ColourOrder{2, 1, 0} : ColourOrder{0, 1, 2};
}

// Row y's Y, 0..1, into `lum` (in.width values): the value over `max` (the shape's sample
// maximum; larger values count as it), GRAY32F clamped to 0..1 (NaN as 0), BT.709 luma for
// colour. In float: the reference computes it in double and stores float; the two differ in
// the last place at most.
void load_luminance(ConstImageView in, int y, float max, float* lum);

// log2 of each Y (brightness_math::log2_approx), n values.
void log2_luminance(const float* lum, int n, float* log2_lum);

// For integer grey frames, log2 of Y through `table` (log2(v / max) for every v in 0..top,
// kLog2OfZero at 0): samples above `top` read table[top]. Exact where the approximation is
// within 2e-7: Y has only 2^bit_depth values.
void log2_by_table(ConstImageView in, int y, const float* table, int top, float* log2_lum);

// C = Y^(2^(strength (2 B - 1))), as 2^(2^(strength (2 B - 1)) log2 Y), n values.
void local_correct(const float* log2_lum, const float* blur, float strength, int n,
                   float* corrected);

// v = (alpha C + (1 - alpha) Y) max, n values (C may be `value`).
void blend(const float* corrected, const float* lum, float alpha, float max, int n, float* value);

// counts[round(v)] += 1 for each of n values (v clamped to 0..top first).
void count_values(const float* value, int n, int top, std::uint32_t* counts);

// Writes row y of `out` from the values v: (v - lo) scale, then as reference.hpp step 5
// (grey rounded and clamped to 0..max, GRAY32F clamped to 0..1; colour: each channel of `in`
// times Yo / Y, Yo = the stretched value / max; alpha and padding copied). `lum` is row y's
// Y (used for colour only).
void store_row(ConstImageView in, ImageView out, int y, const float* value, const float* lum,
               float lo, float scale, float max);

}  // namespace starsift::brightness_rows
