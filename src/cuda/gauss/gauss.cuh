// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA Gaussian blur launcher: the blur of GaussParams (pipeline/gauss/params.hpp) on device
// frames, by one of four paths.
//
// | path      | what                                                      | cost          |
// |-----------|-----------------------------------------------------------|---------------|
// | fused     | both axes in one kernel: the row pass into shared memory,  | ~ radius      |
// |           | the column pass from there; nothing in global memory       |               |
// |           | between them. Radii up to kMaxFusedRadius. GRAY8 from      |               |
// |           | radius 3 on the tensor cores (gauss_mma.cu)                |               |
// | separable | the row pass into a float frame, the column pass from it   | ~ radius      |
// |           | (any radius up to GaussParams::kMaxRadius)                 |               |
// | decimated | the frame reduced by k ~ sigma / 2.5 (cubic B-spline), the | flat in sigma |
// |           | rest of the Gaussian on the small plane by the fused path, |               |
// |           | interpolated back (Catmull-Rom): gauss_decimated.cu        |               |
// | recursive | Deriche's 4th-order recursion (as GaussIir on the CPU), in | flat in sigma |
// |           | double, along lines cut into chunks that each start       |               |
// |           | kPadSigmas sigma early so all of the GPU works at once     |               |
//
// Auto: fused where both radii fit it (sigma <= 4 at the automatic radius; on the tensor cores,
// below sigma 5.5); else decimated
// where both sigmas are at least kDecimatedMinSigma, the radii automatic and its planes fit
// the scratch (every frame of 74 rows and columns or more); else gauss_exact_path(): the
// recursion, or the separable sums where an axis is too little blurred for it. Decimated is
// the fastest from sigma 4 at every sigma (measured on an H200: bench/results/gauss).
//
// Accuracy. The direct paths (fused, separable) sum w0 x0 + sum_i w_i (x_-i + x_i) with fused
// multiply-adds: against gauss_reference() an integer sample differs by at most 1 (a sum that
// lands within a rounding of .5), a float one by float rounding. The recursive path is the
// CPU's recursion (GaussIir) within 5e-5 of the frame's range: a chunk starts 6 sigma early,
// where its start-up has decayed as the CPU's does at the frame's edges; the recursion is
// within 0.11 % of a point source's peak of the exact blur. The decimated path approximates
// the exact blur: within 0.5 % of a point source's peak from sigma 9 and 1.2 % below, and a
// step's blur within 0.1 % of its height (0.15 % below sigma 9; gauss_decimated.cu). The CPU sums
// exactly up to GaussParams::kRecursiveFromSigma (50), so the backends differ by these errors
// beyond sigma 4.
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

enum class GaussPath { Auto, Fused, Separable, Decimated, Recursive };

std::string_view to_string(GaussPath path) noexcept;

inline constexpr int kMaxFusedRadius = 16;
// GRAY8 frames the tensor cores take (rows aligned to 4 bytes in and out, code built for sm_80
// and later): fused up to this radius (sigma 6), where Auto takes them too: beyond it the
// decimated path is the faster (bench/results/gauss/h200-mma/variants/large-radii/).
inline constexpr int kMaxTensorFusedRadius = 24;
// The largest radius the fused path takes for `format` on the current device.
int gauss_max_fused_radius(PixelFormat format) noexcept;
// The decimated path's smallest sigma: below it k = 2 is too coarse for the B-spline.
inline constexpr double kDecimatedMinSigma = 4.0;
// From this sigma the decimated path reduces by 3 (half the small plane of 2), and Auto takes
// it over the tensor cores (measured on an H200, 4096^2 GRAY8 at sigma 6: 0.064 ms against
// 0.082; bench/results/gauss/h200-k3-up/).
inline constexpr double kDecimatedBy3Sigma = 5.5;

// The path Auto takes for these parameters, when the decimated path's planes fit the frame
// (launch_gauss() takes gauss_exact_path() where they do not).
GaussPath gauss_auto_path(const GaussParams& params) noexcept;
// The path Auto takes for these parameters on these frames: fused for the GRAY8 frames the
// tensor cores take (kMaxTensorFusedRadius) below kDecimatedBy3Sigma, else
// gauss_auto_path(params).
GaussPath gauss_auto_path(const GaussParams& params, ConstImageView in, ImageView out) noexcept;
// The path Auto took before the decimated one: fused, else the recursion, else the separable
// sums; for callers whose blur must stay within the recursion's error of the CPU's.
GaussPath gauss_exact_path(const GaussParams& params) noexcept;

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
