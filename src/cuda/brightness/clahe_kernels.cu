// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA CLAHE (clahe.cuh): histograms per tile slice, maps per tile, the blend per cell. The
// numbers (tile grid, clip limit, map scale, blend) are clahe_layout.hpp's, shared with the
// CPU; every float operation there rounds on its own on the device (__fmul_rn, __fadd_rn), so
// no fused multiply-add makes a pixel differ from clahe_reference().
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <cstdint>

#include "cuda/brightness/clahe.cuh"
#include "cuda/cuda_check.hpp"
#include "pipeline/border.hpp"
#include "pipeline/brightness/clahe_layout.hpp"
#include "pipeline/error.hpp"

namespace starsift::cuda {

namespace {

constexpr int kHistThreads = 1024;
constexpr int kMapThreads = 1024;
constexpr int kBlendThreads = 256;
constexpr int kMaxSlicePixels = 65535;  // so no 16-bit count of a slice can overflow
constexpr int kMaxShared = 128 * 1024;  // the most shared memory a block asks for
constexpr int kDefaultShared = 48 * 1024;

// How a frame's work is cut: computed on the host from the layout, the same for the scratch
// size and the launch.
struct Plan {
  int slice_rows = 1;  // rows of a tile one histogram block counts
  int slices = 1;      // histogram blocks per tile (before bin ranges)
  int blend_rows = 1;  // rows of a cell one blend block maps
  std::size_t scratch_bytes = 0;
};

bool plan(const ClaheLayout& l, Plan& p) {
  if (l.tile_w > kMaxSlicePixels) return false;
  // About 4 x bins pixels a slice (zeroing and writing out the counts then cost well below
  // the counting), at least 16384 (16 a thread), at most what 16-bit counts allow.
  const int target = std::clamp(4 * l.bins, 16384, kMaxSlicePixels);
  const int rows = std::clamp(target / l.tile_w, 1, l.tile_h);
  p.slices = (l.tile_h + rows - 1) / rows;
  p.slice_rows = (l.tile_h + p.slices - 1) / p.slices;  // balanced, never more than `rows`
  p.scratch_bytes = static_cast<std::size_t>(p.slices) * l.tiles() * l.bins * sizeof(std::uint16_t);
  // Blend blocks of at least 4096 pixels and twice the bins (the four maps' copy stays a
  // small part of the work).
  const int pixels = std::max(4096, 2 * l.bins);
  p.blend_rows = std::clamp((pixels + l.tile_w - 1) / l.tile_w, 1, l.tile_h + 1);
  return (l.tile_h + 1 + p.blend_rows - 1) / p.blend_rows <= 65535;  // grid.z
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
  const int n = (y1 - y0) * l.tile_w;
  const bool inside = x0 + l.tile_w <= l.width && y1 <= l.height;  // no padding to read
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const int r = i / l.tile_w;
    int x = x0 + i - r * l.tile_w, y = y0 + r;
    if (!inside) {
      x = border_index(x, l.width, BorderMode::Reflect101);
      y = border_index(y, l.height, BorderMode::Reflect101);
    }
    int v = sample<T>(f, x, y);
    if constexpr (kHold) v = min(v, l.top());
    v -= bin0;
    if (static_cast<unsigned>(v) < static_cast<unsigned>(range_bins))
      atomicAdd(&counts[v >> 1], 1u << ((v & 1) * 16));
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

// ---- 3. Blend ------------------------------------------------------------------------------
// Block (cx, cy, z): rows [z * blend_rows, +blend_rows) of cell (cx, cy), whose pixels all
// blend the maps of tiles (cx - 1, cx) x (cy - 1, cy), held to the grid.

// The first i in 0..n whose cell is at least `cell`.
__device__ int cell_start(int cell, int n, float inv_tile) {
  int lo = 0, hi = n;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (clahe_cell(mid, inv_tile) >= cell)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

template <class T, bool kHold, bool kShared>
__global__ void __launch_bounds__(kBlendThreads)
    clahe_blend_kernel(Frame f, ClaheLayout l, int blend_rows, const std::uint16_t* maps) {
  extern __shared__ std::uint32_t shared_maps[];  // kShared: the four maps, 2^bits each
  const int cx = blockIdx.x, cy = blockIdx.y;
  const int x_begin = cell_start(cx, l.width, l.inv_tile_w);
  const int x_end = cell_start(cx + 1, l.width, l.inv_tile_w);
  const int y_begin = cell_start(cy, l.height, l.inv_tile_h) + blockIdx.z * blend_rows;
  const int y_end = min(cell_start(cy + 1, l.height, l.inv_tile_h), y_begin + blend_rows);
  if (x_begin >= x_end || y_begin >= y_end) return;  // the whole block: before any barrier

  const int t1x = max(cx - 1, 0), t2x = min(cx, l.tiles_x - 1);
  const int t1y = max(cy - 1, 0), t2y = min(cy, l.tiles_y - 1);
  const std::size_t bins = l.bins;
  const std::uint16_t* m11 = maps + (static_cast<std::size_t>(t1y) * l.tiles_x + t1x) * bins;
  const std::uint16_t* m12 = maps + (static_cast<std::size_t>(t1y) * l.tiles_x + t2x) * bins;
  const std::uint16_t* m21 = maps + (static_cast<std::size_t>(t2y) * l.tiles_x + t1x) * bins;
  const std::uint16_t* m22 = maps + (static_cast<std::size_t>(t2y) * l.tiles_x + t2x) * bins;
  if constexpr (kShared) {
    const int thread = threadIdx.y * blockDim.x + threadIdx.x;
    const int words = l.bins / 2;
    const std::uint16_t* from[4] = {m11, m12, m21, m22};
    for (int m = 0; m < 4; ++m) {
      const auto* src = reinterpret_cast<const std::uint32_t*>(from[m]);
      for (int w = thread; w < words; w += kBlendThreads) shared_maps[m * words + w] = src[w];
    }
    __syncthreads();
    const auto* s = reinterpret_cast<const std::uint16_t*>(shared_maps);
    m11 = s;
    m12 = s + bins;
    m21 = s + 2 * bins;
    m22 = s + 3 * bins;
  }

  // A warp takes 32 neighbouring pixels of a row; a thread keeps its column's weights
  // while it walks down the rows.
  for (int x = x_begin + threadIdx.x; x < x_end; x += blockDim.x) {
    const ClaheAxis ax = clahe_axis(x, l.inv_tile_w, l.tiles_x);
    for (int y = y_begin + threadIdx.y; y < y_end; y += blockDim.y) {
      const ClaheAxis ay = clahe_axis(y, l.inv_tile_h, l.tiles_y);
      int v = sample<T>(f, x, y);
      if constexpr (kHold) v = min(v, l.top());
      int a, b, c, d;
      if constexpr (kShared) {
        a = m11[v], b = m12[v], c = m21[v], d = m22[v];
      } else {
        a = __ldg(m11 + v), b = __ldg(m12 + v), c = __ldg(m21 + v), d = __ldg(m22 + v);
      }
      reinterpret_cast<T*>(f.out + y * f.out_stride)[x] =
          static_cast<T>(clahe_blend(a, b, c, d, ax.w1, ax.w2, ay.w1, ay.w2, l.top()));
    }
  }
}

// ---- Launch --------------------------------------------------------------------------------

template <class Kernel>
cudaError_t allow_shared(Kernel kernel, std::size_t bytes) {
  if (bytes <= kDefaultShared) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(bytes));
}

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

  const dim3 grid(l.tiles_x + 1, l.tiles_y + 1, (l.tile_h + 1 + p.blend_rows - 1) / p.blend_rows);
  // As wide as a cell needs (up to 128 columns), the rest of the threads on further rows.
  const int columns = l.tile_w <= 48 ? 32 : l.tile_w <= 96 ? 64 : 128;
  const dim3 block(columns, kBlendThreads / columns);
  const std::size_t maps_shared = 4 * static_cast<std::size_t>(l.bins) * sizeof(std::uint16_t);
  if (maps_shared <= static_cast<std::size_t>(shared_limit)) {
    STARSIFT_CUDA_TRY(allow_shared(clahe_blend_kernel<T, kHold, true>, maps_shared));
    clahe_blend_kernel<T, kHold, true>
        <<<grid, block, maps_shared, stream>>>(f, l, p.blend_rows, scratch);
  } else {
    clahe_blend_kernel<T, kHold, false><<<grid, block, 0, stream>>>(f, l, p.blend_rows, scratch);
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

  int device = 0, optin = 0;
  STARSIFT_CUDA_TRY(cudaGetDevice(&device));
  STARSIFT_CUDA_TRY(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const int shared_limit = std::min(optin, kMaxShared);

  const Frame f{in.data, out.data, in.stride, out.stride};
  auto* counts = static_cast<std::uint16_t*>(scratch.data);
  if (in.format == PixelFormat::Gray8)
    return launch<std::uint8_t, false>(l, p, f, counts, shared_limit, stream);
  if (l.bits == 16) return launch<std::uint16_t, false>(l, p, f, counts, shared_limit, stream);
  return launch<std::uint16_t, true>(l, p, f, counts, shared_limit, stream);
}

}  // namespace starsift::cuda
