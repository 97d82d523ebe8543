// SPDX-License-Identifier: LGPL-2.1-or-later
// Detection's kernels: the steps of DetectState (pipeline/detect/reference.cpp) as passes on
// one stream, between them the labelling of labels.cuh. Compiled without fused multiply-add
// (CMakeLists.txt), so the per-pixel float arithmetic (background blend, filter, significance)
// rounds as the CPU reference's does, operation for operation.
//
// The frame is read where it lies: no float copy of it, no residual plane. The background
// tiles are clipped from the input; the mask pass subtracts the blended background and filters,
// in registers for the filters of radius 0 and 1, from a shared-memory tile for the Gaussian;
// the sums pass recomputes value minus background at the objects' pixels only. The
// per-component passes skip 16-pixel runs whose mask is empty with one 16-byte load, and the
// kept-object scan covers the components the frame has, not the most it could have.
#include <cub/cub.cuh>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cuda/common/launch_limits.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/detect/detect.cuh"
#include "cuda/detect/detect_frame.cuh"
#include "cuda/detect/labels.cuh"
#include "cuda/device_query.hpp"
#include "pipeline/detect/background_mesh.hpp"
#include "pipeline/detect/blend.hpp"
#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/line_channel.hpp"
#include "pipeline/detect/object_sums.hpp"
#include "pipeline/stage_result.hpp"

namespace starsift::cuda {

namespace {

using namespace detect_pass;

constexpr int kRun = 16;      // pixels of a row one thread takes in the sums passes
constexpr int kBandRows = 4;  // rows of the counting pass's bands (BandWalk)
constexpr int kMaxTaps =
    (2 * DetectParams::kMaxFilterRadius + 1) * (2 * DetectParams::kMaxFilterRadius + 1);
constexpr int kScanBlocks = 128;  // blocks of the kept-object scan, whatever the count
constexpr int kScanThreads = 256;
// Components of at least this many pixels are summed as large ones (see sums_kernel).
constexpr std::uint32_t kLargeObject = 256;
constexpr int kRunBlocksPerSm = 8;  // the per-component passes' grid: full residency, no more
constexpr int kClearBlocks = 264;   // two per SM of an H100: the clearing loops stride over them
// The large objects' sums pass (128 registers a thread, two blocks an SM): a grid of what is
// resident at once, so that its slowest runs' latency is paid in one wave, not in four.
constexpr int kLargeBlocksPerSm = 2;
constexpr int kCatalogueThreads = 128;  // records a catalogue block finishes at once
constexpr int kCatalogueBlocksPerSm = 4;

// A tile's clipping as clipped_stats() goes: the latest mean and sigma, the bounds of the next
// round, the count of the last one, and whether it has stopped (nothing within the bounds, or
// nothing more clipped).
struct TileState {
  double mean, sigma, lo, hi;
  unsigned long long previous;
  int done;
};
constexpr TileState kTileStart{0.0, 0.0, -HUGE_VAL, HUGE_VAL, 0ull, 0};
struct Partial {
  double sum, sum2;
  unsigned long long n;
};
// One catalogue record's sums (ObjectSums, with atomics-friendly fields). Every field's empty
// value is 0, so clearing the records is one memset: the box is kept as maxima of
// kBoxOrigin - xmin, kBoxOrigin - ymin, xmax + 1 and ymax + 1, the peak as its key.
struct DeviceSums {
  double flux, var, rx, ry, rxx, ryy, rxy, vx, vy, vxx, vyy, ux, uy, uxx, uyy, uxy;
  unsigned long long peak;  // peak_key(); 0: none
  unsigned int npix;
  int xmin_neg, xmax_1, ymin_neg, ymax_1;
};
constexpr int kBoxOrigin = 0x7fffffff;

// The small buffers, carved from one allocation (DetectBuffers::small_).
struct Small {
  TileState* tiles;
  Partial* partials;
  float* taps;
  float* tile_mean;  // the tiles' mean and sigma rounded to float: what the blend reads
  float* tile_sigma;
  unsigned long long* sigma_max;  // the largest tile sigma, a double's bits (atomicMax)
  std::uint32_t* components;      // launch_labels()' count
  std::uint32_t* scan_totals;     // kept objects per scan block
  std::uint32_t* any_large;       // whether the frame has an object of >= kLargeObject pixels
  // A bit per run of kRun pixels (run_bit_words()), set where the run holds a pixel of a large
  // object: sums_kernel<false> writes every word each frame, sums_kernel<true> reads them and
  // visits only those runs.
  std::uint32_t* large_runs;
  // Each column's and row's place in the mesh (mesh_locate()), worked out at allocation: the
  // mesh's geometry is fixed, and locating per pixel took divisions on every pass.
  int* col_tile;
  float* col_weight;
  int* row_tile;
  float* row_weight;
};
std::size_t align256(std::size_t b) {
  return (b + 255) / 256 * 256;
}

// The per-component passes walk the frame grid-stride over a grid of a few blocks per SM, so
// that what a thread or a block adds up for a large object (a frame-filling one, or the
// component that percolates through a noisy mask) reaches global memory once per block:
// same-address atomics serialise in the L2, and a million of them cost ~100 ms where a
// thousand cost microseconds. A thread takes a band of kRun columns and kRows rows at a time;
// a warp's 32 bands lie side by side, so each of its row loads of the mask is 512 contiguous
// bytes.
template <int kRows>
struct Walk {
  long long total;  // bands in the frame
  int per_row;      // bands per band row
  __host__ __device__ static Walk of(int width, int height) {
    const int per_row = (width + kRun - 1) / kRun;
    const int rows = (height + kRows - 1) / kRows;
    return {static_cast<long long>(per_row) * rows, per_row};
  }
  // The top-left pixel of band t.
  __device__ void origin(long long t, int& x0, int& y0) const {
    const int row = static_cast<int>(t / per_row);
    x0 = static_cast<int>(t - static_cast<long long>(row) * per_row) * kRun;
    y0 = row * kRows;
  }
  __device__ static long long first() {
    return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  }
  __device__ static long long stride() { return static_cast<long long>(gridDim.x) * blockDim.x; }
};

// The counting pass takes bands of kBandRows rows: a star's rows then add up in the thread's
// slots before an atomic (22 us instead of 27 on an H200's 4096^2 star field of 52 184
// objects).
using BandWalk = Walk<kBandRows>;
// The sums passes take a run of one row a thread, not a band: a thread's pixels are summed one
// after another, each after its loads, so a band's four or eight rows in one thread made them
// slower (a streak's sums took twice as long), and the fewer atomics did not make up for it.
using RunWalk = Walk<1>;

// Words of a bit per run of kRun pixels (RunWalk's runs: whole runs per row, rows after rows).
std::size_t run_bit_words(int width, int height) {
  return static_cast<std::size_t>((RunWalk::of(width, height).total + 31) / 32);
}
// The one size table of Small: with base == nullptr only the total.
std::size_t carve(std::byte* base, int tiles, int splits, int width, int height, Small* s) {
  const std::size_t sizes[] = {
      sizeof(TileState) * tiles, sizeof(Partial) * tiles * splits,
      sizeof(float) * kMaxTaps,  sizeof(float) * tiles,
      sizeof(float) * tiles,     sizeof(unsigned long long),
      sizeof(std::uint32_t),     sizeof(std::uint32_t) * kScanBlocks,
      sizeof(std::uint32_t),     sizeof(int) * width,
      sizeof(float) * width,     sizeof(int) * height,
      sizeof(float) * height,    sizeof(std::uint32_t) * run_bit_words(width, height)};
  void* slots[std::size(sizes)];
  std::size_t offset = 0;
  for (std::size_t k = 0; k < std::size(sizes); ++k) {
    slots[k] = base ? base + offset : nullptr;
    offset += align256(sizes[k]);
  }
  if (s) {
    s->tiles = static_cast<TileState*>(slots[0]);
    s->partials = static_cast<Partial*>(slots[1]);
    s->taps = static_cast<float*>(slots[2]);
    s->tile_mean = static_cast<float*>(slots[3]);
    s->tile_sigma = static_cast<float*>(slots[4]);
    s->sigma_max = static_cast<unsigned long long*>(slots[5]);
    s->components = static_cast<std::uint32_t*>(slots[6]);
    s->scan_totals = static_cast<std::uint32_t*>(slots[7]);
    s->any_large = static_cast<std::uint32_t*>(slots[8]);
    s->col_tile = static_cast<int*>(slots[9]);
    s->col_weight = static_cast<float*>(slots[10]);
    s->row_tile = static_cast<int*>(slots[11]);
    s->row_weight = static_cast<float*>(slots[12]);
    s->large_runs = static_cast<std::uint32_t*>(slots[13]);
  }
  return offset;
}
Small carve(std::byte* base, int tiles, int splits, int width, int height) {
  Small s;
  carve(base, tiles, splits, width, height, &s);
  return s;
}

// Orders floats as unsigned keys (larger float, larger key), for an atomicMax of the peak.
__device__ __forceinline__ std::uint32_t float_key(float f) {
  const std::uint32_t b = __float_as_uint(f);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ float key_float(std::uint32_t k) {
  return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}
// The peak: largest value, then the first pixel in raster order.
__device__ __forceinline__ unsigned long long peak_key(float r, std::uint32_t raster) {
  return (static_cast<unsigned long long>(float_key(r)) << 32) | (0xffffffffu - raster);
}

// ImageView::row_as() is host code: the kernels' row of an output view.
template <class T>
__device__ __forceinline__ T* out_row(ImageView v, int y) {
  return reinterpret_cast<T*>(v.data + static_cast<std::ptrdiff_t>(y) * v.stride);
}

// ---- Background -----------------------------------------------------------------------------
//
// Integer frames are clipped with integer sums: exact, so equal to the CPU's double sums
// whatever the order (and the bounds' test on integers is exact too). Float frames sum in
// double, to the rounding of the order.

// The clipping bounds [lo, hi] as a test on samples: integers are within them when they lie
// in [ceil(lo), floor(hi)], one unsigned comparison (v - first <= span); floats compare in
// double, as the reference does.
struct Bounds {
  double lo, hi;
  std::uint32_t first, span;
  __device__ static Bounds of(double lo, double hi) {
    constexpr double kTop = 4294967295.0;
    const double a = ceil(fmax(lo, 0.0)), b = floor(fmin(hi, kTop));
    if (!(a <= b)) return {lo, hi, 0xffffffffu, 0u};  // nothing within: no sample is 2^32 - 1
    const auto first = static_cast<std::uint32_t>(a);
    return {lo, hi, first, static_cast<std::uint32_t>(b) - first};
  }
  __device__ bool within(std::uint32_t v) const { return v - first <= span; }
  __device__ bool within(float v) const { return !(v < lo || v > hi); }
};

template <bool kInteger>
struct ClipSample;
// Integer samples (GRAY8, GRAY16): a thread's sum in 32 bits (at most kSharedTilePixels / 256
// = 48 samples of < 2^16 per thread in the shared kernel), squares in 64.
template <>
struct ClipSample<true> {
  using Value = std::uint32_t;
  using ThreadSum = std::uint32_t;
  using Sum = unsigned long long;
  __device__ static Value read(const Frame& f, int x, int y) {
    const std::byte* row = f.in.data + y * f.in.stride;
    return f.in.format == PixelFormat::Gray8 ? reinterpret_cast<const std::uint8_t*>(row)[x]
                                             : reinterpret_cast<const std::uint16_t*>(row)[x];
  }
  __device__ static Sum square(Value v) { return static_cast<Sum>(v) * v; }
};
template <>
struct ClipSample<false> {
  using Value = float;
  using ThreadSum = double;
  using Sum = double;
  __device__ static Value read(const Frame& f, int x, int y) { return value_at(f, x, y); }
  __device__ static Sum square(Value v) { return static_cast<double>(v) * v; }
};

// One round's rule, as clipped_stats() has it: the state from the sums of the values within
// the previous bounds.
__device__ void clip_round(TileState& st, double sum, double sum2, unsigned long long n,
                           double clip) {
  if (st.done) return;
  if (n == 0) {  // nothing within the bounds: the previous round stands
    st.done = 1;
    return;
  }
  st.mean = sum / static_cast<double>(n);
  const double var = sum2 / static_cast<double>(n) - st.mean * st.mean;
  st.sigma = sqrt(var > 0.0 ? var : 0.0);
  if (n == st.previous) {  // nothing more was clipped
    st.done = 1;
    return;
  }
  st.previous = n;
  st.lo = st.mean - clip * st.sigma;
  st.hi = st.mean + clip * st.sigma;
}

// A tile's result for the passes after it: mean and sigma rounded to float (what the blends
// read), and its sigma into the frame's largest (non-negative doubles order as their bits).
__device__ __forceinline__ void publish_tile(const Frame& f, int t, const TileState& st,
                                             float* tile_mean, float* tile_sigma,
                                             unsigned long long* sigma_max) {
  tile_mean[t] = static_cast<float>(st.mean);
  tile_sigma[t] = static_cast<float>(st.sigma);
  atomicMax(sigma_max, static_cast<unsigned long long>(__double_as_longlong(st.sigma)));
}

template <class T>
__device__ __forceinline__ T warp_sum(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

__global__ void tiles_init_kernel(TileState* tiles, int count) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < count) tiles[t] = kTileStart;
}

// One block: rows s, s + splits, ... of tile blockIdx.x, the values within the tile's bounds
// (tiles too large for tile_clip_shared_kernel, e.g. a global background).
template <bool kInteger>
__global__ void tile_partial_kernel(Frame f, const TileState* tiles, Partial* partials,
                                    int splits) {
  using S = ClipSample<kInteger>;
  const int t = blockIdx.x, s = blockIdx.y;
  const int i = t % f.ax.count, j = t / f.ax.count;
  const TileState st = tiles[t];
  if (st.done) return;  // tile_finalize_kernel will not read this round's partials
  const Bounds b = Bounds::of(st.lo, st.hi);
  typename S::Sum sum = 0, sum2 = 0;
  unsigned long long n = 0;
  for (int y = f.ay.begin(j) + s; y < f.ay.end(j); y += splits) {
    for (int x = f.ax.begin(i) + threadIdx.x; x < f.ax.end(i); x += blockDim.x) {
      const typename S::Value v = S::read(f, x, y);
      if (!b.within(v)) continue;
      sum += v;
      sum2 += S::square(v);
      ++n;
    }
  }
  using Reduce = cub::BlockReduce<typename S::Sum, 256>;
  using ReduceN = cub::BlockReduce<unsigned long long, 256>;
  __shared__ typename Reduce::TempStorage t1;
  __shared__ typename Reduce::TempStorage t2;
  __shared__ typename ReduceN::TempStorage t3;
  const typename S::Sum bsum = Reduce(t1).Sum(sum);
  const typename S::Sum bsum2 = Reduce(t2).Sum(sum2);
  const unsigned long long bn = ReduceN(t3).Sum(n);
  if (threadIdx.x == 0) {
    partials[t * splits + s] = {static_cast<double>(bsum), static_cast<double>(bsum2), bn};
  }
}

// One round of sigma clipping per tile from its partials.
__global__ void tile_finalize_kernel(TileState* tiles, const Partial* partials, int count,
                                     int splits, double clip) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= count) return;
  double sum = 0.0, sum2 = 0.0;
  unsigned long long n = 0;
  for (int s = 0; s < splits; ++s) {
    sum += partials[t * splits + s].sum;
    sum2 += partials[t * splits + s].sum2;
    n += partials[t * splits + s].n;
  }
  clip_round(tiles[t], sum, sum2, n, clip);
}

// Tiles of at most kSharedTilePixels: the tile is read once into shared memory and clipped
// there, every round, by one block (a round over global memory per tile cost ~140 us at
// 4096^2 with 64 px tiles, five times). Same rule as tile_partial + tile_finalize.
constexpr int kSharedTilePixels = 12 * 1024;  // 48 KB: the default limit of dynamic shared memory

template <bool kInteger>
__global__ void tile_clip_shared_kernel(Frame f, TileState* tiles, int rounds, double clip,
                                        float* tile_mean, float* tile_sigma,
                                        unsigned long long* sigma_max) {
  using S = ClipSample<kInteger>;
  using Value = typename S::Value;
  using Sum = typename S::Sum;
  extern __shared__ std::uint32_t words[];  // 4-byte values of either kind
  Value* values = reinterpret_cast<Value*>(words);
  const int t = blockIdx.x;
  const int i = t % f.ax.count, j = t / f.ax.count;
  const int x0 = f.ax.begin(i), tw = f.ax.end(i) - x0;
  const int y0 = f.ay.begin(j), th = f.ay.end(j) - y0;
  const int n = tw * th;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
  for (int dy = warp; dy < th; dy += warps) {  // a warp per row: no division per sample
    for (int dx = lane; dx < tw; dx += 32) values[dy * tw + dx] = S::read(f, x0 + dx, y0 + dy);
  }
  // Each round: the block's sums by warp shuffles and one pass over the warps' partials (two
  // barriers a round; three CUB block reductions cost twice the time).
  __shared__ Sum warp_sum1[32], warp_sum2[32];
  __shared__ unsigned int warp_n[32];
  __shared__ TileState st;
  if (threadIdx.x == 0) st = kTileStart;
  __syncthreads();
  for (int round = 0; round < rounds && !st.done; ++round) {
    const Bounds b = Bounds::of(st.lo, st.hi);
    typename S::ThreadSum part = 0;
    Sum sum2 = 0;
    unsigned int count = 0;
    for (int k = threadIdx.x; k < n; k += blockDim.x) {
      const Value v = values[k];
      if (!b.within(v)) continue;
      part += v;
      sum2 += S::square(v);
      ++count;
    }
    const Sum sum = warp_sum(static_cast<Sum>(part));
    sum2 = warp_sum(sum2);
    count = warp_sum(count);
    if (lane == 0) {
      warp_sum1[warp] = sum;
      warp_sum2[warp] = sum2;
      warp_n[warp] = count;
    }
    __syncthreads();  // also: every thread has read st's bounds before thread 0 moves them
    if (threadIdx.x == 0) {
      Sum bsum = 0, bsum2 = 0;
      unsigned long long bn = 0;
      for (int w = 0; w < warps; ++w) {
        bsum += warp_sum1[w];
        bsum2 += warp_sum2[w];
        bn += warp_n[w];
      }
      clip_round(st, static_cast<double>(bsum), static_cast<double>(bsum2), bn, clip);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    tiles[t] = st;
    publish_tile(f, t, st, tile_mean, tile_sigma, sigma_max);
  }
}

__global__ void tiles_publish_kernel(Frame f, const TileState* tiles, int count, float* tile_mean,
                                     float* tile_sigma, unsigned long long* sigma_max) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < count) publish_tile(f, t, tiles[t], tile_mean, tile_sigma, sigma_max);
}

// ---- The line channel (pipeline/detect/line_channel.hpp) ------------------------------------

constexpr int kLineW = 32, kLineH = 32;  // the output tile of a line block
constexpr int kLineThreadsY = 8;         // its threads: 32 x 8, four rows each
constexpr int kLineRows = kLineH / kLineThreadsY;

// The line bank on the device: orientation o's taps at offsets + o * stride as offsets in the
// block's tile (dy * (kLineW + 2 radius) + dx), in pairs, a stride even so that each pair is
// one 4-byte load; then each orientation's 1 / norm.
struct LineBankLayout {
  int length, radius, orientations, stride;
  __host__ __device__ constexpr std::size_t offsets_bytes() const {
    return sizeof(short) * orientations * stride;
  }
  __host__ __device__ constexpr std::size_t bytes() const {
    return offsets_bytes() + sizeof(float) * orientations;
  }
  __host__ __device__ constexpr int tile_side_x() const { return kLineW + 2 * radius; }
  __host__ __device__ constexpr std::size_t shared_bytes() const {
    return sizeof(float) * tile_side_x() * (kLineH + 2 * radius) + bytes();
  }
};
constexpr LineBankLayout line_layout(int length) {
  return {length, length / 2, length + 1, (length + 1) / 2 * 2};
}
// The longest line's tile and bank fit the shared memory a kernel has without opting in.
static_assert(line_layout(DetectParams::kMaxLineLength).shared_bytes() <= 48 * 1024);

// Sets the mask where the line significance passes `threshold`. The block reads its tile of
// the capped significance and a halo of `radius` (0 outside the frame, as the CPU's margin) and
// the bank into shared memory; each thread takes four rows of one column, so each pair of
// offsets it loads serves eight taps. The sums go in the CPU's order (line_block()): the even
// taps into one sum, the odd into another, (even + odd) / norm, the best orientation kept; the
// kernels are compiled without fused multiply-add, so the bits are the CPU's.
__global__ void __launch_bounds__(kLineW* kLineThreadsY)
    line_kernel(Frame f, const std::byte* bank, LineBankLayout layout, float threshold) {
  extern __shared__ float line_shared[];
  const int r = layout.radius, sw = layout.tile_side_x(), sh = kLineH + 2 * r;
  float* tile = line_shared;
  auto* offsets = reinterpret_cast<short*>(tile + sw * sh);
  auto* inv_norm =
      reinterpret_cast<float*>(reinterpret_cast<std::byte*>(offsets) + layout.offsets_bytes());
  const int bx = blockIdx.x * kLineW, by = blockIdx.y * kLineH;
  const int thread = threadIdx.y * kLineW + threadIdx.x;
  constexpr int kThreads = kLineW * kLineThreadsY;
  for (int k = thread; k < sw * sh; k += kThreads) {
    const int ly = k / sw, lx = k - ly * sw;
    const int x = bx - r + lx, y = by - r + ly;
    const bool inside = x >= 0 && y >= 0 && x < f.width && y < f.height;
    tile[k] = inside ? f.capped[y * f.capped_pitch + x] : 0.0f;
  }
  // The bank: 4-byte words (its size is a multiple of 4: an even stride of shorts, floats).
  const auto* words = reinterpret_cast<const std::uint32_t*>(bank);
  auto* shared_words = reinterpret_cast<std::uint32_t*>(offsets);
  for (int k = thread; k < static_cast<int>(layout.bytes() / 4); k += kThreads) {
    shared_words[k] = words[k];
  }
  __syncthreads();
  const int x = bx + threadIdx.x;
  if (x >= f.width) return;
  float best[kLineRows];
#pragma unroll
  for (int i = 0; i < kLineRows; ++i) best[i] = -HUGE_VALF;
  const float* origin = tile + (threadIdx.y + r) * sw + threadIdx.x + r;
  const int pairs = layout.length / 2;
  for (int o = 0; o < layout.orientations; ++o) {
    const short2* pair = reinterpret_cast<const short2*>(offsets + o * layout.stride);
    float even[kLineRows] = {}, odd[kLineRows] = {};
    for (int k = 0; k < pairs; ++k) {
      const short2 d = pair[k];
#pragma unroll
      for (int i = 0; i < kLineRows; ++i) {
        even[i] += origin[i * kLineThreadsY * sw + d.x];
        odd[i] += origin[i * kLineThreadsY * sw + d.y];
      }
    }
    if (layout.length % 2 == 1) {
      const short last = pair[pairs].x;
#pragma unroll
      for (int i = 0; i < kLineRows; ++i) even[i] += origin[i * kLineThreadsY * sw + last];
    }
    const float scale = inv_norm[o];
#pragma unroll
    for (int i = 0; i < kLineRows; ++i) {
      const float v = (even[i] + odd[i]) * scale;
      best[i] = best[i] < v ? v : best[i];  // std::max(best, v)
    }
  }
#pragma unroll
  for (int i = 0; i < kLineRows; ++i) {
    const int y = by + threadIdx.y + i * kLineThreadsY;
    // Only set: the point channel's pixels stay. Their z for the merged flag (the line channel
    // runs in sigma units).
    if (y < f.height && best[i] > threshold) {
      f.mask[y * f.mask_pitch + x] = 1;
      f.z[y * f.z_pitch + x] = residual_at(f, x, y) / sigma_at(f, x, y);
    }
  }
}

// ---- Per-component passes -------------------------------------------------------------------

// The foreground of the run of kRun pixels at (x0, y), a bit per pixel: one aligned 16-byte
// load of the mask (x0 is a multiple of 16, the pitch too, and the padding past the width is
// 0), so that an empty run costs no label reads and a run's labels are read only where set.
// The set bytes of a mask word as four bits, byte i as bit i: __vsetne4 gives 1 in each byte
// that is not 0, then the four bytes' low bits side by side.
__device__ __forceinline__ std::uint32_t mask_bits4(std::uint32_t w) {
  const std::uint32_t b = __vsetne4(w, 0u);
  return (b | b >> 7 | b >> 14 | b >> 21) & 0xfu;
}

__device__ __forceinline__ std::uint32_t run_pixels(const Frame& f, int x0, int y) {
  const uint4 m = *reinterpret_cast<const uint4*>(f.mask + y * f.mask_pitch + x0);
  return mask_bits4(m.x) | mask_bits4(m.y) << 4 | mask_bits4(m.z) << 8 | mask_bits4(m.w) << 12;
}

// Calls visit(dx, dy, label) for each foreground pixel of the band at (x0, y0), in raster
// order; dx, dy are its place in the band.
template <class Visit>
__device__ __forceinline__ void for_band_pixels(const Frame& f, int x0, int y0, Visit&& visit) {
  for (int dy = 0; dy < kBandRows && y0 + dy < f.height; ++dy) {
    const std::uint32_t* row = f.labels + (y0 + dy) * f.label_pitch + x0;
    for (std::uint32_t bits = run_pixels(f, x0, y0 + dy); bits != 0; bits &= bits - 1) {
      const int dx = __ffs(bits) - 1;
      visit(dx, dy, row[dx]);
    }
  }
}

// Adds `n` to npix[l] for each lane's (l, n), one atomic per distinct label of the warp.
__device__ __forceinline__ void add_counts_by_warp(std::uint32_t* npix, std::uint32_t l,
                                                   std::uint32_t n) {
  const std::uint32_t peers = __match_any_sync(0xffffffffu, l);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  // Turing (sm_75) has no __reduce_add_sync: each lane adds its peers' n, one shuffle per peer
  // (the same integer sum in another order).
  std::uint32_t total = 0;
  for (std::uint32_t rest = peers; rest != 0; rest &= rest - 1)
    total += __shfl_sync(peers, n, __ffs(rest) - 1);
#else
  const std::uint32_t total = __reduce_add_sync(peers, n);
#endif
  if (l != 0 && (threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&npix[l], total);
}

// npix per component. A thread counts its pixels in two slots: a label not in them evicts the
// smaller count (to an atomic), so a large component interleaved with small ones (a noisy
// mask) stays in its slot; the warp then adds up its slots label by label.
__global__ void __launch_bounds__(256) count_kernel(Frame f, std::uint32_t* npix) {
  const BandWalk walk = BandWalk::of(f.width, f.height);
  std::uint32_t l1 = 0, n1 = 0, l2 = 0, n2 = 0;
  for (long long t = BandWalk::first(); t < walk.total; t += BandWalk::stride()) {
    int x0, y0;
    walk.origin(t, x0, y0);
    for_band_pixels(f, x0, y0, [&](int, int, std::uint32_t l) {
      if (l == l1) {
        ++n1;
      } else if (l == l2) {
        ++n2;
      } else {
        if (n1 < n2) {  // slot 1 keeps the larger count
          const std::uint32_t tl = l1, tn = n1;
          l1 = l2, n1 = n2, l2 = tl, n2 = tn;
        }
        if (l2 != 0) atomicAdd(&npix[l2], n2);
        l2 = l;
        n2 = 1;
      }
    });
  }
  add_counts_by_warp(npix, l1, n1);
  add_counts_by_warp(npix, l2, n2);
}

// ---- The catalogue ids: a scan of "kept" over the frame's components ------------------------
//
// kept[c] = the kept components among 0..c (kept: npix >= min-area), so a kept component's
// catalogue id is kept[c] and the frame's objects are kept[C]. The count C is on the device,
// so the scan is reduce-then-scan over a fixed grid: each of kScanBlocks blocks takes one
// chunk of 0..C; a frame of a few thousand objects scans a few thousand entries, not the
// million-entry bound a frame could reach.

__device__ __forceinline__ void scan_chunk(std::uint32_t components, std::uint32_t block,
                                           std::uint32_t& begin, std::uint32_t& end) {
  const std::uint32_t entries = components + 1;  // 0..C
  const std::uint32_t chunk = (entries + kScanBlocks - 1) / kScanBlocks;
  begin = min(block * chunk, entries);
  end = min(begin + chunk, entries);
}
__device__ __forceinline__ std::uint32_t kept_flag(const std::uint32_t* npix, std::uint32_t c,
                                                   std::uint32_t min_area) {
  return (c > 0 && npix[c] >= min_area) ? 1u : 0u;
}

__global__ void __launch_bounds__(kScanThreads)
    kept_totals_kernel(const std::uint32_t* npix, const std::uint32_t* components,
                       std::uint32_t min_area, std::uint32_t* totals, std::uint32_t* any_large) {
  std::uint32_t begin, end;
  scan_chunk(*components, blockIdx.x, begin, end);
  std::uint32_t n = 0;
  bool large = false;
  for (std::uint32_t c = begin + threadIdx.x; c < end; c += kScanThreads) {
    n += kept_flag(npix, c, min_area);
    large = large || (c > 0 && npix[c] >= kLargeObject);
  }
  if (__any_sync(0xffffffffu, large) && (threadIdx.x & 31) == 0) *any_large = 1;
  using Reduce = cub::BlockReduce<std::uint32_t, kScanThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  const std::uint32_t total = Reduce(tmp).Sum(n);
  if (threadIdx.x == 0) totals[blockIdx.x] = total;
}

__global__ void __launch_bounds__(kScanThreads)
    kept_scan_kernel(const std::uint32_t* npix, const std::uint32_t* components,
                     std::uint32_t min_area, const std::uint32_t* totals, std::uint32_t* kept) {
  using Reduce = cub::BlockReduce<std::uint32_t, kScanThreads>;
  using Scan = cub::BlockScan<std::uint32_t, kScanThreads>;
  __shared__ union {
    typename Reduce::TempStorage reduce;
    typename Scan::TempStorage scan;
  } tmp;
  __shared__ std::uint32_t carry;
  static_assert(kScanBlocks <= kScanThreads, "one thread per earlier block's total");
  const std::uint32_t before =
      Reduce(tmp.reduce).Sum(threadIdx.x < blockIdx.x ? totals[threadIdx.x] : 0u);
  if (threadIdx.x == 0) carry = before;
  std::uint32_t begin, end;
  scan_chunk(*components, blockIdx.x, begin, end);
  for (std::uint32_t base = begin; base < end; base += kScanThreads) {
    __syncthreads();  // carry written; tmp free again
    const std::uint32_t c = base + threadIdx.x;
    std::uint32_t inclusive, step;
    Scan(tmp.scan).InclusiveSum(c < end ? kept_flag(npix, c, min_area) : 0u, inclusive, step);
    const std::uint32_t offset = carry;
    if (c < end) kept[c] = offset + inclusive;
    __syncthreads();  // every thread has read carry
    if (threadIdx.x == 0) carry = offset + step;
  }
}

// The catalogue id of component l: its place among the kept ones, 0 when dropped.
__device__ __forceinline__ std::uint32_t catalogue_id(std::uint32_t l, const std::uint32_t* npix,
                                                      const std::uint32_t* kept,
                                                      std::uint32_t min_area) {
  return (l != 0 && npix[l] >= min_area) ? kept[l] : 0u;
}

// Clears npix of the frame's components (their count from the labelling, on the device).
__global__ void clear_npix_kernel(std::uint32_t* npix, const std::uint32_t* components,
                                  std::uint32_t* any_large) {
  const std::uint32_t entries = *components + 1;
  if (blockIdx.x == 0 && threadIdx.x == 0) *any_large = 0;
  for (std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < entries;
       c += gridDim.x * blockDim.x) {
    npix[c] = 0;
  }
}

// The frame's kept objects (see kept_scan_kernel).
__device__ __forceinline__ std::uint32_t total_kept(const std::uint32_t* kept,
                                                    const std::uint32_t* components) {
  return kept[*components];
}

// Clears the records the frame will fill (its kept objects, up to the capacity) and their merged
// words: every field's empty value is 0, so as 8-byte words, coalesced; one launch for both.
__global__ void clear_sums_kernel(DeviceSums* sums, std::uint32_t* merged,
                                  const std::uint32_t* kept, const std::uint32_t* components,
                                  std::uint32_t capacity) {
  static_assert(sizeof(DeviceSums) % 8 == 0, "cleared as 8-byte words");
  const std::uint32_t total = total_kept(kept, components);
  const std::uint32_t records = total < capacity ? total : capacity;
  const std::size_t words = static_cast<std::size_t>(records) * (sizeof(DeviceSums) / 8);
  auto* w = reinterpret_cast<unsigned long long*>(sums);
  const std::size_t first = blockIdx.x * blockDim.x + threadIdx.x;
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t k = first; k < words; k += step) w[k] = 0;
  for (std::size_t k = first; k < records; k += step) merged[k] = 0;
}

// A record's DeviceSums as ObjectSums (finalize_object()'s input).
__device__ __forceinline__ ObjectSums to_object(const DeviceSums& d, int width) {
  ObjectSums s;
  s.npix = d.npix;
  s.xmin = kBoxOrigin - d.xmin_neg, s.xmax = d.xmax_1 - 1;
  s.ymin = kBoxOrigin - d.ymin_neg, s.ymax = d.ymax_1 - 1;
  s.flux = d.flux, s.var = d.var, s.rx = d.rx, s.ry = d.ry, s.rxx = d.rxx, s.ryy = d.ryy;
  s.rxy = d.rxy, s.vx = d.vx, s.vy = d.vy, s.vxx = d.vxx, s.vyy = d.vyy;
  s.ux = d.ux, s.uy = d.uy, s.uxx = d.uxx, s.uyy = d.uyy, s.uxy = d.uxy;
  s.peak = key_float(static_cast<std::uint32_t>(d.peak >> 32));
  const std::uint32_t raster = 0xffffffffu - static_cast<std::uint32_t>(d.peak & 0xffffffffu);
  s.xpeak = static_cast<std::int32_t>(raster % static_cast<std::uint32_t>(width));
  s.ypeak = static_cast<std::int32_t>(raster / static_cast<std::uint32_t>(width));
  return s;
}

__device__ void flush(const DeviceSums& a, DeviceSums* sums, std::uint32_t id) {
  DeviceSums& d = sums[id - 1];
  atomicAdd(&d.flux, a.flux);
  atomicAdd(&d.var, a.var);
  atomicAdd(&d.rx, a.rx);
  atomicAdd(&d.ry, a.ry);
  atomicAdd(&d.rxx, a.rxx);
  atomicAdd(&d.ryy, a.ryy);
  atomicAdd(&d.rxy, a.rxy);
  atomicAdd(&d.vx, a.vx);
  atomicAdd(&d.vy, a.vy);
  atomicAdd(&d.vxx, a.vxx);
  atomicAdd(&d.vyy, a.vyy);
  atomicAdd(&d.ux, a.ux);
  atomicAdd(&d.uy, a.uy);
  atomicAdd(&d.uxx, a.uxx);
  atomicAdd(&d.uyy, a.uyy);
  atomicAdd(&d.uxy, a.uxy);
  atomicMax(&d.peak, a.peak);
  atomicAdd(&d.npix, a.npix);
  atomicMax(&d.xmin_neg, a.xmin_neg);
  atomicMax(&d.xmax_1, a.xmax_1);
  atomicMax(&d.ymin_neg, a.ymin_neg);
  atomicMax(&d.ymax_1, a.ymax_1);
}

// Adds b's sums into a (a step of warp_reduce(), and the block's warps' slots).
__device__ void add_sums(DeviceSums& a, const DeviceSums& b) {
  a.flux += b.flux, a.var += b.var, a.rx += b.rx, a.ry += b.ry, a.rxx += b.rxx;
  a.ryy += b.ryy, a.rxy += b.rxy, a.vx += b.vx, a.vy += b.vy, a.vxx += b.vxx, a.vyy += b.vyy;
  a.ux += b.ux, a.uy += b.uy, a.uxx += b.uxx, a.uyy += b.uyy, a.uxy += b.uxy;
  a.peak = b.peak > a.peak ? b.peak : a.peak;
  a.npix += b.npix;
  a.xmin_neg = max(a.xmin_neg, b.xmin_neg), a.xmax_1 = max(a.xmax_1, b.xmax_1);
  a.ymin_neg = max(a.ymin_neg, b.ymin_neg), a.ymax_1 = max(a.ymax_1, b.ymax_1);
}

// Adds the lanes' sums into lane 0's (all 32 lanes hold sums of the same record): each step
// shuffles the record down as 32-bit words and adds it with add_sums(), so the fields are
// listed once.
__device__ void warp_reduce(DeviceSums& a) {
  constexpr int kWords = sizeof(DeviceSums) / sizeof(std::uint32_t);
  static_assert(sizeof(DeviceSums) % sizeof(std::uint32_t) == 0, "shuffled as 32-bit words");
  for (int o = 16; o > 0; o >>= 1) {
    std::uint32_t words[kWords];
    std::memcpy(words, &a, sizeof(DeviceSums));
#pragma unroll
    for (int k = 0; k < kWords; ++k) words[k] = __shfl_down_sync(0xffffffffu, words[k], o);
    DeviceSums b;
    std::memcpy(&b, words, sizeof(DeviceSums));
    add_sums(a, b);
  }
}

// One object's pixels within one run (a row, kRun pixels from x0), summed about the run's start:
// the sums add_pixel() makes, taken apart by what varies in a run (only dx = x - x0; y is the
// row's). A product of a float and dx (< 16) or dx^2 is exact in double, so the part's sums are
// as exact as add_pixel()'s, on 12 registers where ObjectSums takes 32; part_sums() turns them
// into the record's terms.
struct RunPart {
  std::uint32_t n;
  int first, last;                // dx of the first and last pixel
  double r, rx, rxx, v, vx, vxx;  // sum r, r dx, r dx^2, v, v dx, v dx^2
  int ux, uxx;                    // sum dx, dx^2
  float peak;
  int peak_dx;
};

__device__ __forceinline__ void part_start(RunPart& p) {
  p.n = 0;
  p.r = p.rx = p.rxx = p.v = p.vx = p.vxx = 0.0;
  p.ux = p.uxx = 0;
  p.peak = -HUGE_VALF;
  p.peak_dx = 0;
}

// Pixels come in increasing dx, so the first of equal peaks (add_pixel()'s rule) is kept by >.
__device__ __forceinline__ void part_add(RunPart& p, int dx, float r, float v) {
  const double d = dx, dr = r, dv = v;
  if (p.n == 0) p.first = dx;
  p.last = dx;
  ++p.n;
  p.r += dr;
  p.rx += dr * d;
  p.rxx += dr * (d * d);
  p.v += dv;
  p.vx += dv * d;
  p.vxx += dv * (d * d);
  p.ux += dx;
  p.uxx += dx * dx;
  if (r > p.peak) {
    p.peak = r;
    p.peak_dx = dx;
  }
}

// The part's terms of the record, as the atomics take them: sum r x = x0 sum r + sum r dx, and
// so on (y is constant in a run).
__device__ DeviceSums part_sums(const RunPart& p, int x0, int y, int width) {
  const double X = x0, Y = y, n = p.n;
  const double r = p.r, rx = p.rx, rxx = p.rxx, v = p.v, vx = p.vx, vxx = p.vxx;
  const double ux = p.ux, uxx = p.uxx;  // exact
  DeviceSums a;
  a.flux = r;
  a.var = v;
  a.rx = X * r + rx;
  a.ry = Y * r;
  a.rxx = X * X * r + 2.0 * X * rx + rxx;
  a.ryy = Y * Y * r;
  a.rxy = Y * a.rx;
  a.vx = X * v + vx;
  a.vy = Y * v;
  a.vxx = X * X * v + 2.0 * X * vx + vxx;
  a.vyy = Y * Y * v;
  a.ux = X * n + ux;
  a.uy = Y * n;
  a.uxx = X * X * n + 2.0 * X * ux + uxx;
  a.uyy = Y * Y * n;
  a.uxy = Y * a.ux;
  a.peak = peak_key(p.peak, static_cast<std::uint32_t>(y) * static_cast<std::uint32_t>(width) +
                                static_cast<std::uint32_t>(x0 + p.peak_dx));
  a.npix = p.n;
  a.xmin_neg = kBoxOrigin - (x0 + p.first);
  a.xmax_1 = x0 + p.last + 1;
  a.ymin_neg = kBoxOrigin - y;
  a.ymax_1 = y + 1;
  return a;
}

__device__ __forceinline__ DeviceSums empty_sums() {
  DeviceSums a{};
  return a;
}

// A component's catalogue id and size class, looked up once per change of label: a run's
// pixels mostly belong to one object, and each lookup is two dependent global loads.
struct IdLookup {
  std::uint32_t label = 0, id = 0;
  bool large = false;
  __device__ void find(std::uint32_t l, const std::uint32_t* npix, const std::uint32_t* kept,
                       std::uint32_t min_area, std::uint32_t capacity) {
    if (l == label) return;
    label = l;
    id = catalogue_id(l, npix, kept, min_area);
    if (id > capacity) id = 0;
    large = id != 0 && npix[l] >= kLargeObject;
  }
};

// Each record's sums, grid-stride over the runs, in two launches: kLarge false
// takes the small objects' pixels, true the large ones' (>= kLargeObject pixels; it returns at
// once when the frame has none), so that neither holds both kinds of sums in registers (146
// registers together: one block of 256 threads per SM). A thread sums each object's pixels of
// a run in a RunPart; when the object changes or the run ends, a small object's part goes to its
// record with atomics (few pixels, few parts), and a large one's into a slot of double sums
// that stays across the thread's runs. At the end the warp adds up its lanes' slots of one large
// object, and the block its warps', so a frame-filling object costs one set of atomics per
// block. The value above the background and the variance of each object pixel are recomputed
// from the input. A warp takes 32 consecutive runs at a time: the small-object launch writes a
// word of `large_runs` for them (which of its runs hold a large object's pixel), and the
// large-object launch skips the words and runs without (a star field with a few streaks: the
// second launch reads a bit per run, not every object pixel's label again).
template <bool kLarge>
__global__ void __launch_bounds__(256)
    sums_kernel(Frame f, const std::uint32_t* npix, const std::uint32_t* kept,
                std::uint32_t min_area, std::uint32_t capacity, const std::uint32_t* any_large,
                std::uint32_t* large_runs, DeviceSums* sums) {
  constexpr int kWarps = 256 / 32;
  __shared__ DeviceSums warp_large[kLarge ? kWarps : 1];
  __shared__ std::uint32_t warp_large_id[kWarps];
  if (kLarge && *any_large == 0) return;
  const RunWalk walk = RunWalk::of(f.width, f.height);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  DeviceSums large = empty_sums();
  std::uint32_t large_id = 0;
  RunPart part;
  // Sums run t's pixels of this launch's kind; returns whether it holds a large object's pixel.
  auto run = [&](long long t) {
    int x0, y;
    walk.origin(t, x0, y);
    const std::uint32_t* row = f.labels + y * f.label_pitch + x0;
    IdLookup ids;
    std::uint32_t id = 0;
    bool has_large = false;
    // The part of object `id` ends: to its record, or into the large slot.
    auto emit = [&] {
      if (id == 0) return;
      const DeviceSums a = part_sums(part, x0, y, f.width);
      if (!kLarge) {
        flush(a, sums, id);
        return;
      }
      if (id != large_id) {
        if (large_id != 0) flush(large, sums, large_id);
        large = empty_sums();
        large_id = id;
      }
      add_sums(large, a);
    };
    for (std::uint32_t bits = run_pixels(f, x0, y); bits != 0; bits &= bits - 1) {
      const int dx = __ffs(bits) - 1;
      ids.find(row[dx], npix, kept, min_area, capacity);
      if (ids.id == 0) continue;
      has_large = has_large || ids.large;
      if (ids.large != kLarge) continue;
      if (ids.id != id) {
        emit();
        id = ids.id;
        part_start(part);
      }
      const float sigma = sigma_at(f, x0 + dx, y);
      part_add(part, dx, residual_at(f, x0 + dx, y), sigma * sigma);
    }
    emit();
    return has_large;
  };
  // The warp's runs are base + lane: base is a multiple of 32, and so is the stride.
  for (long long base = RunWalk::first() - lane; base < walk.total; base += RunWalk::stride()) {
    const long long t = base + lane;
    if (kLarge) {
      if (t < walk.total && (large_runs[base >> 5] >> lane & 1u)) run(t);
    } else {
      const bool has_large = t < walk.total && run(t);
      const std::uint32_t bits = __ballot_sync(0xffffffffu, has_large);
      if (lane == 0) large_runs[base >> 5] = bits;
    }
  }
  if (!kLarge) return;
  // The warp's first large object: its lanes' slots added up; any other flushed on its own.
  const std::uint32_t with_large = __ballot_sync(0xffffffffu, large_id != 0);
  const std::uint32_t shared_id =
      with_large ? __shfl_sync(0xffffffffu, large_id, __ffs(with_large) - 1) : 0u;
  if (shared_id != 0) {
    if (large_id != 0 && large_id != shared_id) flush(large, sums, large_id);
    DeviceSums a = large_id == shared_id ? large : empty_sums();
    warp_reduce(a);
    if (lane == 0) warp_large[warp] = a;
  }
  if (lane == 0) warp_large_id[warp] = shared_id;
  __syncthreads();
  if (threadIdx.x == 0) {  // the block's: one flush per distinct object of its warps
    for (int w = 0; w < kWarps; ++w) {
      const std::uint32_t id = warp_large_id[w];
      if (id == 0) continue;
      DeviceSums a = warp_large[w];
      for (int v = w + 1; v < kWarps; ++v) {
        if (warp_large_id[v] != id) continue;
        add_sums(a, warp_large[v]);
        warp_large_id[v] = 0;
      }
      flush(a, sums, id);
    }
  }
}

// ---- The merged flag (pipeline/detect/blend.hpp) -------------------------------------------

// The peaks of the records' objects of at most blend::kMaxArea pixels, each tested against its
// object's top (the record's peak pixel, from the sums); the object is flagged merged where one
// is separated. A thread takes sixteen pixels of a row (one 16-byte word of the mask); their z
// are four vector loads, issued together, so that most pixels are settled in registers. A pixel
// whose z is below may_peak(), or whose left neighbour in the row is set and as high (or right
// neighbour set and higher), is no peak: is_peak()'s own test of those neighbours, which are in
// the object wherever set (a row's adjacent pixels are connected under both connectivities).
// Only the rest (a flat top's first pixel in each row, or a peak) load their other neighbours,
// and only peaks look their label up. A band a thread, as the count walks, left each thread a
// star's pixels one after another behind a chain of dependent loads; a word of four a thread
// left the pass bound by its blocks' turnover (20 waves of blocks, each waiting on its loads).
// An object's pixels are told by the mask and the label (the labelling leaves the background's
// labels as they were); their z is what the mask passes wrote where they set the mask, and the
// vectors' other lanes, read but not used, hold earlier frames'.
// Blocks of 128 threads, 16 an SM (at most 32 registers): a block waits on its slowest
// thread's chain of loads, and small blocks free their slots sooner (256-thread blocks of 40
// registers, 6 an SM, took 0.8 % longer over a star field).
constexpr int kBlendBlockX = 32;
constexpr int kBlendBlockY = 4;
constexpr int kBlendPixels = 16;  // a 16-byte word of the mask

__global__ void __launch_bounds__(kBlendBlockX* kBlendBlockY,
                                  blocks_per_sm(16, kBlendBlockX* kBlendBlockY))
    blend_kernel(Frame f, const std::uint32_t* npix, const std::uint32_t* kept,
                 std::uint32_t min_area, std::uint32_t capacity, float threshold,
                 const DeviceSums* sums, std::uint32_t* merged) {
  const int x0 = static_cast<int>(blockIdx.x * kBlendBlockX + threadIdx.x) * kBlendPixels;
  const int y = static_cast<int>(blockIdx.y * kBlendBlockY + threadIdx.y);
  if (x0 >= f.width || y >= f.height) return;
  // The planes' rows are pitched in whole 16-byte words (cudaMallocPitch; the count reads the
  // mask so too); pixels past the width are left out.
  const std::size_t row = static_cast<std::size_t>(y);
  std::uint32_t bits = run_pixels(f, x0, y);
  if (f.width - x0 < kBlendPixels) bits &= (1u << (f.width - x0)) - 1u;
  if (bits == 0) return;
  float zs[kBlendPixels];
#pragma unroll
  for (int q = 0; q < kBlendPixels / 4; ++q) {
    if ((bits >> (4 * q) & 0xfu) == 0) continue;  // its lanes are never read
    const float4 v = *reinterpret_cast<const float4*>(f.z + row * f.z_pitch + x0 + 4 * q);
    zs[4 * q] = v.x, zs[4 * q + 1] = v.y, zs[4 * q + 2] = v.z, zs[4 * q + 3] = v.w;
  }
  // The pixel before the word: its z where set.
  const bool before_set = x0 > 0 && f.mask[row * f.mask_pitch + x0 - 1] != 0;
  const float z_before = before_set ? f.z[row * f.z_pitch + x0 - 1] : 0.0f;
  std::uint32_t candidates = 0;
#pragma unroll
  for (int i = 0; i < kBlendPixels; ++i) {
    if ((bits >> i & 1u) == 0 || !blend::may_peak(zs[i], threshold)) continue;
    const bool left_set = i > 0 ? (bits >> (i - 1) & 1u) != 0 : before_set;
    const float left_z = i > 0 ? zs[i > 0 ? i - 1 : 0] : z_before;
    if (left_set && left_z >= zs[i]) continue;
    if (i + 1 < kBlendPixels && (bits >> (i + 1) & 1u) != 0 &&
        zs[i + 1 < kBlendPixels ? i + 1 : i] > zs[i]) {
      continue;
    }
    candidates |= 1u << i;
  }
  for (; candidates != 0; candidates &= candidates - 1) {
    const int x = x0 + __ffs(candidates) - 1;
    const float z = f.z[row * f.z_pitch + x];
    const std::uint32_t l = f.labels[row * f.label_pitch + x];
    if (npix[l] > blend::kMaxArea) continue;
    // Read only where the mask is set (inside()), which the mask passes wrote.
    const auto z_at = [&](int nx, int ny) { return f.z[ny * f.z_pitch + nx]; };
    const auto inside = [&](int nx, int ny) {
      return f.mask[ny * f.mask_pitch + nx] != 0 && f.labels[ny * f.label_pitch + nx] == l;
    };
    if (!blend::is_peak(x, y, z, f.width, f.height, z_at, inside)) continue;
    const std::uint32_t id = catalogue_id(l, npix, kept, min_area);
    if (id == 0 || id > capacity) continue;
    const std::uint32_t record = id - 1;
    const std::uint32_t index =
        static_cast<std::uint32_t>(y) * static_cast<std::uint32_t>(f.width) +
        static_cast<std::uint32_t>(x);
    const std::uint32_t top =
        0xffffffffu - static_cast<std::uint32_t>(sums[record].peak & 0xffffffffu);
    if (index == top || merged[record] != 0) continue;
    const int tx = static_cast<int>(top % static_cast<std::uint32_t>(f.width));
    const int ty = static_cast<int>(top / static_cast<std::uint32_t>(f.width));
    if (blend::separated(x, y, tx, ty, blend::separating_level(z, threshold), z_at, inside)) {
      atomicOr(&merged[record], 1u);
    }
  }
}

// Copies `bytes` (a multiple of sizeof(Word)) from `from` to `to` with the block's threads,
// word by word: consecutive threads, consecutive words.
template <class Word>
__device__ __forceinline__ void block_copy(void* to, const void* from, std::size_t bytes) {
  auto* t = static_cast<Word*>(to);
  const auto* s = static_cast<const Word*>(from);
  for (std::size_t k = threadIdx.x; k < bytes / sizeof(Word); k += blockDim.x) t[k] = s[k];
}

// Each record's finishing (finalize_object()), kCatalogueThreads records a step. A thread's
// record is 160 bytes in and 116 out, so the block moves them through shared memory as words:
// read and written a field at a time by each thread, every load and store would touch its own
// sector, eight times the traffic (and the LSU queue stalled on it).
__global__ void __launch_bounds__(kCatalogueThreads)
    catalogue_kernel(const DeviceSums* sums, const std::uint32_t* merged, const std::uint32_t* kept,
                     const std::uint32_t* components, std::uint32_t capacity, int width, int height,
                     std::byte* result) {
  static_assert(sizeof(DeviceSums) % 8 == 0 && sizeof(DetectedObject) % 4 == 0);
  __shared__ DeviceSums in[kCatalogueThreads];
  // Raw storage: DetectedObject's member initialisers rule out a __shared__ array of it.
  __shared__ alignas(DetectedObject)
      std::byte out_bytes[kCatalogueThreads * sizeof(DetectedObject)];
  auto* out = reinterpret_cast<DetectedObject*>(out_bytes);
  const std::uint32_t total = total_kept(kept, components);
  const std::uint32_t count = total < capacity ? total : capacity;
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    auto* header = reinterpret_cast<ResultHeader*>(result);
    header->count = count;
    header->overflow = total - count;
  }
  auto* records = reinterpret_cast<DetectedObject*>(result + kResultRecordsOffset);
  for (std::uint32_t base = blockIdx.x * kCatalogueThreads; base < count;
       base += gridDim.x * kCatalogueThreads) {
    const std::uint32_t n = min(count - base, static_cast<std::uint32_t>(kCatalogueThreads));
    block_copy<unsigned long long>(in, sums + base, n * sizeof(DeviceSums));
    __syncthreads();
    const std::uint32_t i = threadIdx.x;
    if (i < n) {
      out[i] = finalize_object(to_object(in[i], width), base + i + 1, width, height);
      if (merged[base + i] != 0) out[i].flags |= kObjectMerged;
    }
    __syncthreads();
    block_copy<std::uint32_t>(records + base, out, n * sizeof(DetectedObject));
    __syncthreads();  // `in` and `out` free for the next step
  }
}

__global__ void labels_out_kernel(Frame f, const std::uint32_t* npix, const std::uint32_t* kept,
                                  std::uint32_t min_area, ImageView out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= f.width || y >= f.height) return;
  // Background labels are 0 or whatever the buffer held (LabelBackground::Keep): the mask
  // decides.
  const std::uint32_t id = f.mask[y * f.mask_pitch + x] != 0
                               ? catalogue_id(f.labels[y * f.label_pitch + x], npix, kept, min_area)
                               : 0u;
  out_row<std::uint16_t>(out, y)[x] = static_cast<std::uint16_t>(id < 65535u ? id : 65535u);
}

__global__ void overlay_kernel(Frame f, ImageView out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= f.width || y >= f.height) return;
  const float r = residual_at(f, x, y) / sigma_at(f, x, y);
  const float v = fminf(fmaxf((r + 2.0f) * (254.0f / 12.0f), 0.0f), 254.0f);
  out_row<std::uint8_t>(out, y)[x] = static_cast<std::uint8_t>(lroundf(v));
}

// Each written record's box at 255 (one block per record).
__global__ void boxes_kernel(const DeviceSums* sums, const std::uint32_t* kept,
                             const std::uint32_t* components, std::uint32_t capacity,
                             ImageView out) {
  const std::uint32_t total = total_kept(kept, components);
  const std::uint32_t i = blockIdx.x;
  if (i >= (total < capacity ? total : capacity)) return;
  const ObjectSums d = to_object(sums[i], 1);
  const int w = d.xmax - d.xmin + 1, h = d.ymax - d.ymin + 1;
  for (int k = threadIdx.x; k < w; k += blockDim.x) {
    out_row<std::uint8_t>(out, d.ymin)[d.xmin + k] = 255;
    out_row<std::uint8_t>(out, d.ymax)[d.xmin + k] = 255;
  }
  for (int k = threadIdx.x; k < h; k += blockDim.x) {
    out_row<std::uint8_t>(out, d.ymin + k)[d.xmin] = 255;
    out_row<std::uint8_t>(out, d.ymin + k)[d.xmax] = 255;
  }
}

dim3 grid2d(int w, int h, dim3 block) {
  return dim3((w + block.x - 1) / block.x, (h + block.y - 1) / block.y);
}

}  // namespace

void DetectBuffers::allocate(const DetectParams& params, const FrameShape& shape,
                             const std::vector<float>& taps, int radius, double norm,
                             const LineBank& lines) {
  shape_ = shape;
  max_objects_ = params.max_objects;
  const bool mesh = detect_background_plan(params, shape).background == DetectBackground::Mesh;
  const MeshAxis ax = mesh_axis(shape.width, mesh ? params.mesh : shape.width);
  const MeshAxis ay = mesh_axis(shape.height, mesh ? params.mesh : shape.height);
  tiles_x_ = ax.count;
  tiles_y_ = ay.count;
  // Enough blocks per tile to fill the GPU for a global background, few for a fine mesh.
  const int tiles = tiles_x_ * tiles_y_;
  splits_ = std::clamp(2048 / tiles, 1, std::min(ay.side, 512));
  const std::size_t pixels = static_cast<std::size_t>(shape.width) * shape.height;
  // At most: 4-connected, a checkerboard, half the pixels rounded up; 8-connected, one pixel
  // in every 2 x 2 block. +1 for label 0. (npix and kept are indexed by label; the passes and the
  // scan cover only the frame's count of them.)
  connectivity_ = params.connectivity;
  components_ = params.connectivity == Connectivity::Eight
                    ? static_cast<std::size_t>((shape.width + 1) / 2) * ((shape.height + 1) / 2) + 1
                    : (pixels + 1) / 2 + 1;
  mask_.allocate(static_cast<std::size_t>(shape.width), shape.height);
  // The row padding stays 0 (the mask pass writes only the width): the per-component passes
  // read the mask 16 bytes at a time.
  check(cudaMemset(mask_.data(), 0, mask_.pitch() * static_cast<std::size_t>(shape.height)),
        "cudaMemset (detection mask)");
  labels_.allocate(static_cast<std::size_t>(shape.width) * sizeof(std::uint32_t), shape.height);
  // Its padding too (the labelling writes the width only): sums_kernel loads 16 labels at once.
  check(cudaMemset(labels_.data(), 0, labels_.pitch() * static_cast<std::size_t>(shape.height)),
        "cudaMemset (detection labels)");
  small_.allocate(carve(nullptr, tiles, splits_, shape.width, shape.height, nullptr), 1);
  {
    std::vector<int> col_tile(shape.width), row_tile(shape.height);
    std::vector<float> col_weight(shape.width), row_weight(shape.height);
    for (int x = 0; x < shape.width; ++x) mesh_locate(ax, x, col_tile[x], col_weight[x]);
    for (int y = 0; y < shape.height; ++y) mesh_locate(ay, y, row_tile[y], row_weight[y]);
    const Small s = carve(small_.data(), tiles, splits_, shape.width, shape.height);
    auto upload = [](void* to, const void* from, std::size_t bytes) {
      check(cudaMemcpy(to, from, bytes, cudaMemcpyHostToDevice), "cudaMemcpy (detection mesh)");
    };
    upload(s.col_tile, col_tile.data(), sizeof(int) * shape.width);
    upload(s.col_weight, col_weight.data(), sizeof(float) * shape.width);
    upload(s.row_tile, row_tile.data(), sizeof(int) * shape.height);
    upload(s.row_weight, row_weight.data(), sizeof(float) * shape.height);
  }
  npix_.allocate(components_ * sizeof(std::uint32_t), 1);
  kept_.allocate(components_ * sizeof(std::uint32_t), 1);
  sums_.allocate(static_cast<std::size_t>(max_objects_) * sizeof(DeviceSums), 1);
  merged_.allocate(static_cast<std::size_t>(max_objects_) * sizeof(std::uint32_t), 1);
  z_.allocate(sizeof(float) * static_cast<std::size_t>(shape.width), shape.height);
  // The merged pass reads whole vectors of z, set pixels' lanes only used: cleared once so that
  // no read is of memory never written.
  check(cudaMemset(z_.data(), 0, z_.pitch() * static_cast<std::size_t>(shape.height)),
        "cudaMemset (z)");
  sm_count_ = current_device_facts().multiprocessors;
  if (sm_count_ <= 0) check(cudaErrorInvalidDevice, "the device's multiprocessor count");
  label_scratch_bytes_ = label_scratch_bytes(shape.width, shape.height);
  label_scratch_.allocate(std::max<std::size_t>(label_scratch_bytes_, 1), 1);
  line_length_ = -1;  // whatever set_filter() is given, the line buffers are made anew
  set_filter(taps, radius, norm, lines);
}

void DetectBuffers::set_filter(const std::vector<float>& taps, int radius, double norm,
                               const LineBank& lines) {
  radius_ = radius;
  norm_ = norm;
  const Small s = carve(small_.data(), tiles_x_ * tiles_y_, splits_, shape_.width, shape_.height);
  if (!taps.empty()) {
    check(cudaMemcpy(s.taps, taps.data(), taps.size() * sizeof(float), cudaMemcpyHostToDevice),
          "detect filter taps (cudaMemcpy)");
  }
  set_lines(lines);
}

void DetectBuffers::set_lines(const LineBank& lines) {
  if (lines.length != line_length_) {
    capped_.release();
    line_bank_.release();
    if (lines.length > 0) {
      capped_.allocate(sizeof(float) * static_cast<std::size_t>(shape_.width), shape_.height);
      line_bank_.allocate(line_layout(lines.length).bytes(), 1);
    }
    line_length_ = lines.length;
  }
  if (lines.length == 0) return;
  const LineBankLayout layout = line_layout(lines.length);
  std::vector<std::byte> host(layout.bytes(), std::byte{0});
  auto* offsets = reinterpret_cast<short*>(host.data());
  auto* inv_norm = reinterpret_cast<float*>(host.data() + layout.offsets_bytes());
  const int sw = layout.tile_side_x();
  for (int o = 0; o < layout.orientations; ++o) {
    const LineOrientation& line = lines.orientations.at(static_cast<std::size_t>(o));
    for (int k = 0; k < layout.length; ++k) {
      const LineTap& t = line.taps.at(static_cast<std::size_t>(k));
      offsets[o * layout.stride + k] = static_cast<short>(t.dy * sw + t.dx);
    }
    inv_norm[o] = line.inv_norm;
  }
  check(cudaMemcpy(line_bank_.data(), host.data(), host.size(), cudaMemcpyHostToDevice),
        "line bank (cudaMemcpy)");
}

cudaError_t launch_detect(const DetectParams& p, DetectBuffers& b, ConstImageView in, ImageView out,
                          cudaStream_t stream) {
  const int w = b.shape_.width, h = b.shape_.height;
  // The per-component buffers are sized for the connectivity they were allocated with.
  if (in.width != w || in.height != h || in.format != b.shape_.format ||
      p.max_objects != b.max_objects_ || p.connectivity != b.connectivity_) {
    return cudaErrorInvalidValue;
  }
  const int tiles = b.tiles_x_ * b.tiles_y_;
  const Small s = carve(b.small_.data(), tiles, b.splits_, w, h);
  const DetectBackgroundPlan plan = detect_background_plan(p, b.shape_);
  const bool mesh = plan.background == DetectBackground::Mesh;
  Frame f;
  f.width = w;
  f.height = h;
  f.in = in;
  f.mask = reinterpret_cast<std::uint8_t*>(b.mask_.data());
  f.mask_pitch = b.mask_.pitch();
  f.labels = reinterpret_cast<std::uint32_t*>(b.labels_.data());
  f.label_pitch = b.labels_.pitch() / sizeof(std::uint32_t);
  f.ax = mesh_axis(w, mesh ? p.mesh : w);
  f.ay = mesh_axis(h, mesh ? p.mesh : h);
  f.has_background = plan.background != DetectBackground::None;
  f.level = plan.level;
  f.noise = plan.noise;
  f.col_tile = s.col_tile;
  f.col_weight = s.col_weight;
  f.row_tile = s.row_tile;
  f.row_weight = s.row_weight;
  f.tile_mean = s.tile_mean;
  f.tile_sigma = s.tile_sigma;
  f.sigma_max = s.sigma_max;
  if (f.has_background && f.ax.count * f.ay.count != tiles) return cudaErrorInvalidValue;
  if (p.line_length != b.line_length_) return cudaErrorInvalidValue;
  f.capped = b.line_length_ > 0 ? reinterpret_cast<float*>(b.capped_.data()) : nullptr;
  f.capped_pitch = b.capped_.pitch() / sizeof(float);
  f.z = reinterpret_cast<float*>(b.z_.data());
  f.z_pitch = b.z_.pitch() / sizeof(float);

  if (f.has_background) {
    const bool integer = in.format != PixelFormat::Gray32F;
    const int tile_pixels = f.ax.side * f.ay.side;
    STARSIFT_CUDA_TRY(cudaMemsetAsync(s.sigma_max, 0, sizeof(*s.sigma_max), stream));
    if (tile_pixels <= kSharedTilePixels) {
      const auto clip = integer ? tile_clip_shared_kernel<true> : tile_clip_shared_kernel<false>;
      clip<<<tiles, 256, sizeof(std::uint32_t) * tile_pixels, stream>>>(
          f, s.tiles, DetectParams::kClipRounds, DetectParams::kClipSigma, s.tile_mean,
          s.tile_sigma, s.sigma_max);
    } else {
      tiles_init_kernel<<<(tiles + 127) / 128, 128, 0, stream>>>(s.tiles, tiles);
      const auto partial = integer ? tile_partial_kernel<true> : tile_partial_kernel<false>;
      for (int round = 0; round < DetectParams::kClipRounds; ++round) {
        partial<<<dim3(tiles, b.splits_), 256, 0, stream>>>(f, s.tiles, s.partials, b.splits_);
        tile_finalize_kernel<<<(tiles + 127) / 128, 128, 0, stream>>>(
            s.tiles, s.partials, tiles, b.splits_, DetectParams::kClipSigma);
      }
      tiles_publish_kernel<<<(tiles + 127) / 128, 128, 0, stream>>>(f, s.tiles, tiles, s.tile_mean,
                                                                    s.tile_sigma, s.sigma_max);
    }
    STARSIFT_CUDA_TRY(cudaPeekAtLastError());
  }
  const bool sigma_units = p.threshold_mode == DetectThreshold::Sigma;
  const auto threshold = static_cast<float>(p.threshold);
  const auto norm = static_cast<float>(b.norm_);
  const int radius = p.filter == DetectFilter::None ? 0 : b.radius_;
  STARSIFT_CUDA_TRY(launch_mask(f, radius, s.taps, norm, sigma_units, threshold, stream));
  if (b.line_length_ > 0) {
    const LineBankLayout layout = line_layout(b.line_length_);
    const dim3 line_grid((w + kLineW - 1) / kLineW, (h + kLineH - 1) / kLineH);
    line_kernel<<<line_grid, dim3(kLineW, kLineThreadsY), layout.shared_bytes(), stream>>>(
        f, b.line_bank_.data(), layout, static_cast<float>(p.line_threshold));
    STARSIFT_CUDA_TRY(cudaPeekAtLastError());
  }
  STARSIFT_CUDA_TRY(launch_labels(f.mask, static_cast<std::ptrdiff_t>(f.mask_pitch), w, h,
                                  p.connectivity, f.labels,
                                  static_cast<std::ptrdiff_t>(f.label_pitch), s.components,
                                  {b.label_scratch_.data(), b.label_scratch_bytes_}, stream,
                                  LabelSchedule::Auto, LabelBackground::Keep));
  auto* npix = reinterpret_cast<std::uint32_t*>(b.npix_.data());
  auto* kept = reinterpret_cast<std::uint32_t*>(b.kept_.data());
  auto* sums = reinterpret_cast<DeviceSums*>(b.sums_.data());
  clear_npix_kernel<<<kClearBlocks, 256, 0, stream>>>(npix, s.components, s.any_large);
  // A thread a band (run) at once, or what is resident, whichever is fewer.
  const auto blocks_for = [&](long long bands) {
    return static_cast<int>(
        std::min<long long>((bands + 255) / 256, kRunBlocksPerSm * b.sm_count_));
  };
  const int run_blocks = blocks_for(RunWalk::of(w, h).total);
  const int band_blocks = blocks_for(BandWalk::of(w, h).total);
  count_kernel<<<band_blocks, 256, 0, stream>>>(f, npix);
  const auto min_area = static_cast<std::uint32_t>(p.min_area);
  kept_totals_kernel<<<kScanBlocks, kScanThreads, 0, stream>>>(npix, s.components, min_area,
                                                               s.scan_totals, s.any_large);
  kept_scan_kernel<<<kScanBlocks, kScanThreads, 0, stream>>>(npix, s.components, min_area,
                                                             s.scan_totals, kept);
  const auto capacity = static_cast<std::uint32_t>(b.max_objects_);
  auto* merged = reinterpret_cast<std::uint32_t*>(b.merged_.data());
  clear_sums_kernel<<<kClearBlocks, 256, 0, stream>>>(sums, merged, kept, s.components, capacity);
  sums_kernel<false><<<run_blocks, 256, 0, stream>>>(f, npix, kept, min_area, capacity, s.any_large,
                                                     s.large_runs, sums);
  sums_kernel<true><<<std::min(run_blocks, kLargeBlocksPerSm * b.sm_count_), 256, 0, stream>>>(
      f, npix, kept, min_area, capacity, s.any_large, s.large_runs, sums);
  const dim3 blend_block(kBlendBlockX, kBlendBlockY);
  const dim3 blend_grid((w + kBlendBlockX * kBlendPixels - 1) / (kBlendBlockX * kBlendPixels),
                        (h + kBlendBlockY - 1) / kBlendBlockY);
  blend_kernel<<<blend_grid, blend_block, 0, stream>>>(f, npix, kept, min_area, capacity, threshold,
                                                       sums, merged);
  STARSIFT_CUDA_TRY(cudaPeekAtLastError());
  const dim3 block(32, 8);
  const dim3 grid = grid2d(w, h, block);
  switch (p.output) {
    case DetectOutput::Input:  // engines pass the input itself as `out` (keeps_frame())
      if (out.data == in.data) break;
      STARSIFT_CUDA_TRY(cudaMemcpy2DAsync(out.data, out.stride, in.data, in.stride, in.row_bytes(),
                                          h, cudaMemcpyDeviceToDevice, stream));
      break;
    case DetectOutput::Labels:
      labels_out_kernel<<<grid, block, 0, stream>>>(f, npix, kept, min_area, out);
      break;
    case DetectOutput::Overlay:
      overlay_kernel<<<grid, block, 0, stream>>>(f, out);
      boxes_kernel<<<b.max_objects_, 128, 0, stream>>>(
          sums, kept, s.components, static_cast<std::uint32_t>(b.max_objects_), out);
      break;
  }
  return cudaPeekAtLastError();
}

cudaError_t launch_detect_catalogue(const DetectParams& p, DetectBuffers& b, void* result,
                                    cudaStream_t stream) {
  if (p.max_objects != b.max_objects_) return cudaErrorInvalidValue;
  const auto* kept = reinterpret_cast<const std::uint32_t*>(b.kept_.data());
  const auto* sums = reinterpret_cast<const DeviceSums*>(b.sums_.data());
  const Small s =
      carve(b.small_.data(), b.tiles_x_ * b.tiles_y_, b.splits_, b.shape_.width, b.shape_.height);
  // Blocks for every record up to a few per SM: a record's finishing is long double
  // arithmetic, so spread over the SMs; a larger capacity than that is strided over.
  const int blocks = std::min((b.max_objects_ + kCatalogueThreads - 1) / kCatalogueThreads,
                              kCatalogueBlocksPerSm * b.sm_count_);
  catalogue_kernel<<<blocks, kCatalogueThreads, 0, stream>>>(
      sums, reinterpret_cast<const std::uint32_t*>(b.merged_.data()), kept, s.components,
      static_cast<std::uint32_t>(b.max_objects_), b.shape_.width, b.shape_.height,
      static_cast<std::byte*>(result));
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
