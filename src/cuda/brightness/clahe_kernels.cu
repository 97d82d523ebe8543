// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA CLAHE (clahe.cuh): histograms per tile slice, maps per tile, above 12 bits the maps
// packed per cell, the blend per cell. The numbers (tile grid, clip limit, map scale, blend) are
// clahe_layout.hpp's, shared with the CPU; every float operation there rounds on its own on the
// device (__fmul_rn, __fadd_rn), so no fused multiply-add makes a pixel differ from
// clahe_reference().
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "cuda/brightness/clahe.cuh"
#include "cuda/common/launch_limits.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/device_query.hpp"
#include "pipeline/border.hpp"
#include "pipeline/brightness/clahe_layout.hpp"
#include "pipeline/error.hpp"

namespace starsift::cuda {

namespace {

constexpr int kHistThreads = 1024;
constexpr int kHistBatch = 8;  // pixels a histogram thread reads before it counts them
constexpr int kMapThreads = 1024;
constexpr int kPackThreads = 256;
constexpr int kPackPairs = 4;  // value pairs a pack thread writes, all read first
constexpr int kBlendThreads = 256;
constexpr int kBlendBatch = 4;          // rows a blend thread reads before it looks any of them up
constexpr int kMaxSlicePixels = 65535;  // so no 16-bit count of a slice can overflow
constexpr int kMaxShared = 128 * 1024;  // the most shared memory a block asks for
// The blend copies its cell's four maps into shared memory up to this size (12 bits; every
// device gives a block this much without asking). Beyond it the copy, 64 or 128 KiB a block,
// would leave a multiprocessor one to three blocks: the blend reads the cell's maps packed
// as quads (section 3) in global memory instead.
constexpr std::size_t kMaxSharedMaps = 32 * 1024;
static_assert(kMaxSharedMaps <= kDefaultSharedBytes);

// How a frame's work is cut: computed on the host from the layout, the same for the scratch
// size and the launch.
struct Plan {
  int slice_rows = 1;             // rows of a tile one histogram block counts
  int slices = 1;                 // histogram blocks per tile (before bin ranges)
  int blend_rows = 1;             // rows of a cell one blend block maps
  std::int64_t blend_chunks = 1;  // blend blocks per cell, enough for its at most tile_h + 1 rows
  // The blend's copy of its cell's four maps in shared memory, bytes; 0: it reads the cell's
  // quads in global memory instead.
  std::size_t shared_map_bytes = 0;
  std::size_t quads_at = 0;  // byte offset of the quads in the scratch (no shared maps)
  std::size_t scratch_bytes = 0;
};

int cells(const ClaheLayout& l) {
  return (l.tiles_x + 1) * (l.tiles_y + 1);
}

// Blend block width: as wide as a cell needs (up to 128 columns), the rest of the threads on
// further rows.
int blend_columns(const ClaheLayout& l) {
  return l.tile_w <= 48 ? 32 : l.tile_w <= 96 ? 64 : 128;
}

bool plan(const ClaheLayout& l, Plan& p) {
  if (l.tile_w > kMaxSlicePixels) return false;
  // About 4 x bins pixels a slice (zeroing and writing out the counts then cost well below
  // the counting), at least 16384 (16 a thread), at most what 16-bit counts allow.
  const int target = std::clamp(4 * l.bins, 16384, kMaxSlicePixels);
  const int rows = std::clamp(target / l.tile_w, 1, l.tile_h);
  p.slices = (l.tile_h + rows - 1) / rows;
  p.slice_rows = (l.tile_h + p.slices - 1) / p.slices;  // balanced, never more than `rows`
  const std::size_t maps_bytes =
      static_cast<std::size_t>(l.tiles()) * l.bins * sizeof(std::uint16_t);
  p.scratch_bytes = p.slices * maps_bytes;
  const std::size_t four_maps = 4 * sizeof(std::uint16_t) * l.bins;
  p.shared_map_bytes = four_maps <= kMaxSharedMaps ? four_maps : 0;
  if (p.shared_map_bytes == 0) {
    // The quads follow the maps (the first slice), over the other slices' counts, which the
    // maps have been made from by then.
    p.quads_at = (maps_bytes + 255) / 256 * 256;
    const std::size_t quads_bytes = static_cast<std::size_t>(cells(l)) * l.bins * sizeof(uint2);
    p.scratch_bytes = std::max(p.scratch_bytes, p.quads_at + quads_bytes);
  }
  // Blend blocks of at least 4096 pixels; with shared maps twice the bins too, so that the
  // four maps' copy stays a small part of the work. Whole batches of rows for every thread.
  const int pixels = p.shared_map_bytes > 0 ? std::max(4096, 2 * l.bins) : 4096;
  const int batch_rows = kBlendBatch * (kBlendThreads / blend_columns(l));
  const int rows_needed = (pixels + l.tile_w - 1) / l.tile_w;
  p.blend_rows = std::min((rows_needed + batch_rows - 1) / batch_rows * batch_rows, l.tile_h + 1);
  p.blend_chunks = (l.tile_h + std::int64_t{p.blend_rows}) / p.blend_rows;  // of tile_h + 1 rows
  return p.blend_chunks <= std::numeric_limits<int>::max();
}

struct Frame {
  const std::byte* in;
  std::byte* out;
  std::ptrdiff_t in_stride;
  std::ptrdiff_t out_stride;
};

template <class T>
__device__ __forceinline__ int sample(const Frame& f, int x, int y) {
  return reinterpret_cast<const T*>(f.in + y * f.in_stride)[x];
}

// ---- 1. Histograms -------------------------------------------------------------------------
// Block (slice * ranges + range, tile): the tile's rows [slice * slice_rows, +slice_rows),
// counting the bins [range * range_bins, +range_bins) (one range unless shared memory is
// short), written to the slice's counts in the scratch.

// A thread's pixels of a slice, i = row * tile_w + col for i = threadIdx.x + k * blockDim.x
// (k = 0, 1, ...): the row and column stepped on without a division.
struct SliceWalk {
  int row, col;
  int step_rows, step_cols;  // blockDim.x pixels on, as rows and columns

  __device__ explicit SliceWalk(int tile_w)
      : row(threadIdx.x / tile_w),
        col(threadIdx.x % tile_w),
        step_rows(blockDim.x / tile_w),
        step_cols(blockDim.x % tile_w) {}
  __device__ void next(int tile_w) {
    col += step_cols;
    row += step_rows;
    if (col >= tile_w) {
      col -= tile_w;
      ++row;
    }
  }
};

template <class T, bool kHold>
__global__ void __launch_bounds__(kHistThreads)
    clahe_histogram_kernel(Frame f, ClaheLayout l, int slice_rows, int ranges, int range_bins,
                           std::uint16_t* counts_out) {
  extern __shared__ std::uint32_t counts[];  // range_bins 16-bit counts, two to a word
  const int words = range_bins / 2;
  const int tile = blockIdx.y;
  const int slice = blockIdx.x / ranges;
  const int bin0 = (blockIdx.x % ranges) * range_bins;
  const int tx = tile % l.tiles_x, ty = tile / l.tiles_x;
  for (int w = threadIdx.x; w < words; w += blockDim.x) counts[w] = 0;
  __syncthreads();

  const int x0 = tx * l.tile_w;
  const int y0 = ty * l.tile_h + slice * slice_rows;
  const int y1 = min(y0 + slice_rows, (ty + 1) * l.tile_h);
  const int rows = y1 - y0;
  const bool inside = x0 + l.tile_w <= l.width && y1 <= l.height;  // no padding to read
  // A batch's loads are all issued before the first count waits for one.
  SliceWalk walk(l.tile_w);
  while (walk.row < rows) {
    int v[kHistBatch];
#pragma unroll
    for (int k = 0; k < kHistBatch; ++k) {
      v[k] = -1;  // past the slice: counts nowhere
      if (walk.row < rows) {
        int x = x0 + walk.col, y = y0 + walk.row;
        if (!inside) {
          x = border_index(x, l.width, BorderMode::Reflect101);
          y = border_index(y, l.height, BorderMode::Reflect101);
        }
        v[k] = sample<T>(f, x, y);
      }
      walk.next(l.tile_w);
    }
#pragma unroll
    for (int k = 0; k < kHistBatch; ++k) {
      const int b = (kHold ? min(v[k], l.top()) : v[k]) - bin0;
      if (static_cast<unsigned>(b) < static_cast<unsigned>(range_bins))
        atomicAdd(&counts[b >> 1], 1u << ((b & 1) * 16));
    }
  }
  __syncthreads();

  // The words are the 16-bit counts in order (little-endian halves): copied as they are.
  auto* out = reinterpret_cast<std::uint32_t*>(
      counts_out + (static_cast<std::size_t>(slice) * l.tiles() + tile) * l.bins + bin0);
  for (int w = threadIdx.x; w < words; w += blockDim.x) out[w] = counts[w];
}

// ---- 2. Maps -------------------------------------------------------------------------------
// Block `tile`: its count of each bin is the sum of its slices'; clipped at l.clip, the
// excess spread as clahe_reference() spreads it (batch to every bin, then one each to every
// step-th bin from 0), then scanned into the map, written over the tile's first slice
// (each thread reads its bins of every slice before it writes them).

constexpr int kMapBins = 8;  // consecutive bins a thread takes per step: one 16-byte load

// The counts of bins [b0, b0 + kMapBins) summed over the slices (0 past `bins`). Where the
// group is whole (bins is a power of 2, so at 8 bits and more) one 16-byte load per slice:
// b0 and every slice's start are multiples of 8 counts from the 256-byte aligned scratch.
__device__ __forceinline__ void group_counts(const std::uint16_t* first, std::size_t pitch,
                                             int slices, int b0, int bins, int (&c)[kMapBins]) {
  for (int k = 0; k < kMapBins; ++k) c[k] = 0;
  if (b0 + kMapBins <= bins) {
    for (int s = 0; s < slices; ++s) {
      const uint4 q = *reinterpret_cast<const uint4*>(first + s * pitch + b0);
      const std::uint32_t words[4] = {q.x, q.y, q.z, q.w};
      for (int k = 0; k < 4; ++k) {
        c[2 * k] += static_cast<int>(words[k] & 0xffff);
        c[2 * k + 1] += static_cast<int>(words[k] >> 16);
      }
    }
  } else {
    for (int k = 0; k < kMapBins && b0 + k < bins; ++k)
      for (int s = 0; s < slices; ++s) c[k] += first[s * pitch + b0 + k];
  }
}

__global__ void __launch_bounds__(kMapThreads)
    clahe_map_kernel(ClaheLayout l, int slices, std::uint16_t* scratch) {
  using Reduce = cub::BlockReduce<int, kMapThreads>;
  using Scan = cub::BlockScan<int, kMapThreads>;
  __shared__ union {
    typename Reduce::TempStorage reduce;
    typename Scan::TempStorage scan;
  } temp;
  __shared__ int clipped_total;
  const std::size_t pitch = static_cast<std::size_t>(l.tiles()) * l.bins;  // slice to slice
  std::uint16_t* first = scratch + static_cast<std::size_t>(blockIdx.x) * l.bins;
  const int bins = l.bins;
  constexpr int kStep = kMapThreads * kMapBins;

  int batch = 0, residual_end = 0, step = 1;
  if (l.clip > 0) {
    int excess = 0;
    for (int b0 = threadIdx.x * kMapBins; b0 < bins; b0 += kStep) {
      int c[kMapBins];
      group_counts(first, pitch, slices, b0, bins, c);
      for (int k = 0; k < kMapBins; ++k) excess += max(c[k] - l.clip, 0);
    }
    excess = Reduce(temp.reduce).Sum(excess);
    if (threadIdx.x == 0) clipped_total = excess;
    __syncthreads();
    const int clipped = clipped_total;
    batch = clipped / bins;
    const int residual = clipped - batch * bins;
    if (residual != 0) {
      step = max(bins / residual, 1);
      residual_end = residual * step;  // bins b < residual_end with b % step == 0 get one
    }
  }

  int carry = 0;
  for (int base = 0; base < bins; base += kStep) {
    const int b0 = base + threadIdx.x * kMapBins;
    int c[kMapBins];
    group_counts(first, pitch, slices, b0, bins, c);
    int total = 0;
    for (int k = 0; k < kMapBins; ++k) {
      const int b = b0 + k;
      if (l.clip > 0 && b < bins)
        c[k] = min(c[k], l.clip) + batch + (b < residual_end && b % step == 0 ? 1 : 0);
      total += c[k];
    }
    int before = 0, chunk = 0;
    Scan(temp.scan).ExclusiveSum(total, before, chunk);
    int sum = carry + before;
    std::uint16_t map[kMapBins];
    for (int k = 0; k < kMapBins; ++k) {
      sum += c[k];
      map[k] = static_cast<std::uint16_t>(clahe_map_value(sum, l.lut_scale, l.top()));
    }
    if (b0 + kMapBins <= bins) {
      uint4 q;
      q.x = map[0] | static_cast<std::uint32_t>(map[1]) << 16;
      q.y = map[2] | static_cast<std::uint32_t>(map[3]) << 16;
      q.z = map[4] | static_cast<std::uint32_t>(map[5]) << 16;
      q.w = map[6] | static_cast<std::uint32_t>(map[7]) << 16;
      *reinterpret_cast<uint4*>(first + b0) = q;
    } else {
      for (int k = 0; k < kMapBins && b0 + k < bins; ++k) first[b0 + k] = map[k];
    }
    carry += chunk;
    __syncthreads();  // temp.scan is used again
  }
}

// ---- 3. Quads (above 12 bits) -------------------------------------------------------------
// All the pixels of a cell (between four tile centres) blend the maps of the same four tiles,
// (cx - 1, cx) x (cy - 1, cy) held to the grid. The cell's quads hold the four maps' entries
// of each value side by side, 8 bytes: m11 | m12 << 16, then m21 | m22 << 16 (clahe_blend()'s
// names). A pixel's four lookups are then one 8-byte read, within one 32-byte sector, where
// the tile maps take four reads of four sectors, one in each map. Cell (cx, cy)'s quads are
// at (cy * (tiles_x + 1) + cx) * bins; the frame's take 4 (tiles_x + 1) (tiles_y + 1) / tiles
// times the maps' memory (5.1 at 8 x 8 tiles: 40.5 MiB at 16 bits).
// Block (chunk, cell): values [chunk * 2 * kPackPairs * kPackThreads, +...) of the cell, two
// a thread and step (one 4-byte word of each map in, one 16-byte store out).

// The grid indices (ty * tiles_x + tx) of the four tiles whose maps cell (cx, cy) blends.
struct CellTiles {
  int m11, m12, m21, m22;
};

__device__ CellTiles cell_tiles(int cx, int cy, const ClaheLayout& l) {
  const int t1x = max(cx - 1, 0), t2x = min(cx, l.tiles_x - 1);
  const int t1y = max(cy - 1, 0), t2y = min(cy, l.tiles_y - 1);
  return {t1y * l.tiles_x + t1x, t1y * l.tiles_x + t2x, t2y * l.tiles_x + t1x,
          t2y * l.tiles_x + t2x};
}

// The quads of values 2w and 2w + 1, from word w of each map (value 2w in its low half).
__device__ __forceinline__ uint4 quad_pair(std::uint32_t w11, std::uint32_t w12, std::uint32_t w21,
                                           std::uint32_t w22) {
  constexpr unsigned kLow = 0x5410, kHigh = 0x7632;  // __byte_perm: both low halves, both high
  return make_uint4(__byte_perm(w11, w12, kLow), __byte_perm(w21, w22, kLow),
                    __byte_perm(w11, w12, kHigh), __byte_perm(w21, w22, kHigh));
}

__global__ void __launch_bounds__(kPackThreads)
    clahe_pack_kernel(ClaheLayout l, const std::uint16_t* maps, uint4* quads) {
  const int cells_x = l.tiles_x + 1;
  const CellTiles t = cell_tiles(blockIdx.y % cells_x, blockIdx.y / cells_x, l);
  const int pairs = l.bins / 2;  // words of a map; 16-byte pairs of a cell's quads
  const auto* words = reinterpret_cast<const std::uint32_t*>(maps);
  const std::uint32_t* from[4] = {words + static_cast<std::size_t>(t.m11) * pairs,
                                  words + static_cast<std::size_t>(t.m12) * pairs,
                                  words + static_cast<std::size_t>(t.m21) * pairs,
                                  words + static_cast<std::size_t>(t.m22) * pairs};
  uint4* to = quads + static_cast<std::size_t>(blockIdx.y) * pairs;
  const int first = blockIdx.x * kPackPairs * kPackThreads + threadIdx.x;
  std::uint32_t w[kPackPairs][4] = {};
#pragma unroll
  for (int k = 0; k < kPackPairs; ++k) {
    const int pair = first + k * kPackThreads;
    if (pair < pairs)
#pragma unroll
      for (int m = 0; m < 4; ++m) w[k][m] = __ldg(from[m] + pair);
  }
#pragma unroll
  for (int k = 0; k < kPackPairs; ++k) {
    const int pair = first + k * kPackThreads;
    if (pair < pairs) to[pair] = quad_pair(w[k][0], w[k][1], w[k][2], w[k][3]);
  }
}

// ---- 4. Blend ------------------------------------------------------------------------------
// Block (chunk, cx, cy): rows [chunk * blend_rows, +blend_rows) of cell (cx, cy). A cell's
// chunks are neighbours in launch order, so the blocks running at one time share few cells'
// maps (in L2 and L1).

// The first i in 0..n whose cell is at least `cell`: from (cell - 1/2) x tile, where the
// cells change, stepped to the exact boundary (clahe_cell() is non-decreasing; its float
// rounding moves the boundary by a pixel or so).
__device__ int cell_start(int cell, int n, int tile, float inv_tile) {
  const long long guess = static_cast<long long>(cell) * tile - tile / 2;
  int i = static_cast<int>(min(max(guess, 0LL), static_cast<long long>(n)));
  while (i > 0 && clahe_cell(i - 1, inv_tile) >= cell) --i;
  while (i < n && clahe_cell(i, inv_tile) < cell) ++i;
  return i;
}

struct Span {
  int begin, end;
};

// The block's columns (those of cell cx) and rows (its chunk of those of cell cy).
__device__ void block_spans(const ClaheLayout& l, int blend_rows, Span& xs, Span& ys) {
  const int chunk = blockIdx.x, cx = blockIdx.y, cy = blockIdx.z;
  xs.begin = cell_start(cx, l.width, l.tile_w, l.inv_tile_w);
  xs.end = cell_start(cx + 1, l.width, l.tile_w, l.inv_tile_w);
  ys.begin = cell_start(cy, l.height, l.tile_h, l.inv_tile_h) + chunk * blend_rows;
  ys.end = min(cell_start(cy + 1, l.height, l.tile_h, l.inv_tile_h), ys.begin + blend_rows);
}

// The four maps' entries of one value, as clahe_blend() takes them.
struct Corners {
  int m11, m12, m21, m22;
};

// The block's copy of its cell's four maps in shared memory. A lookup costs little, so it is
// made as the pixel is blended: the entry fetched ahead is the value itself.
struct SharedMaps {
  const std::uint16_t* m11;
  const std::uint16_t* m12;
  const std::uint16_t* m21;
  const std::uint16_t* m22;
  using Entry = int;
  __device__ Entry fetch(int v) const { return v; }
  __device__ Corners corners(Entry v) const { return {m11[v], m12[v], m21[v], m22[v]}; }
};

// The cell's quads in global memory, read through the read-only cache: fetched for a whole
// batch of pixels before the first is blended, so the reads wait on L2 together.
struct CellQuads {
  const uint2* quads;
  using Entry = uint2;
  __device__ Entry fetch(int v) const { return __ldg(quads + v); }
  __device__ Corners corners(Entry q) const {
    return {static_cast<int>(q.x & 0xffff), static_cast<int>(q.x >> 16),
            static_cast<int>(q.y & 0xffff), static_cast<int>(q.y >> 16)};
  }
};

// The blend's read of a sample, its last: streamed past the caches the maps are in.
template <class T>
__device__ __forceinline__ int last_sample(const Frame& f, int x, int y) {
  return __ldcs(reinterpret_cast<const T*>(f.in + y * f.in_stride) + x);
}

// Column x at rows y, y + blockDim.y, ... (kBlendBatch of them, those before y_end): every
// sample read, then every entry fetched, then the pixels blended and written, so each step's
// reads are in flight together.
template <class T, bool kHold, class Maps>
__device__ __forceinline__ void blend_batch(const Frame& f, const ClaheLayout& l, const Maps& maps,
                                            const ClaheAxis& ax, int x, int y, int y_end) {
  const int dy = blockDim.y;
  int v[kBlendBatch];
#pragma unroll
  for (int k = 0; k < kBlendBatch; ++k)
    v[k] = y + k * dy < y_end ? last_sample<T>(f, x, y + k * dy) : 0;
  typename Maps::Entry e[kBlendBatch];
#pragma unroll
  for (int k = 0; k < kBlendBatch; ++k)
    e[k] =
        y + k * dy < y_end ? maps.fetch(kHold ? min(v[k], l.top()) : v[k]) : typename Maps::Entry{};
#pragma unroll
  for (int k = 0; k < kBlendBatch; ++k) {
    const int row = y + k * dy;
    if (row >= y_end) break;
    const ClaheAxis ay = clahe_axis(row, l.inv_tile_h, l.tiles_y);
    const Corners m = maps.corners(e[k]);
    reinterpret_cast<T*>(f.out + row * f.out_stride)[x] = static_cast<T>(
        clahe_blend(m.m11, m.m12, m.m21, m.m22, ax.w1, ax.w2, ay.w1, ay.w2, l.top()));
  }
}

// A warp takes 32 neighbouring pixels of a row; a thread keeps its column's weights while it
// walks down the rows.
template <class T, bool kHold, class Maps>
__device__ void blend_cell(const Frame& f, const ClaheLayout& l, Span xs, Span ys,
                           const Maps& maps) {
  for (int x = xs.begin + threadIdx.x; x < xs.end; x += blockDim.x) {
    const ClaheAxis ax = clahe_axis(x, l.inv_tile_w, l.tiles_x);
    for (int y = ys.begin + threadIdx.y; y < ys.end; y += kBlendBatch * blockDim.y)
      blend_batch<T, kHold>(f, l, maps, ax, x, y, ys.end);
  }
}

// kShared: the cell's four tile maps copied into shared memory (up to 12 bits); else its
// quads read from global memory.
template <class T, bool kHold, bool kShared>
__global__ void __launch_bounds__(kBlendThreads)
    clahe_blend_kernel(Frame f, ClaheLayout l, int blend_rows, const std::uint16_t* maps,
                       const uint2* quads) {
  extern __shared__ std::uint32_t shared_maps[];  // kShared: the four maps, 2^bits each
  Span xs, ys;
  block_spans(l, blend_rows, xs, ys);
  if (xs.begin >= xs.end || ys.begin >= ys.end) return;  // the whole block: before any barrier

  const int cx = blockIdx.y, cy = blockIdx.z;
  if constexpr (kShared) {
    const CellTiles t = cell_tiles(cx, cy, l);
    const int tiles[4] = {t.m11, t.m12, t.m21, t.m22};
    const int thread = threadIdx.y * blockDim.x + threadIdx.x;
    const int words = l.bins / 2;
    for (int m = 0; m < 4; ++m) {
      const auto* src =
          reinterpret_cast<const std::uint32_t*>(maps) + static_cast<std::size_t>(tiles[m]) * words;
      for (int w = thread; w < words; w += kBlendThreads) shared_maps[m * words + w] = src[w];
    }
    __syncthreads();
    const auto* s = reinterpret_cast<const std::uint16_t*>(shared_maps);
    blend_cell<T, kHold>(f, l, xs, ys, SharedMaps{s, s + l.bins, s + 2 * l.bins, s + 3 * l.bins});
  } else {
    const std::size_t cell = static_cast<std::size_t>(cy) * (l.tiles_x + 1) + cx;
    blend_cell<T, kHold>(f, l, xs, ys, CellQuads{quads + cell * l.bins});
  }
}

// ---- Launch --------------------------------------------------------------------------------

template <class T, bool kHold>
cudaError_t launch(const ClaheLayout& l, const Plan& p, const Frame& f, std::uint16_t* scratch,
                   int shared_limit, cudaStream_t stream) {
  // Histograms: all bins in one block where 16-bit counts fit (128 KiB at 16 bits), else the
  // bins split into ranges, each range's block reading the slice again.
  int ranges = 1;
  while (static_cast<std::size_t>(l.bins / ranges) * sizeof(std::uint16_t) >
         static_cast<std::size_t>(shared_limit))
    ranges *= 2;
  const int range_bins = l.bins / ranges;
  const std::size_t hist_shared = static_cast<std::size_t>(range_bins) * sizeof(std::uint16_t);
  STARSIFT_CUDA_TRY(allow_shared(clahe_histogram_kernel<T, kHold>, hist_shared));
  clahe_histogram_kernel<T, kHold>
      <<<dim3(p.slices * ranges, l.tiles()), kHistThreads, hist_shared, stream>>>(
          f, l, p.slice_rows, ranges, range_bins, scratch);

  clahe_map_kernel<<<l.tiles(), kMapThreads, 0, stream>>>(l, p.slices, scratch);

  const dim3 grid(static_cast<unsigned>(p.blend_chunks), l.tiles_x + 1, l.tiles_y + 1);
  const int columns = blend_columns(l);
  const dim3 block(columns, kBlendThreads / columns);
  if (p.shared_map_bytes > 0) {
    clahe_blend_kernel<T, kHold, true>
        <<<grid, block, p.shared_map_bytes, stream>>>(f, l, p.blend_rows, scratch, nullptr);
  } else {
    auto* quads = reinterpret_cast<uint4*>(reinterpret_cast<std::byte*>(scratch) + p.quads_at);
    const int per_block = 2 * kPackPairs * kPackThreads;  // values
    clahe_pack_kernel<<<dim3((l.bins + per_block - 1) / per_block, cells(l)), kPackThreads, 0,
                        stream>>>(l, scratch, quads);
    clahe_blend_kernel<T, kHold, false><<<grid, block, 0, stream>>>(
        f, l, p.blend_rows, scratch, reinterpret_cast<const uint2*>(quads));
  }
  return cudaPeekAtLastError();
}

bool stride_ok(std::ptrdiff_t stride, std::size_t row_bytes, int sample_bytes) {
  return stride >= static_cast<std::ptrdiff_t>(row_bytes) && stride % sample_bytes == 0;
}

}  // namespace

std::size_t clahe_scratch_bytes(const BrightnessParams& params, const FrameShape& shape) noexcept {
  try {
    const ClaheLayout l =
        clahe_layout(params, shape.bit_depth, shape.width, shape.height, shape.format);
    Plan p;
    return plan(l, p) ? p.scratch_bytes : 0;
  } catch (...) {
    return 0;
  }
}

cudaError_t launch_clahe(const BrightnessParams& params, int bit_depth, ConstImageView in,
                         ImageView out, ClaheScratch scratch, cudaStream_t stream) {
  ClaheLayout l;
  try {
    l = clahe_layout(params, bit_depth, in, out);
  } catch (const Error&) {
    return cudaErrorInvalidValue;
  }
  Plan p;
  const int sample_bytes = in.format == PixelFormat::Gray8 ? 1 : 2;
  if (!plan(l, p) || in.data == nullptr || out.data == nullptr || scratch.data == nullptr ||
      scratch.bytes < p.scratch_bytes || !stride_ok(in.stride, in.row_bytes(), sample_bytes) ||
      !stride_ok(out.stride, out.row_bytes(), sample_bytes))
    return cudaErrorInvalidValue;

  // Asked of the runtime once a device (current_device_facts()), not at each frame.
  const int optin = current_device_facts().shared_per_block_optin;
  if (optin == 0) return cudaErrorNoDevice;
  const int shared_limit = std::min(optin, kMaxShared);

  const Frame f{in.data, out.data, in.stride, out.stride};
  auto* counts = static_cast<std::uint16_t*>(scratch.data);
  if (in.format == PixelFormat::Gray8)
    return launch<std::uint8_t, false>(l, p, f, counts, shared_limit, stream);
  if (l.bits == 16) return launch<std::uint16_t, false>(l, p, f, counts, shared_limit, stream);
  return launch<std::uint16_t, true>(l, p, f, counts, shared_limit, stream);
}

}  // namespace starsift::cuda
