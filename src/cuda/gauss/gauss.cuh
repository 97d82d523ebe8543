// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA Gaussian blur launcher: the blur of GaussParams (pipeline/gauss/params.hpp) on device
// frames, by one of three paths.
//
// | path      | what                                                      | cost          |
// |-----------|-----------------------------------------------------------|---------------|
// | fused     | both axes in one kernel: the row pass into shared memory,  | ~ radius      |
// |           | the column pass from there; nothing in global memory       |               |
// |           | between them. Radii up to kMaxFusedRadius.                 |               |
// | separable | the row pass into a float frame, the column pass from it   | ~ radius      |
// |           | (any radius up to GaussParams::kMaxRadius)                 |               |
// | recursive | Deriche's 4th-order recursion (as GaussIir on the CPU), in | flat in sigma |
// |           | double, along lines cut into chunks that each start       |               |
// |           | kPadSigmas sigma early so all of the GPU works at once     |               |
//
// Auto: fused where both radii fit it (sigma <= 4 at the automatic radius), else recursive,
// which on a GPU beats the separable sums at every sigma beyond (measured on an H200:
// bench/results/gauss). The CPU sums exactly up to GaussParams::kRecursiveFromSigma (50), so
// for sigma between 4 and 50 the backends differ by the recursion's error (<= 0.11 % of a
// point source's peak). The direct paths (fused, separable) sum w0 x0 + sum_i w_i (x_-i + x_i)
// with fused multiply-adds: against gauss_reference() an integer sample differs by at most 1
// (a sum that lands within a rounding of .5), a float one by float rounding. The recursive
// path is the CPU's recursion (GaussIir) within 5e-5 of the frame's range: a chunk starts
// 6 sigma early, where its start-up has decayed as the CPU's does at the frame's edges.
//
// Limitations
// | what        | supported                                                            |
// |-------------|----------------------------------------------------------------------|
// | formats     | GRAY8, GRAY16_LE, GRAY32F, RGBA/BGRA/RGBx/BGRx (byte 3 copied)        |
// | sigma       | 0..GaussParams::kMaxSigma per axis (0: that axis untouched)          |
// | borders     | replicate, reflect-101, constant                                     |
// | image size  | any >= 1x1; strides >= row bytes, multiples of the sample size       |
// | in-place    | no: `in` and `out` must not overlap                                  |
// | memory      | device memory, both views and the scratch                            |
//
// The launcher allocates nothing, never synchronises, and returns the launch status
// (cudaPeekAtLastError). The separable and recursive paths need scratch of
// gauss_scratch_bytes() bytes, allocated once by the caller for a frame shape.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string_view>

#include "pipeline/gauss/params.hpp"
#include "pipeline/image.hpp"

namespace starsift::cuda {

enum class GaussPath { Auto, Fused, Separable, Recursive };

std::string_view to_string(GaussPath path) noexcept;

inline constexpr int kMaxFusedRadius = 16;

// The path Auto takes for these parameters.
GaussPath gauss_auto_path(const GaussParams& params) noexcept;

// Bytes of device scratch `path` needs for a width x height frame of `format` (Auto: the
// largest any path needs, so parameters may change without reallocating). 0 for fused.
std::size_t gauss_scratch_bytes(GaussPath path, int width, int height, PixelFormat format) noexcept;

// Blurs `in` into `out` (same size and format) on `stream`. `scratch` holds at least
// gauss_scratch_bytes(path, ...) bytes (nullptr for the fused path). Parameters are
// validated by the caller (GaussParams::validate_for); a path that cannot take them
// (fused beyond kMaxFusedRadius) returns cudaErrorInvalidValue.
cudaError_t launch_gauss(const GaussParams& params, ConstImageView in, ImageView out, void* scratch,
                         std::size_t scratch_bytes, cudaStream_t stream,
                         GaussPath path = GaussPath::Auto);

}  // namespace starsift::cuda
