// SPDX-License-Identifier: LGPL-2.1-or-later
// Between the Gaussian's launcher (gauss_launch.cu) and its kernels (gauss_direct.cu,
// gauss_recursive.cu): how the caller's scratch is laid out, and one launcher per path.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cuda/common/rows_aligned.hpp"
#include "pipeline/gauss/params.hpp"
#include "pipeline/image.hpp"

namespace starsift::cuda::gauss_detail {

// The scratch: the weights of both axes (separable), then two float frames of width *
// colour channels samples a row, rows row_floats apart.
struct ScratchLayout {
  float* weights_x = nullptr;  // GaussParams::kMaxRadius + 1 floats
  float* weights_y = nullptr;
  float* frame_a = nullptr;
  float* frame_b = nullptr;
  std::size_t row_floats = 0;
  std::size_t frame_bytes = 0;
  std::size_t weights_bytes = 0;
};

// The layout for a frame shape; `base` may be nullptr to learn the sizes.
ScratchLayout scratch_layout(void* base, int width, int height, PixelFormat format) noexcept;

// The fused path through a block's tile (gauss_tile.cu): gray frames whose input rows are
// aligned to four samples, radius <= 16; 4-byte colour pixels, radius <= 4. launch_fused()
// takes the rest through gauss_direct.cu's shared-memory tiles.
bool tile_takes(const GaussParams& params, ConstImageView in, ImageView out) noexcept;
cudaError_t launch_tile(const GaussParams& params, ConstImageView in, ImageView out,
                        cudaStream_t stream);
cudaError_t launch_fused(const GaussParams& params, ConstImageView in, ImageView out,
                         cudaStream_t stream);
// The fused path on the tensor cores (gauss_mma.cu): GRAY8 frames whose rows (in and out) are
// aligned to four samples, radius 3..16, on a device whose code has the tensor-core products.
bool mma_takes(const GaussParams& params, ConstImageView in, ImageView out) noexcept;
cudaError_t launch_mma(const GaussParams& params, ConstImageView in, ImageView out,
                       cudaStream_t stream);
// The fused path for any frame: the tensor cores, else the block tile where they take the
// frame, else launch_fused().
cudaError_t launch_fused_path(const GaussParams& params, ConstImageView in, ImageView out,
                              cudaStream_t stream);
cudaError_t launch_separable(const GaussParams& params, ConstImageView in, ImageView out,
                             const ScratchLayout& scratch, cudaStream_t stream);
// Parameters the decimated path approximates: both sigmas from kDecimatedMinSigma, automatic
// radii (gauss_auto_path() picks it for them).
bool decimated_params(const GaussParams& params) noexcept;
// The decimated path (gauss_decimated.cu) takes these parameters for a frame of this shape in
// this scratch: decimated_params(), planes that fit.
bool decimated_takes(const GaussParams& params, int width, int height, PixelFormat format,
                     const ScratchLayout& scratch) noexcept;
cudaError_t launch_decimated(const GaussParams& params, ConstImageView in, ImageView out,
                             const ScratchLayout& scratch, cudaStream_t stream);
cudaError_t launch_recursive(const GaussParams& params, ConstImageView in, ImageView out,
                             const ScratchLayout& scratch, cudaStream_t stream);

}  // namespace starsift::cuda::gauss_detail
