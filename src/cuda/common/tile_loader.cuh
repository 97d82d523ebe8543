// SPDX-License-Identifier: LGPL-2.1-or-later
// Staging a 2-D tile of a frame and its apron (the margin a window reaches beyond the tile) in
// shared memory, so that a kernel's inner loops read neighbours from shared memory and never
// test borders. Two block-wide loops spread the tile's cells over the block's threads:
// for_each_cell() (any block shape, one integer division per cell) and for_each_row_cell()
// (1-D blocks of TileW-wide thread rows, no division); the caller's body fetches a cell with
// its own border rule. load_key_tile() is the whole loader of the comparison filters: key
// formats (format_traits.cuh), any BorderMode (border_index(), the CPU reference's rule). Its
// loop is written out rather than through for_each_cell(): with a lambda holding the key
// arrays the compiler generated different code for the 4-channel formats.
//
// Limits: every thread of the block must call these (the caller places __syncthreads() after
// them); coordinates are int (frames below 2^31 samples a side); load_key_tile() packs at most
// two 16-bit keys a word.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/common/format_traits.cuh"
#include "pipeline/border.hpp"

namespace starsift::cuda {

// Calls body(r, c) for every cell of a rows x cols tile, cell i = r * cols + c taken by
// thread tid, tid + threads, ... (tid in [0, threads)).
template <class Body>
__device__ __forceinline__ void for_each_cell(int rows, int cols, int tid, int threads, Body body) {
  for (int i = tid; i < rows * cols; i += threads) {
    const int r = i / cols;
    const int c = i - r * cols;
    body(r, c);
  }
}

// Calls body(r, c) for every cell of a Rows x Cols tile (Cols <= 2 TileW), for a 1-D block of
// ThreadRows rows of TileW threads: thread t takes column t % TileW (and t % TileW + TileW) of
// rows t / TileW, t / TileW + ThreadRows, ...; no division per cell.
template <int TileW, int ThreadRows, int Rows, int Cols, class Body>
__device__ __forceinline__ void for_each_row_cell(Body body) {
  static_assert(Cols <= 2 * TileW);
  const int tx = static_cast<int>(threadIdx.x) % TileW;
  for (int r = static_cast<int>(threadIdx.x) / TileW; r < Rows; r += ThreadRows) {
    body(r, tx);
    if (tx + TileW < Cols) body(r, tx + TileW);
  }
}

// Reads the keys of pixel (x, y) of `src`, which may lie outside the frame: the border rule
// picks the pixel read, or the border key for a constant border. `Source` has the frame's
// `in` (first row), `in_stride` (bytes), `width`, `height`, `border` and `border_key`.
template <class F, class Source>
__device__ __forceinline__ void read_keys(const Source& src, int x, int y,
                                          std::uint32_t (&k)[F::kPlanes]) {
  const int sx = border_index(x, src.width, src.border);
  const int sy = border_index(y, src.height, src.border);
  if (sx < 0 || sy < 0) {
#pragma unroll
    for (int p = 0; p < F::kPlanes; ++p) k[p] = src.border_key;
    return;
  }
  F::load(src.in + sy * src.in_stride, sx, k);
}

// Fills `planes` (kPlanes planes of rows x cols words, `pitch` words apart, `plane_words`
// between planes) with the keys of input rows [oy, oy+rows) and columns [ox, ox+cols).
// With two lanes, word (r, c) also holds, in its upper half, row oy + r + lane_offset.
// Blocks whose tile lies inside the frame (almost all) skip the border arithmetic.
template <class F, int kLanes, class Source>
__device__ __forceinline__ void load_key_tile(const Source& src, std::uint32_t* planes,
                                              int plane_words, int pitch, int rows, int cols,
                                              int ox, int oy, int lane_offset) {
  const int threads = blockDim.x * blockDim.y;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  const int last_row = oy + rows - 1 + (kLanes - 1) * lane_offset;
  const bool inside = ox >= 0 && oy >= 0 && ox + cols <= src.width && last_row < src.height;
  for (int i = tid; i < rows * cols; i += threads) {
    const int r = i / cols;
    const int c = i - r * cols;
    std::uint32_t k[F::kPlanes];
    if (inside) {
      F::load(src.in + (oy + r) * src.in_stride, ox + c, k);
    } else {
      read_keys<F>(src, ox + c, oy + r, k);
    }
    if constexpr (kLanes == 2) {
      std::uint32_t k2[F::kPlanes];
      if (inside) {
        F::load(src.in + (oy + r + lane_offset) * src.in_stride, ox + c, k2);
      } else {
        read_keys<F>(src, ox + c, oy + r + lane_offset, k2);
      }
#pragma unroll
      for (int p = 0; p < F::kPlanes; ++p) k[p] |= k2[p] << 16;
    }
#pragma unroll
    for (int p = 0; p < F::kPlanes; ++p) planes[p * plane_words + r * pitch + c] = k[p];
  }
}

}  // namespace starsift::cuda
