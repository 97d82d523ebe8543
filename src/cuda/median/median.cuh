// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA median filter launcher.
//
// Limitations
// | what        | supported                                                            |
// |-------------|----------------------------------------------------------------------|
// | formats     | GRAY8, GRAY16_LE, GRAY32F, RGBA/BGRA/RGBx/BGRx (byte 3 copied)        |
// | sizes       | odd 3..31 (MedianParams::kMaxSize)                                   |
// | borders     | replicate, reflect-101, constant                                     |
// | image size  | any >= 1x1; strides >= row bytes, multiples of the sample size       |
// | in-place    | no: `in` and `out` must not overlap                                  |
// | memory      | device memory, both views                                            |
//
// The launcher allocates nothing, never synchronises, and returns the launch status
// (cudaPeekAtLastError). Results are bit-identical to median_reference().
#pragma once

#include <cuda_runtime_api.h>

#include <string_view>

#include "pipeline/image.hpp"
#include "pipeline/median/params.hpp"

namespace starsift::cuda {

// Which schedule computes the median. Auto picks per size and format from the tuning table
// (median_tuning.hpp); the others exist so benchmarks and tests can run each one.
enum class MedianSchedule {
  Auto,
  Network,          // register sorting networks, two 16-bit samples per register (integer formats)
  NetworkUnpacked,  // register sorting networks, one sample per register
  Tracking,         // data-aware sliding median in shared memory, any size
};

std::string_view to_string(MedianSchedule schedule) noexcept;

// Whether `schedule` can run this size and format (Network* cover the sizes in the tuning
// table; Tracking covers all).
bool median_schedule_supports(MedianSchedule schedule, int size, PixelFormat format) noexcept;

cudaError_t launch_median(const MedianParams& params, ConstImageView in, ImageView out,
                          cudaStream_t stream, MedianSchedule schedule = MedianSchedule::Auto);

}  // namespace starsift::cuda
