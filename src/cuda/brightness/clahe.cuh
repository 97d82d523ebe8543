// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA CLAHE launcher: clahe_reference()'s pixels (pipeline/brightness/clahe.hpp) on device
// frames, in three kernels on one stream.
//
// 1. Histograms: one block per slice of a tile (a run of its rows, at most 65535 pixels),
//    counting in shared memory with 16-bit counters packed two to a word (no count of a
//    slice can pass 65535), so 65536 bins take 128 KiB and fit where 32-bit counters
//    (256 KiB) would not; the slice's counts go to the scratch as they are, no atomics in
//    global memory. Slices of about 4 x bins pixels, at least 16384, so every
//    multiprocessor has work at small bit depths. (Where a device has less shared memory,
//    the bins are split into ranges, each block reading its slice again.)
// 2. Maps: one block per tile sums its slices' counts (16-byte loads), clips, spreads the
//    excess as OpenCV does, and scans the bins (cub::BlockScan, 8192 bins a step) into the
//    tile's map, written over its first slice.
// 3. Blend: one block per run of rows of one cell (the pixels between four tile centres, the
//    same four maps for all); a warp takes 32 neighbouring pixels of a row. Up to 14 bits the
//    block first copies its four maps into shared memory (4 x 2^bits x 2 bytes: 32 KiB at 12
//    bits, 128 KiB at 14) and every lookup is a shared-memory read. At 15 and 16 bits four
//    maps (512 KiB at 16) do not fit: lookups read the maps in global memory through the
//    read-only cache; the maps of a frame (8 MiB for 8x8 tiles at 16 bits) stay in L2, and a
//    block reads only its cell's four, so a sky's narrow range of values is served from L1.
// Every float operation rounds on its own (__fmul_rn, __fadd_rn: clahe_layout.hpp), so the
// pixels are bit-identical to clahe_reference() and ClaheCpu.
//
// Measured on an H200 (8x8 tiles, clip 2, uniform random frames; a sky-like frame within 10
// per cent, faster at 16 bits): 2048x2048 in 41 us at 8 and 12 bits (~100 Gpix/s), 84 us at
// 14, 191 us at 16 (22 Gpix/s; 130 us, 32 Gpix/s, on the sky); 4096x4096 at 12 bits
// 127 Gpix/s. At 16 bits the blend's four lookups a pixel in L2 dominate. The split into bin
// ranges (devices offering a block less than 128 KiB) has not run on a GPU yet.
//
// Limitations
// | what        | supported                                                            |
// |-------------|----------------------------------------------------------------------|
// | formats     | GRAY8 (bit depth 8), GRAY16_LE (bit depth 1..16)                     |
// | grid        | 1..64 tiles per axis (BrightnessParams::kMaxTiles); clip limit >= 0  |
// | image size  | any >= 1x1 whose tiles are at most 65535 pixels wide; strides >=     |
// |             | row bytes, multiples of the sample size                              |
// | in-place    | no: `in`, `out` and the scratch must not overlap                     |
// | memory      | device memory, both views and the scratch                            |
// | device      | any from sm_75; the shared-memory paths take what the device offers  |
// |             | a block (up to 128 KiB): less splits the bins, or reads global maps  |
//
// Use: clahe_scratch_bytes() for the shape and parameters, allocate that much device memory
// once (again when the grid or bit depth changes), then launch_clahe() per frame. The
// launcher allocates nothing, never synchronises, and returns the launch status
// (cudaPeekAtLastError); the scratch needs no clearing between frames.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "pipeline/brightness/params.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift::cuda {

// Device memory the launcher works in: the slices' counts, then the tiles' maps over them.
// At least clahe_scratch_bytes() bytes, 256-byte aligned (as cudaMalloc returns it).
struct ClaheScratch {
  void* data = nullptr;
  std::size_t bytes = 0;
};

// Bytes of scratch launch_clahe() needs for frames of `shape` (width, height, format,
// bit_depth) with the grid of `params` (tiles_x, tiles_y; clip_limit does not matter); 0 for
// a shape or grid outside the limitations above.
std::size_t clahe_scratch_bytes(const BrightnessParams& params, const FrameShape& shape) noexcept;

// The mapped value of every pixel of `in` into `out` (same size and format, distinct
// memory), as clahe_reference(params, bit_depth, in, out). Returns cudaErrorInvalidValue,
// before launching anything, for formats, depths, grids, sizes or scratch outside the
// limitations above.
cudaError_t launch_clahe(const BrightnessParams& params, int bit_depth, ConstImageView in,
                         ImageView out, ClaheScratch scratch, cudaStream_t stream);

}  // namespace starsift::cuda
