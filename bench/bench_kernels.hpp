// SPDX-License-Identifier: LGPL-2.1-or-later
// Device helpers of the benchmarks: seeded random frames, the copy that measures the memory
// roofline, and the pixel comparisons of --check. None of them runs inside a timed region
// except copy_frame, which is the roofline's own measurement.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "pipeline/image.hpp"

namespace starsift::bench {

// Fills `frame` (row bytes only, padding untouched) with uniform random samples derived from
// (seed, stream_id, position): every bit random for integer formats, floats uniform in
// [-1000, 1000) for GRAY32F (never NaN, never -0).
cudaError_t fill_random(ImageView frame, std::uint64_t seed, std::uint32_t stream_id,
                        cudaStream_t stream);

// Copies the row bytes of `in` to `out` (same size and format) with 16-byte accesses where the
// rows allow it: the reference for the memory roofline.
cudaError_t copy_frame(ConstImageView in, ImageView out, cudaStream_t stream);

// Compares the first `compare_bytes` bytes of every pixel of `a` and `b` (same size and
// format). `result` is device memory for two words, both set by this call: [0] the number of
// pixels that differ, [1] the smallest row-major index of one that differs (UINT64_MAX if none).
cudaError_t count_mismatches(ConstImageView a, ConstImageView b, int compare_bytes,
                             unsigned long long* result, cudaStream_t stream);

// The largest |a - b| over the first `samples` samples of every pixel of `a` and `b` (same
// size and format), in the format's units, and how many samples differ. `result` is device
// memory for two words, both set by this call: [0] the largest difference as the bits of a
// non-negative float (+inf where exactly one of the two is NaN), [1] the count.
cudaError_t max_difference(ConstImageView a, ConstImageView b, int samples,
                           unsigned long long* result, cudaStream_t stream);

}  // namespace starsift::bench
