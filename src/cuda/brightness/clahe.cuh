// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA CLAHE launcher: clahe_reference()'s pixels (pipeline/brightness/clahe.hpp) on device
// frames, in three kernels on one stream (four above 12 bits).
//
// 1. Histograms: one block per slice of a tile (a run of its rows, at most 65535 pixels),
//    counting in shared memory with 16-bit counters packed two to a word (no count of a
//    slice can pass 65535), so 65536 bins take 128 KiB and fit where 32-bit counters
//    (256 KiB) would not; the slice's counts go to the scratch as they are, no atomics in
//    global memory. Slices of about 4 x bins pixels, at least 16384, so every
//    multiprocessor has work at small bit depths. A thread reads 8 pixels before it counts
//    them, so their loads wait together. (Where a device has less shared memory, the bins
//    are split into ranges, each block reading its slice again.)
// 2. Maps: one block per tile sums its slices' counts (16-byte loads), clips, spreads the
//    excess as OpenCV does, and scans the bins (cub::BlockScan, 8192 bins a step) into the
//    tile's map, written over its first slice.
// 3. Quads, above 12 bits: one 8-byte entry per value and cell (the pixels between four tile
//    centres, which all blend the same four maps) holding the four maps' values, written
//    after the maps (over the other slices' counts). A pixel's four lookups become one read
//    of one 32-byte sector instead of four reads in four sectors of four 2^bits maps.
// 4. Blend: one block per run of rows of one cell; a warp takes 32 neighbouring pixels of a
//    row, a thread 4 rows of its column at a time (their loads in flight together). Up to 12
//    bits the block first copies its four maps into shared memory (4 x 2^bits x 2 bytes, at
//    most 32 KiB) and every lookup is a shared-memory read. Above, where a copy would leave a
//    multiprocessor one to three blocks, a lookup is one 8-byte read of the cell's quads in
//    global memory through the read-only cache: the quads of the cells being blended stay
//    in L2 (a cell's blocks are consecutive in launch order), and a sky's narrow range of
//    values is served from L1. The frame's quads take 4 (tiles_x + 1) (tiles_y + 1) / tiles
//    times the maps' memory: 40.5 MiB for 8x8 tiles at 16 bits.
// Every float operation rounds on its own (__fmul_rn, __fadd_rn: clahe_layout.hpp), so the
// pixels are bit-identical to clahe_reference() and ClaheCpu.
//
// bench/results/clahe-cuda/ has the times on an H200 (starsift-bench-clahe-cuda). The split
// into bin ranges (devices offering a block less than 128 KiB) has not run on a GPU yet.
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
// | device      | any from sm_75; the histograms take the shared memory the device     |
// |             | offers a block (up to 128 KiB): less splits the bins                 |
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

// Device memory the launcher works in: the slices' counts, then the tiles' maps over them
// (and above 12 bits the cells' quads after the maps).
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
