// SPDX-License-Identifier: LGPL-2.1-or-later
// The schedule of whitening's neighbourhood passes in register strips (load, align, the objects'
// box and decision; whiten_*.cu only), as detection's mask pass (detect_mask.cu): a lane takes
// 4 columns and walks a few rows down (kStripRows unless the pass says otherwise), a row's 4
// samples read with one word load where the plane's rows allow it, the columns either side from the
// neighbouring lanes by shuffles. No shared memory, no barrier, no division per pixel: the tile
// passes these replaced spent more instructions staging a tile and indexing it than on the pixels'
// own arithmetic.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/whiten/whiten.cuh"
#include "pipeline/whiten/resample.hpp"  // clamp_index()

namespace starsift::cuda::whiten_detail {

inline constexpr int kStripWarps = 4;  // warps of a block, one above the other
inline constexpr int kStripRows = 8;   // output rows of a lane

// Output columns of a warp whose first `before` and last `after` lanes only read the columns
// around the others' (4 columns a lane).
template <int Before, int After>
constexpr int strip_columns() {
  return 4 * (32 - Before - After);
}

// The grid of a strip pass over a w x h plane, `columns` output columns and `rows` rows a warp.
inline dim3 strip_grid(int w, int h, int columns, int rows = kStripRows) {
  const int block_rows = rows * kStripWarps;
  return dim3((w + columns - 1) / columns, (h + block_rows - 1) / block_rows);
}
inline dim3 strip_block() {
  return dim3(32, kStripWarps);
}

// Whether the state's dense planes (x, y, sigma^2, the byte planes) have rows of whole 4-sample
// words, so that a lane's 4 columns are one aligned load or store.
inline bool planes_in_quads(const WhitenDeviceState& s) {
  return s.width % 4 == 0;
}

// The columns either side of a lane's 4 in a row of its 3 x 6 window (out[1..4] set): out[0]
// from the lane before, out[5] from the lane after. Every lane of the warp calls it.
__device__ __forceinline__ void spread_neighbours(float (&out)[6]) {
  out[0] = __shfl_up_sync(0xffffffffu, out[4], 1);
  out[5] = __shfl_down_sync(0xffffffffu, out[1], 1);
}

// A 3 x 6 window down a row: rows 1 and 2 move up, and row 2 is the caller's to fill.
__device__ __forceinline__ void slide_window(float (&window)[3][6]) {
#pragma unroll
  for (int c = 0; c < 6; ++c) {
    window[0][c] = window[1][c];
    window[1][c] = window[2][c];
  }
}

// Sets, in a per-pixel mask cleared before the pass, the bit of pixel p0 + c for each set bit c
// of `bits` (c < 4). The masks these passes set (despiked, unusable samples) are sparse: one
// atomic a set bit, none for a lane whose pixels are clear.
__device__ __forceinline__ void or_pixel_bits(std::uint32_t* mask, std::size_t p0, unsigned bits) {
  while (bits != 0) {
    const std::size_t p = p0 + static_cast<unsigned>(__ffs(static_cast<int>(bits)) - 1);
    bits &= bits - 1;
    atomicOr(mask + (p >> 5), 1u << (p & 31));
  }
}

// Four consecutive floats of a plane row from column `col`: one 16-byte load where the row
// allows it (`vector`: rows of a multiple of 4 floats) and all four lie inside 0..w-1; else one
// load each at clamp_index(col + i, w), the border rule of sample_shifted().
__device__ __forceinline__ float4 load_clamped_quad(const float* row, int col, int w, bool vector) {
  if (vector && col >= 0 && col + 3 < w) return __ldg(reinterpret_cast<const float4*>(row + col));
  const auto at = [&](int i) { return __ldg(row + clamp_index(col + i, w)); };
  return make_float4(at(0), at(1), at(2), at(3));
}

__device__ __forceinline__ float quad_at(const float4& q, int i) {
  return i == 0 ? q.x : i == 1 ? q.y : i == 2 ? q.z : q.w;
}

// Stores a lane's 4 floats at (x0 .. x0 + 3) of a dense plane row: one 16-byte store where the
// row allows it, else the samples inside the row one by one.
__device__ __forceinline__ void store_quad(float* row, int x0, int w, bool vector,
                                           const float (&v)[4]) {
  if (vector && x0 + 3 < w) {
    *reinterpret_cast<float4*>(row + x0) = make_float4(v[0], v[1], v[2], v[3]);
    return;
  }
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    if (x0 + c < w) row[x0 + c] = v[c];
  }
}

// A load through the read-only cache, or (a plane the pass also writes: sigma^2, the runs) a
// plain one.
template <bool ReadOnly, class T>
__device__ __forceinline__ T load_from(const T* p) {
  if constexpr (ReadOnly) {
    return __ldg(p);
  } else {
    return *p;
  }
}

// Four consecutive floats of a plane row from column x0 (x0 >= 0), 0 beyond column w - 1.
template <bool ReadOnly = true>
__device__ __forceinline__ float4 load_quad_or_zero(const float* row, int x0, int w, bool vector) {
  if (vector && x0 + 3 < w) return load_from<ReadOnly>(reinterpret_cast<const float4*>(row + x0));
  const auto at = [&](int i) { return x0 + i < w ? load_from<ReadOnly>(row + x0 + i) : 0.0f; };
  return make_float4(at(0), at(1), at(2), at(3));
}

// Four consecutive bytes of a plane row from column x0 (x0 >= 0) as one word (byte c: column
// x0 + c), 0 beyond column w - 1; `vector`: rows of a multiple of 4 bytes.
template <bool ReadOnly = true>
__device__ __forceinline__ std::uint32_t load_byte_quad(const unsigned char* row, int x0, int w,
                                                        bool vector) {
  if (vector && x0 + 3 < w) {
    return load_from<ReadOnly>(reinterpret_cast<const unsigned int*>(row + x0));
  }
  std::uint32_t word = 0;
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    if (x0 + c < w)
      word |= static_cast<std::uint32_t>(load_from<ReadOnly>(row + x0 + c)) << (8 * c);
  }
  return word;
}

// Stores a byte quad (byte c at column x0 + c) into a plane row, the columns inside it.
__device__ __forceinline__ void store_byte_quad(unsigned char* row, int x0, int w, bool vector,
                                                std::uint32_t word) {
  if (vector && x0 + 3 < w) {
    *reinterpret_cast<unsigned int*>(row + x0) = word;
    return;
  }
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    if (x0 + c < w) row[x0 + c] = static_cast<unsigned char>(word >> (8 * c));
  }
}

// Bits p0 .. p0 + 3 of a per-pixel mask of `words` words (bit c: pixel p0 + c, p0 inside the
// plane; bits past its end read as the last word's padding, 0).
__device__ __forceinline__ unsigned mask_nibble(const std::uint32_t* mask, int words,
                                                std::size_t p0) {
  const std::size_t word = p0 >> 5;
  const unsigned shift = static_cast<unsigned>(p0 & 31);
  unsigned long long bits = __ldg(mask + word);
  if (shift > 28 && word + 1 < static_cast<std::size_t>(words)) {
    bits |= static_cast<unsigned long long>(__ldg(mask + word + 1)) << 32;
  }
  return static_cast<unsigned>(bits >> shift) & 0xfu;
}

// The sum of a warp's counts added to `total`: one atomic a warp (integers: the order of the
// additions does not matter). Every lane of the warp calls it.
__device__ __forceinline__ void add_warp_count(unsigned long long* total, unsigned count) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    count += __shfl_down_sync(0xffffffffu, count, offset);
  if ((threadIdx.x & 31) == 0 && count != 0) {
    atomicAdd(total, static_cast<unsigned long long>(count));
  }
}

}  // namespace starsift::cuda::whiten_detail
