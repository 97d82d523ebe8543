// SPDX-License-Identifier: LGPL-2.1-or-later
// CPU reference median: simple and obviously right, multi-threaded so it is usable as the
// backend of a host without a GPU. The CUDA kernels must match it bit for bit.
#pragma once

#include "pipeline/image.hpp"
#include "pipeline/median/params.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

// Filters `in` into `out` (same size and format, distinct memory, any strides).
// For each pixel and colour channel: gather the size x size window, mapping outside
// coordinates with params.border, and take the middle element (rank (size^2 - 1) / 2) in
// the order of the samples (floats in totalOrder, see sample_key.hpp). Alpha/padding
// bytes of 4-channel formats are copied from the input.
void median_reference(const MedianParams& params, ConstImageView in, ImageView out,
                      ThreadPool& pool);

}  // namespace starsift
