// SPDX-License-Identifier: LGPL-2.1-or-later
// CPU reference Gaussian blur: separable, simple and obviously right, in float. The CUDA
// kernels and the fast CPU paths are compared with it (within a stated tolerance: float
// sums in another order differ in the last bits).
#pragma once

#include "pipeline/gauss/params.hpp"
#include "pipeline/image.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

// Blurs `in` into `out` (same size and format, distinct memory, any strides). For each colour
// channel: along x with gauss_weights(sigma_x, radius_x), then along y with those of y, each
// pass summing weight times sample in float from offset -radius up, pixels outside the frame
// read through params.border (Constant: border_value). Integer formats are clamped to their range
// and rounded half up (gauss_round); alpha/padding bytes are copied from the input.
void gauss_reference(const GaussParams& params, ConstImageView in, ImageView out, ThreadPool& pool);

}  // namespace starsift
