// SPDX-License-Identifier: LGPL-2.1-or-later
// The brightness correction's definition on the CPU: plain, in double where it counts, and
// obviously right. The fast CPU path and the CUDA kernels are compared with it, within stated
// tolerances.
#pragma once

#include "pipeline/brightness/params.hpp"
#include "pipeline/image.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

// Corrects `in` into `out` (the size and format of `shape`, distinct memory, any strides), as
// params.hpp and docs/brightness.md define it:
//  1. Y per pixel, 0..1: the value / brightness_sample_max(shape) (values above the maximum,
//     which a GRAY16_LE frame of fewer bits may still hold, count as the maximum; GRAY32F
//     clamped to 0..1, NaN as 0); BT.709 luma of R, G, B for the colour formats.
//  2. The corrected C, 0..1. local: B = gauss_reference() of the Y plane (float, sigma on
//     both axes, border reflect-101), C = std::pow(Y, std::pow(2, strength (2 B - 1))) in
//     double. clahe: clahe_reference() of the integer plane (the frame itself, clamped to its
//     maximum; for colour the luma rounded to 0..255, a GRAY8 plane), C = its value / maximum.
//  3. v = (alpha C + (1 - alpha) Y) times the maximum: the corrected value in the format's
//     units, not rounded.
//  4. The stretch of v: none; fixed: (v - stretch_min) / (stretch_max - stretch_min) times
//     the maximum; percentile: lo and hi are the values of rank brightness_percentile_rank()
//     among the frame's v rounded (gauss_round) to the sensor's integers (GRAY32F: among the
//     v themselves), and (v - lo) / (hi - lo) times the maximum. hi == lo (a frame of one
//     value, or percentiles inside one value's count) leaves v as it is: there is no range
//     to stretch. (hi < lo cannot happen: low < high.)
//  5. Grey: the result rounded as gauss_round() does (GRAY32F clamped to 0..1). Colour: Yo =
//     the result / maximum, clamped to 0..1; every colour channel c becomes c Yo / Y, rounded
//     as gauss_round() does (so clamped to 0..255); a black pixel (Y = 0) becomes the grey
//     Yo. Alpha and padding bytes are copied.
// Throws Error for parameters that do not fit `shape` or frames that differ from it.
void brightness_reference(const BrightnessParams& params, const FrameShape& shape,
                          ConstImageView in, ImageView out, ThreadPool& pool);

}  // namespace starsift
