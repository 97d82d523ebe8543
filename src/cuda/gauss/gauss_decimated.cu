// SPDX-License-Identifier: LGPL-2.1-or-later
// The Gaussian's decimated path, for sigma beyond the fused radii: the frame reduced by an
// integer factor k per axis, the small plane blurred by the rest of the Gaussian, and
// interpolated back. Its cost per pixel does not grow with sigma: k grows with it, so the
// small plane's blur stays within the fused path's radii (sigma_small < 4).
//
// 1. Down, both axes in one kernel: small sample i of an axis is the cubic B-spline of width
//    4 k centred on full-resolution position k i + (k - 1) / 2, over the frame extended by the
//    border mode (so every border mode means what it means on the full frame). The B-spline is
//    the anti-aliasing filter: its response falls as the fourth power beyond the small grid's
//    Nyquist frequency (a box's, as the first), and its variance is k^2 / 3.
// 2. The small plane, which reaches `margin` samples beyond the frame on each side, is blurred
//    by the rest of the Gaussian, sigma_small = sqrt(sigma^2 - k^2 / 3) / k, so the variances
//    add up to sigma^2. The margin covers that blur's radius and the interpolation's reach,
//    so the small plane's own border never reaches a sample that is read back. Large small
//    planes (k <= 3 on a 4096^2 frame) go through the fused path's block tile, smaller ones
//    through a kernel of smaller tiles that fill the GPU.
// 3. Up, both axes in one kernel: Catmull-Rom cubic interpolation, which reproduces
//    quadratics and so adds no variance of its own.
//
// Three launches whatever sigma. No plane of the frame's size goes through global memory: the
// frame is read (gray rows of whole words once a strip of eight small rows, every other frame
// by each of the four small rows whose B-splines reach a row, from L1 and L2 after the first)
// and written once.
//
// k is the coarsest reduction whose error stays within bounds: max(2, ceil(sigma / 4)), at least
// 3 from kDecimatedBy3Sigma (5.5), and floor(sigma / 2.5) up to kMostCoarseK (13, sigma 32.5-52),
// so sigma / k lies in [1.83, 4] (from sigma 10 in [2.5, 4]): the small grid samples the
// blurred frame at least every sigma / 1.83. The error against the exact Gaussian
// (gauss_reference()) follows sigma / k: near 2 the B-spline is coarse for the small grid. A
// point source's blur differs by at most 1.2 % of its peak below sigma 9 and 0.5 % from there, a
// step's by at most 0.15 % and 0.1 % of its height (tests/gauss/test_gauss_cuda.cpp; measured on
// an H200: the point 0.72 % at sigma 4, 0.78 % at 6, 0.37-0.39 % where sigma / k is 2.5; the step
// 0.0997 % at most). The coarser k the smaller the small plane and its blur's radius: sigma 6-8
// take 0.68-0.73 of the time of k = 2, sigma 10-25 0.82-0.93 of that of k = ceil(sigma / 4)
// (bench/results/gauss/h200-k3-up/, h200-k3-wide/, h200-coarse-k/). Beyond kMostCoarseK the down
// pass's bands overlap more than a smaller plane saves (k = 20 at sigma 50: 0.0586 ms against
// k = 13's 0.0548).
//
// Planes between the passes are float, one per colour channel, in the caller's scratch.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "cuda/common/launch_limits.cuh"
#include "cuda/device_query.hpp"
#include "cuda/gauss/gauss.cuh"
#include "cuda/gauss/gauss_internal.cuh"
#include "cuda/gauss/gauss_io.cuh"
#include "cuda/gauss/gauss_words.cuh"
#include "pipeline/border.hpp"

namespace starsift::cuda {

namespace {

using gauss_io::Plane;

constexpr int kWarp = 32;
// The coarsest reduction taken for speed (axis_for()); ceil(sigma / 4) goes beyond it.
constexpr int kMostCoarseK = 13;

// The cubic B-spline of unit knot spacing, support (-2, 2).
inline double bspline3(double t) {
  t = t < 0 ? -t : t;
  if (t < 1.0) return 2.0 / 3.0 - t * t + 0.5 * t * t * t;
  if (t < 2.0) {
    const double u = 2.0 - t;
    return u * u * u / 6.0;
  }
  return 0.0;
}

// The same in floats, for the kernels' weight tables.
__device__ inline float bspline3f(float t) {
  t = fabsf(t);
  if (t < 1.f) return 2.f / 3.f - t * t + 0.5f * t * t * t;
  if (t < 2.f) {
    const float u = 2.f - t;
    return u * u * u / 6.f;
  }
  return 0.f;
}

// One axis of the decimation.
struct Axis {
  int k = 1;           // decimation factor
  int margin = 0;      // small samples beyond each edge of the frame
  int small = 0;       // small samples, margins included
  int first_tap = 0;   // full-resolution offset of a small sample's first tap from k i
  int taps = 0;        // down taps
  float centre = 0.f;  // full-resolution offset of a small sample's centre from k i
  float norm = 1.f;    // 1 / the sum of the down weights
  float inv_k = 1.f;   // 1 / k
  double sigma_small = 0.0;
};

Axis axis_for(double sigma, int n) {
  Axis a;
  a.k = std::max({sigma >= kDecimatedBy3Sigma ? 3 : 2, static_cast<int>(std::ceil(sigma / 4.0)),
                  std::min(static_cast<int>(std::floor(sigma / 2.5)), kMostCoarseK)});
  const double k = a.k;
  a.inv_k = static_cast<float>(1.0 / k);
  a.sigma_small = std::sqrt(std::max(sigma * sigma - k * k / 3.0, 0.0)) / k;
  const int radius = static_cast<int>(std::ceil(4.0 * a.sigma_small));
  a.margin = radius + 2;  // the blur's reach, and the interpolation's two samples beyond
  a.small = (n + a.k - 1) / a.k + 2 * a.margin;
  const double c = (k - 1.0) / 2.0;
  a.centre = static_cast<float>(c);
  a.first_tap = static_cast<int>(std::floor(c - 2.0 * k)) + 1;
  const int last_tap = static_cast<int>(std::ceil(c + 2.0 * k)) - 1;
  a.taps = last_tap - a.first_tap + 1;
  double sum = 0.0;
  for (int m = a.first_tap; m <= last_tap; ++m) sum += bspline3((m - c) / k);
  a.norm = static_cast<float>(1.0 / sum);
  return a;
}

// Catmull-Rom weights of the four samples around fraction f in [0, 1).
__device__ inline void catmull_rom(float f, float (&w)[4]) {
  const float f2 = f * f, f3 = f2 * f;
  w[0] = 0.5f * (-f3 + 2.f * f2 - f);
  w[1] = 0.5f * (3.f * f3 - 5.f * f2 + 2.f);
  w[2] = 0.5f * (-3.f * f3 + 4.f * f2 + f);
  w[3] = 0.5f * (f3 - f2);
}

// Where full-resolution position p falls on an axis's small grid: the sample before it (the
// second of the four read) and the fraction past it.
__device__ inline int small_position(const Axis& a, int p, float& f) {
  // By the reciprocal: a u just below a whole number takes the sample before it with f ~ 1,
  // which the weights make the same value.
  const float u = (static_cast<float>(p) - a.centre) * a.inv_k + a.margin;
  const float j = floorf(u);
  f = u - j;
  return static_cast<int>(j);
}

// Float planes, one per channel, rows `stride` floats apart, planes `plane` floats apart.
struct Planes {
  float* data;
  std::size_t stride;
  std::size_t plane;
};

struct Args {
  Plane frame;
  Axis x, y;
  BorderMode border;
  float border_value;
};

// A down block's shape along x, chosen on the host for the axis: a unit a thread across
// (words: four gray samples, else a pixel), 64 threads.
constexpr int kDownUnits = 64;
constexpr int kDownBand = 4 * kDownUnits;  // full-resolution samples a band holds at most
struct DownShape {
  int columns = 1;  // small columns a block makes
  int band = 0;     // full-resolution samples a band holds (words: whole words)
};

DownShape down_shape(const Axis& x, bool words) {
  // Words: the band starts at the word holding the first tap, up to 3 samples before it.
  const int lead = words ? 3 : 0;
  DownShape d;
  d.columns = std::max(1, (kDownBand - lead - x.taps) / x.k + 1);
  d.band = lead + x.k * (d.columns - 1) + x.taps;
  if (words) d.band = (d.band + 3) / 4 * 4;
  return d;
}

// Tap t of an axis's B-spline, unnormalised, 0 past the last tap; in floats (the host's norm
// sums the same B-spline in doubles).
__device__ inline float down_weight(const Axis& a, int t) {
  return t < a.taps ? bspline3f((a.first_tap + t - a.centre) * a.inv_k) : 0.f;
}

// An axis's taps by the whole block.
__device__ void load_down_weights(const Axis& a, float* w) {
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  for (int t = tid; t < a.taps; t += blockDim.x * blockDim.y) w[t] = down_weight(a, t);
}

// A small sample from its row reduced down, `line` at its first tap: the taps across.
__device__ inline float sum_across(const Axis& x, const float* wx, const float* line) {
  float sum = 0.f;
#pragma unroll 4
  for (int t = 0; t < x.taps; ++t) sum = fmaf(wx[t], line[t], sum);
  return sum;
}

// Pass 1 (down) for colour frames and gray rows not aligned to words: both axes in one
// kernel. A block makes kDownRows small rows of `columns` small samples. Its threads are a
// band of pixels across by the kDownRows small rows: each thread sums its small row's taps
// down its pixel's column (the taps unrolled, so that their loads are in flight together; the
// rows the block's small rows share come from L1), into shared memory; then each small sample
// is summed across from there.
constexpr int kDownRows = 8;
constexpr int kDownThreads = kDownUnits * kDownRows;

// Full-resolution rows a down block reads.
__host__ __device__ int down_span(const Axis& y) {
  return y.k * (kDownRows - 1) + y.taps;
}

std::size_t down_shared_bytes(const Axis& x, const Axis& y, int channels, const DownShape& d) {
  const std::size_t tables = (static_cast<std::size_t>(x.taps) + y.taps + down_span(y) + 3) / 4 * 4;
  return sizeof(float) * (tables + static_cast<std::size_t>(channels) * kDownRows * d.band);
}

// Three blocks a multiprocessor: 42 registers a thread, room for eight loads in flight.
template <class Io>
__global__ void __launch_bounds__(kDownThreads, blocks_per_sm(3, kDownThreads))
    down_kernel(const Args a, const DownShape shape, Planes out) {
  constexpr int C = Io::kChannels;
  extern __shared__ float shared[];
  float* wy = shared;
  float* wx = wy + a.y.taps;
  // The frame row of each row the block reads, through the border rule (-1: border_value),
  // found once here rather than for every tap of every thread (reflect-101 divides).
  int* row_of = reinterpret_cast<int*>(wx + a.x.taps);
  const int span = down_span(a.y);
  float* reduced = shared + (a.y.taps + a.x.taps + span + 3) / 4 * 4;  // [C][kDownRows][band]
  load_down_weights(a.y, wy);
  load_down_weights(a.x, wx);
  const int block_y = a.y.k * (blockIdx.y * kDownRows - a.y.margin) + a.y.first_tap;
  for (int r = threadIdx.y * blockDim.x + threadIdx.x; r < span; r += kDownThreads) {
    row_of[r] = border_index(block_y + r, a.frame.height, a.border);
  }
  __syncthreads();

  const int sx0 = blockIdx.x * shape.columns;
  const int j = threadIdx.y;  // this thread's small row in the block
  const int sy = blockIdx.y * kDownRows + j;
  const int first_x = a.x.k * (sx0 - a.x.margin) + a.x.first_tap;  // the first tap's column
  const int first_y = block_y + a.y.k * j;
  const int* rows = row_of + a.y.k * j;  // this small row's taps
  const int width = a.frame.width;
  const bool rows_inside = first_y >= 0 && first_y + a.y.taps <= a.frame.height;

  for (int u = threadIdx.x; u < shape.band; u += kDownUnits) {
    const int x = first_x + u;
    float acc[C] = {};
    if (x >= 0 && x < width) {
      if (rows_inside) {  // the common case: loads in flight together
        const std::byte* row =
            a.frame.in + static_cast<std::ptrdiff_t>(first_y) * a.frame.in_stride;
#pragma unroll 8
        for (int t = 0; t < a.y.taps; ++t) {
          float v[C];
          Io::load_pixel(row + t * a.frame.in_stride, x, v);
          const float w = wy[t];
#pragma unroll
          for (int i = 0; i < C; ++i) acc[i] = fmaf(w, v[i], acc[i]);
        }
      } else {
#pragma unroll 4
        for (int t = 0; t < a.y.taps; ++t) {
          const int ry = rows[t];
          float v[C];
          if (ry < 0) {
#pragma unroll
            for (int i = 0; i < C; ++i) v[i] = a.border_value;
          } else {
            Io::load_pixel(a.frame.in + static_cast<std::ptrdiff_t>(ry) * a.frame.in_stride, x, v);
          }
          const float w = wy[t];
#pragma unroll
          for (int i = 0; i < C; ++i) acc[i] = fmaf(w, v[i], acc[i]);
        }
      }
    } else {
      // A pixel beyond a side of the frame: its column through the border rule once.
      const int column = border_index(x, width, a.border);
      for (int t = 0; t < a.y.taps; ++t) {
        const int ry = rows[t];
        const std::byte* row =
            a.frame.in + static_cast<std::ptrdiff_t>(ry < 0 ? 0 : ry) * a.frame.in_stride;
        float v[C];
        if (ry < 0 || column < 0) {
#pragma unroll
          for (int c = 0; c < C; ++c) v[c] = a.border_value;
        } else {
          Io::load_pixel(row, column, v);
        }
        const float w = wy[t];
#pragma unroll
        for (int i = 0; i < C; ++i) acc[i] = fmaf(w, v[i], acc[i]);
      }
    }
#pragma unroll
    for (int c = 0; c < C; ++c) reduced[(c * kDownRows + j) * shape.band + u] = acc[c] * a.y.norm;
  }
  __syncthreads();

  if (sy >= a.y.small) return;
  for (int i = threadIdx.x; i < shape.columns; i += kDownUnits) {
    const int sx = sx0 + i;
    if (sx >= a.x.small) break;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const float* line = reduced + (c * kDownRows + j) * shape.band + a.x.k * i;
      out.data[c * out.plane + sy * out.stride + sx] = sum_across(a.x, wx, line) * a.x.norm;
    }
  }
}

// Pass 1 for gray frames read by words of four samples: each frame row loaded and unpacked
// once. A thread walks down its word's column through the rows a strip of kStripRows small
// rows reads, (kStripRows + 3) k of them: row k c + p (chunk c, phase p) is tap j k + p of small
// row c - j, j = 0..3, whose four weights are one vector of the phase table. Phase by phase,
// the rows of every chunk are loaded together (kStripRows + 3 loads in flight) and added in
// registers to the small rows they reach. A block is kDownUnits words across by up to
// kStripMostThreadsY threads down: `strips` strips of small rows, each walked by `sharers`
// threads that share out its phases (so that a large k spreads over more threads rather than
// longer walks, where strips alone would leave the GPU idle). Their sums go to shared memory
// and are added up in phase order; then each small sample is summed across from there, as in
// down_kernel. (Against down_kernel, which summed each small row's taps a thread, so that each
// frame row was unpacked by the four small rows it reaches: 1.15-1.25x on an H200.)
constexpr int kStripRows = 8;
constexpr int kStripChunks = kStripRows + 3;
constexpr int kStripMostThreadsY = 4;

// How a strip block shares its work: `strips` strips of small rows down, each walked by
// `sharers` threads a word (strips x sharers threads down the block).
struct StripShape {
  int strips = 1;
  int sharers = 1;
  __host__ __device__ int threads_y() const { return strips * sharers; }
};

// Full-resolution rows a strip block reads: 4 k taps at most a small row.
__host__ __device__ int strip_span(const Axis& y, int strips) {
  return y.k * (kStripRows * (strips - 1) + kStripChunks);
}

std::size_t strip_shared_bytes(const Axis& x, const Axis& y, StripShape s, const DownShape& d) {
  const std::size_t tables =
      (4 * static_cast<std::size_t>(y.k) + x.taps + strip_span(y, s.strips) + 3) / 4 * 4;
  return sizeof(float) * (tables + static_cast<std::size_t>(kStripRows) * s.threads_y() * d.band);
}

// Threads down a strip block that the default shared memory holds: kStripMostThreadsY, fewer
// for the bands of the largest sigmas, 0 where not even one fits.
int strip_threads_y(const Axis& x, const Axis& y, const DownShape& d) {
  for (int rows = kStripMostThreadsY; rows >= 1; rows /= 2) {
    if (strip_shared_bytes(x, y, {rows, 1}, d) <= kDefaultSharedBytes) return rows;
  }
  return 0;
}

// The block's shape. Two threads down (two strips, or else one strip whose phases they share)
// where that leaves the grid kStripFill blocks a multiprocessor: six such blocks a
// multiprocessor, each waiting at its barriers on fewer warps, kept the memory busier than three
// of four threads down (on an H200, 4096^2 GRAY8, 1-7 % faster from sigma 5.5 to 25). Else, at
// the largest k, whose small planes have the fewest strips, strip_threads_y() threads share one
// strip's phases (at sigma 35 and 50, k = 13: 7.2 blocks of two a multiprocessor 0.0564 /
// 0.0571 ms, of four 0.0532 / 0.0547; bench/results/gauss/h200-tile-edges/). Asked only where
// strip_threads_y() is not 0 (down_fits()).
constexpr long kStripFill = 8;
StripShape strip_shape(const Axis& x, const Axis& y, const DownShape& d, int blocks_across,
                       int sm_count) {
  const int rows = strip_threads_y(x, y, d);
  if (rows < 2) return {1, rows};
  const auto blocks = [&](int strips) {
    return static_cast<long>(blocks_across) *
           ((y.small + kStripRows * strips - 1) / (kStripRows * strips));
  };
  if (blocks(2) >= kStripFill * sm_count) return {2, 1};
  if (blocks(1) >= kStripFill * sm_count) return {1, 2};
  return {1, rows};
}

// One thread's phases of a strip down a word column (see above). kInside: the word lies within
// the frame (one vector load a row), else each sample's column through the border rule.
// kRowsInside: every row of the strip lies within the frame, row c k + p being first_row +
// c k + p; else `rows` holds them through the border rule (-1: border_value). `phase`: the
// phase table; `partial`: this thread's sums of the strip's first small row at this word, rows
// `pitch` floats apart.
template <class Io, bool kInside, bool kRowsInside>
__device__ void walk_strip(const Args& a, int x, int first_phase, int phase_step, const int* rows,
                           int first_row, const float4* phase, float* partial, int pitch) {
  static_assert(kInside || !kRowsInside, "rows taken by index are read by words");
  using W = gauss_io::Word<Io>;
  const int k = a.y.k;
  int columns[4];
  if constexpr (!kInside) {
#pragma unroll
    for (int i = 0; i < 4; ++i) columns[i] = border_index(x + i, a.frame.width, a.border);
  }
  // A row's address in one wide multiply-add: a row's bytes fit 32 bits, the product not.
  const auto stride = static_cast<std::uint32_t>(a.frame.in_stride);
  const auto row_at = [&](int ry) {
    return a.frame.in + static_cast<std::uint64_t>(static_cast<std::uint32_t>(max(ry, 0))) * stride;
  };
  // Both inside: the rows of a phase k rows apart, by a pointer stepped from the first (an add
  // a row, where its own address took five instructions).
  const std::uint64_t chunk_step = static_cast<std::uint64_t>(k) * stride;
  float acc[kStripRows][4] = {};
  for (int p = first_phase; p < k; p += phase_step) {
    int ry[kStripChunks];  // the rows through the border rule, where they are not all inside
    if constexpr (!kRowsInside) {
#pragma unroll
      for (int c = 0; c < kStripChunks; ++c) ry[c] = rows[c * k + p];
    }
    typename W::W words[kStripChunks];  // kInside: every load issued before the first is used
    if constexpr (kInside && kRowsInside) {
      const std::byte* row = row_at(first_row + p) + x * Io::kPixelBytes;
#pragma unroll
      for (int c = 0; c < kStripChunks; ++c) {
        words[c] = W::load(row, 0);
        row += chunk_step;
      }
    } else if constexpr (kInside) {
#pragma unroll
      for (int c = 0; c < kStripChunks; ++c) {
        words[c] = W::load(row_at(ry[c]), x);
      }
    }
    const float4 w = phase[p];
    const float wj[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int c = 0; c < kStripChunks; ++c) {
      float v[4];
      if constexpr (kInside) {
        W::unpack(words[c], v);
      } else {
        const std::byte* row = row_at(ry[c]);
#pragma unroll
        for (int i = 0; i < 4; ++i) v[i] = columns[i] < 0 ? 0.f : Io::load(row, columns[i], 0);
      }
      if constexpr (!kRowsInside) {
        if (ry[c] < 0 || !kInside) {
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            if (ry[c] < 0 || (!kInside && columns[i] < 0)) v[i] = a.border_value;
          }
        }
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        if (c - j < 0 || c - j >= kStripRows) continue;  // no such small row in the strip
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[c - j][i] = fmaf(wj[j], v[i], acc[c - j][i]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kStripRows; ++r) {
    *reinterpret_cast<float4*>(partial + r * pitch) =
        make_float4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
  }
}

template <class Io>
__global__ void __launch_bounds__(kDownUnits* kStripMostThreadsY, 3)
    down_strips_kernel(const Args a, const DownShape shape, const StripShape strips, Planes out) {
  extern __shared__ float shared[];
  const int k = a.y.k;
  const int span = strip_span(a.y, strips.strips);
  float4* phase = reinterpret_cast<float4*>(shared);  // [k], at a 16-byte boundary
  float* wx = shared + 4 * k;
  int* row_of = reinterpret_cast<int*>(wx + a.x.taps);
  // [strips][sharers][kStripRows][band]: each thread row's sums; the first sharer's then the
  // strip's.
  float* reduced = shared + (4 * k + a.x.taps + span + 3) / 4 * 4;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  const int threads = kDownUnits * strips.threads_y();
  // Phase p: the weights of taps p, k + p, 2 k + p, 3 k + p (0 past the last tap).
  for (int p = tid; p < k; p += threads) {
    phase[p] = make_float4(down_weight(a.y, p), down_weight(a.y, k + p),
                           down_weight(a.y, 2 * k + p), down_weight(a.y, 3 * k + p));
  }
  load_down_weights(a.x, wx);
  const int sy0 = blockIdx.y * kStripRows * strips.strips;
  const int block_y = k * (sy0 - a.y.margin) + a.y.first_tap;
  for (int r = tid; r < span; r += threads) {
    row_of[r] = border_index(block_y + r, a.frame.height, a.border);
  }
  __syncthreads();

  const int sx0 = blockIdx.x * shape.columns;
  const int first_x = a.x.k * (sx0 - a.x.margin) + a.x.first_tap;
  const int band_x = first_x - (((first_x % 4) + 4) % 4);  // the word holding the first tap
  const int strip = threadIdx.y / strips.sharers;
  const int sharer = threadIdx.y % strips.sharers;
  const int plane = kStripRows * shape.band;
  const int* rows = row_of + strip * kStripRows * k;
  const int first_row = block_y + strip * kStripRows * k;
  // The common block reads no row beyond the frame: its rows by their index, no table.
  const bool rows_inside = block_y >= 0 && block_y + span <= a.frame.height;
  for (int u = threadIdx.x; u < shape.band / 4; u += kDownUnits) {
    const int x = band_x + 4 * u;
    float* to = reduced + threadIdx.y * plane + 4 * u;
    if (x >= 0 && x + 4 <= a.frame.width) {
      if (rows_inside) {
        walk_strip<Io, true, true>(a, x, sharer, strips.sharers, rows, first_row, phase, to,
                                   shape.band);
      } else {
        walk_strip<Io, true, false>(a, x, sharer, strips.sharers, rows, first_row, phase, to,
                                    shape.band);
      }
    } else {
      walk_strip<Io, false, false>(a, x, sharer, strips.sharers, rows, first_row, phase, to,
                                   shape.band);
    }
  }
  __syncthreads();
  if (strips.sharers > 1) {  // a strip's sums added up, in phase order
    for (int i = tid; i < strips.strips * plane; i += threads) {
      float* first = reduced + (i / plane) * strips.sharers * plane + i % plane;
      float sum = first[0];
      for (int h = 1; h < strips.sharers; ++h) sum += first[h * plane];
      first[0] = sum;
    }
    __syncthreads();
  }

  const int lead = first_x - band_x;
  const float norm = a.x.norm * a.y.norm;
  for (int j = threadIdx.y; j < kStripRows * strips.strips; j += strips.threads_y()) {
    const int sy = sy0 + j;
    if (sy >= a.y.small) break;
    const float* strip_row =
        reduced + ((j / kStripRows) * strips.sharers * kStripRows + j % kStripRows) * shape.band;
    for (int i = threadIdx.x; i < shape.columns; i += kDownUnits) {
      const int sx = sx0 + i;
      if (sx >= a.x.small) break;
      const float* line = strip_row + lead + a.x.k * i;
      out.data[sy * out.stride + sx] = sum_across(a.x, wx, line) * norm;
    }
  }
}

// Pass 2 for small planes: the rest of the Gaussian (radius <= kMaxFusedRadius), both axes in
// one kernel over a tile of kBlurTile x kBlurTile samples, channel blockIdx.z. A block of 32 x 8
// threads loads the tile and its apron once into shared memory, sums its rows across into a
// second buffer (a sample a thread, unrolled), and each thread sums kBlurRows outputs of a column
// down from a window of kBlurRows + 2 R row sums held in registers. R is the radius rounded up to
// a bucket (taps past the true radius weigh 0). The small plane's own border is replicated: it
// reaches only the margins, which are never read back.
constexpr int kBlurTile = 32;
constexpr int kBlurThreadsY = 8;
constexpr int kBlurRows = kBlurTile / kBlurThreadsY;  // outputs a thread sums down
// Small planes of at least this many samples are blurred by the fused path instead.
constexpr long kLargeSmallPlane = 1L << 20;

struct BlurWeights {
  float w[kMaxFusedRadius + 1];  // centre first, 0 past the radius
  int radius = 0;
};

BlurWeights blur_weights(double sigma) {
  BlurWeights b{};
  b.radius = gauss_half_weights(sigma, static_cast<int>(std::ceil(4.0 * sigma)), b.w);
  return b;
}

template <int R>
__global__ void __launch_bounds__(kWarp* kBlurThreadsY)
    small_blur_kernel(Planes in, Planes out, int width, int height, BlurWeights wx,
                      BlurWeights wy) {
  static_assert(R <= kMaxFusedRadius && R % 4 == 0);
  constexpr int kSide = kBlurTile + 2 * R;
  __shared__ float tile[kSide][kSide + 1];
  __shared__ float across[kSide][kBlurTile];
  __shared__ float weights_x[R + 1], weights_y[R + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  // Indexed by loop counters: from shared memory, where the parameter's array would be copied
  // to the stack.
  if (tx == 0 && ty == 0) {
#pragma unroll
    for (int i = 0; i <= R; ++i) {
      weights_x[i] = wx.w[i];
      weights_y[i] = wy.w[i];
    }
  }
  const int x0 = blockIdx.x * kBlurTile, y0 = blockIdx.y * kBlurTile;
  const float* plane = in.data + blockIdx.z * in.plane;
  // Every load of the thread issued before the first store (a loop of load and store kept
  // each load behind the store before it).
  constexpr int kLoadRows = kSide / kBlurThreadsY;  // kSide is a multiple of 8
  constexpr int kLoadColumns = (kSide + kWarp - 1) / kWarp;
  float loaded[kLoadRows][kLoadColumns];
#pragma unroll
  for (int i = 0; i < kLoadRows; ++i) {
    const float* row = plane + min(max(y0 - R + ty + i * kBlurThreadsY, 0), height - 1) * in.stride;
#pragma unroll
    for (int j = 0; j < kLoadColumns; ++j) {
      const int c = tx + j * kWarp;
      if (c < kSide) loaded[i][j] = row[min(max(x0 - R + c, 0), width - 1)];
    }
  }
#pragma unroll
  for (int i = 0; i < kLoadRows; ++i) {
#pragma unroll
    for (int j = 0; j < kLoadColumns; ++j) {
      const int c = tx + j * kWarp;
      if (c < kSide) tile[ty + i * kBlurThreadsY][c] = loaded[i][j];
    }
  }
  __syncthreads();
  for (int r = ty; r < kSide; r += kBlurThreadsY) {
    const float* s = &tile[r][tx + R];
    float sum = weights_x[0] * s[0];
#pragma unroll
    for (int d = 1; d <= R; ++d) sum = fmaf(weights_x[d], s[-d] + s[d], sum);
    across[r][tx] = sum;
  }
  __syncthreads();
  float window[kBlurRows + 2 * R];
#pragma unroll
  for (int m = 0; m < kBlurRows + 2 * R; ++m) window[m] = across[ty * kBlurRows + m][tx];
  float* result = out.data + blockIdx.z * out.plane;
  const int x = x0 + tx;
#pragma unroll
  for (int o = 0; o < kBlurRows; ++o) {
    const int y = y0 + ty * kBlurRows + o;
    float sum = weights_y[0] * window[o + R];
#pragma unroll
    for (int d = 1; d <= R; ++d)
      sum = fmaf(weights_y[d], window[o + R - d] + window[o + R + d], sum);
    if (x < width && y < height) result[y * out.stride + x] = sum;
  }
}

// The small blur in the bucket of the larger radius.
cudaError_t launch_small_blur(const Planes& in, const Planes& out, int width, int height,
                              int channels, const BlurWeights& wx, const BlurWeights& wy,
                              cudaStream_t stream) {
  const dim3 grid((width + kBlurTile - 1) / kBlurTile, (height + kBlurTile - 1) / kBlurTile,
                  channels);
  const dim3 block(kWarp, kBlurThreadsY);
  const int r = std::max(wx.radius, wy.radius);
  // sigma_small > 1.9 (axis_for()): radius 8 or more.
  if (r <= 8) {
    small_blur_kernel<8><<<grid, block, 0, stream>>>(in, out, width, height, wx, wy);
  } else if (r <= 12) {
    small_blur_kernel<12><<<grid, block, 0, stream>>>(in, out, width, height, wx, wy);
  } else {
    small_blur_kernel<16><<<grid, block, 0, stream>>>(in, out, width, height, wx, wy);
  }
  return cudaPeekAtLastError();
}

// Pass 3 (up): the blurred small plane interpolated back to the frame, both axes in one kernel.
// A block writes a tile of kUpColumns x up_rows<C>() pixels, each thread four neighbouring
// columns of every eighth row: first the small rows under the tile are interpolated across to
// the tile's columns, into shared memory, and each of the tile's rows finds its small row and
// weights once; then each pixel from four of those rows.
constexpr int kUpColumns = 128;
constexpr int kUpThreadsY = 8;
template <int C>
constexpr int up_rows() {
  // Gray: 128 rows, sixteen a thread, over which each thread's setup (its columns' weights on
  // the small grid, the tile's rows across) is spread; colour: three planes' rows within the
  // static shared memory.
  return C == 1 ? 128 : 32;
}
// Small rows a tile reads: ceil((rows - 1) / k) + 4 at most, with k >= 2.
template <int C>
constexpr int up_small_rows() {
  return up_rows<C>() / 2 + 4;
}

template <class Io>
__global__ void __launch_bounds__(kWarp* kUpThreadsY)
    up_kernel(const Args a, Planes in, bool words_out) {
  constexpr int C = Io::kChannels;
  constexpr int kRows = up_rows<C>();
  __shared__ float across[C][up_small_rows<C>()][kUpColumns];
  __shared__ float4 row_weights[kRows];
  __shared__ int row_first[kRows];  // the first of the four small rows, from `first`
  const int x0 = blockIdx.x * kUpColumns + threadIdx.x * 4;
  const int y0 = blockIdx.y * kRows;
  float f;
  const int first = small_position(a.y, y0, f) - 1;
  const int last = small_position(a.y, min(y0 + kRows, a.frame.height) - 1, f) + 2;
  const int tid = threadIdx.y * kWarp + threadIdx.x;
  if (tid < kRows) {
    float w[4];
    row_first[tid] = small_position(a.y, min(y0 + tid, a.frame.height - 1), f) - 1 - first;
    catmull_rom(f, w);
    row_weights[tid] = make_float4(w[0], w[1], w[2], w[3]);
  }

  // The thread's four columns on the small grid. With k >= 2 their four samples each lie
  // among the six from the first column's first (they start at most two apart): each column's
  // weight for each of the six, zero outside its four, so that a small row costs six loads.
  const int j0 = small_position(a.x, min(x0, a.frame.width - 1), f) - 1;
  float wx[4][6];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float w[4];
    const int offset = small_position(a.x, min(x0 + i, a.frame.width - 1), f) - 1 - j0;
    catmull_rom(f, w);
#pragma unroll
    for (int m = 0; m < 6; ++m) {
      wx[i][m] = 0.f;
#pragma unroll
      for (int o = 0; o < 3; ++o) {
        if (m - o >= 0 && m - o < 4 && offset == o) wx[i][m] = w[m - o];
      }
    }
  }
  // Colour: two rows' loads in flight together (5-6 % faster on an H200; gray frames were not).
  constexpr int kAcrossUnroll = C == 1 ? 1 : 2;
#pragma unroll kAcrossUnroll
  for (int r = threadIdx.y; r <= last - first; r += kUpThreadsY) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const float* line = in.data + c * in.plane + (first + r) * in.stride + j0;
      float s[6];
#pragma unroll
      for (int m = 0; m < 6; ++m) s[m] = line[m];
      float v[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        v[i] = wx[i][0] * s[0];
#pragma unroll
        for (int m = 1; m < 6; ++m) v[i] = fmaf(wx[i][m], s[m], v[i]);
      }
      *reinterpret_cast<float4*>(&across[c][r][threadIdx.x * 4]) =
          make_float4(v[0], v[1], v[2], v[3]);
    }
  }
  __syncthreads();

  if (x0 >= a.frame.width) return;
  const bool whole = words_out && x0 + 4 <= a.frame.width;
  const int rows = min(kRows, a.frame.height - y0);
  for (int dy = threadIdx.y; dy < rows; dy += kUpThreadsY) {
    const int y = y0 + dy;
    const float4 wy = row_weights[dy];
    const int j = row_first[dy];
    std::byte* out_row = a.frame.out + static_cast<std::ptrdiff_t>(y) * a.frame.out_stride;
    float v[C][4];
#pragma unroll
    for (int c = 0; c < C; ++c) {
      float4 r[4];
#pragma unroll
      for (int d = 0; d < 4; ++d)
        r[d] = *reinterpret_cast<const float4*>(&across[c][j + d][threadIdx.x * 4]);
      v[c][0] = fmaf(wy.x, r[0].x, fmaf(wy.y, r[1].x, fmaf(wy.z, r[2].x, wy.w * r[3].x)));
      v[c][1] = fmaf(wy.x, r[0].y, fmaf(wy.y, r[1].y, fmaf(wy.z, r[2].y, wy.w * r[3].y)));
      v[c][2] = fmaf(wy.x, r[0].z, fmaf(wy.y, r[1].z, fmaf(wy.z, r[2].z, wy.w * r[3].z)));
      v[c][3] = fmaf(wy.x, r[0].w, fmaf(wy.y, r[1].w, fmaf(wy.z, r[2].w, wy.w * r[3].w)));
    }
    if constexpr (C == 1) {
      if (whole) {
        gauss_io::Word<Io>::store(out_row, x0, v[0]);
        continue;
      }
    }
    const std::byte* in_row = a.frame.in + static_cast<std::ptrdiff_t>(y) * a.frame.in_stride;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if (x0 + i >= a.frame.width) break;
#pragma unroll
      for (int c = 0; c < C; ++c) Io::store(out_row, x0 + i, c, v[c][i]);
      if constexpr (Io::kHasAlpha) Io::copy_alpha(in_row, out_row, x0 + i);
    }
  }
}

std::size_t round_up(std::size_t v, std::size_t to) {
  return (v + to - 1) / to * to;
}

// The planes of a decimation in the scratch; false where they do not fit its frames.
bool plan_planes(const Args& a, int channels, const gauss_detail::ScratchLayout& scratch,
                 Planes& small_a, Planes& small_b) {
  const std::size_t small_stride = round_up(static_cast<std::size_t>(a.x.small), 32);
  const std::size_t small_plane = small_stride * static_cast<std::size_t>(a.y.small);
  const std::size_t small_bytes = sizeof(float) * small_plane * channels;
  if (small_bytes > scratch.frame_bytes) return false;
  small_a = {scratch.frame_a, small_stride, small_plane};
  small_b = {scratch.frame_b, small_stride, small_plane};
  return true;
}

// Both down shapes (rows read by words or by pixels) within the default shared memory.
bool down_fits(const Args& a, int channels) {
  if (channels == 1 && strip_threads_y(a.x, a.y, down_shape(a.x, true)) == 0) return false;
  return down_shared_bytes(a.x, a.y, channels, down_shape(a.x, false)) <= kDefaultSharedBytes;
}

// The decimation of a width x height frame for `params` (the frame's pointers not yet set).
Args args_for(const GaussParams& params, int width, int height) {
  Args a{};
  a.frame.width = width;
  a.frame.height = height;
  a.x = axis_for(params.sigma_x, width);
  a.y = axis_for(params.sigma_y, height);
  a.border = params.border;
  a.border_value = static_cast<float>(params.border_value);
  return a;
}

// Whether the decimation's planes fit `scratch` and its down kernel the shared memory.
bool fits(const Args& a, int channels, const gauss_detail::ScratchLayout& scratch) {
  Planes p[2];
  return plan_planes(a, channels, scratch, p[0], p[1]) && down_fits(a, channels);
}

template <class Io>
cudaError_t run_decimated(const Args& a, const gauss_detail::ScratchLayout& scratch,
                          cudaStream_t stream) {
  constexpr int C = Io::kChannels;
  // Down into small_b, blur into small_a, up into the frame.
  Planes small_a{}, small_b{};
  if (!plan_planes(a, C, scratch, small_a, small_b)) return cudaErrorInvalidValue;
  // Gray frames whose rows hold whole words of four samples are read and written by words.
  const auto words = [&](const void* data, std::ptrdiff_t stride) {
    return C == 1 && rows_aligned(data, stride, 4 * Io::kPixelBytes);
  };
  const bool words_in = words(a.frame.in, a.frame.in_stride);
  const bool words_out = words(a.frame.out, a.frame.out_stride);
  const DownShape shape = down_shape(a.x, words_in);
  const int blocks_across = (a.x.small + shape.columns - 1) / shape.columns;
  if (words_in) {
    const StripShape strips =
        strip_shape(a.x, a.y, shape, blocks_across, current_device_facts().multiprocessors);
    const dim3 grid(blocks_across,
                    (a.y.small + kStripRows * strips.strips - 1) / (kStripRows * strips.strips));
    if constexpr (C == 1) {
      down_strips_kernel<Io>
          <<<grid, dim3(kDownUnits, strips.threads_y()),
             strip_shared_bytes(a.x, a.y, strips, shape), stream>>>(a, shape, strips, small_b);
    }
  } else {
    const dim3 grid(blocks_across, (a.y.small + kDownRows - 1) / kDownRows);
    down_kernel<Io>
        <<<grid, dim3(kDownUnits, kDownRows), down_shared_bytes(a.x, a.y, C, shape), stream>>>(
            a, shape, small_b);
  }
  // The small plane's blur. Large planes (k <= 3 on a 4096^2 frame) by the fused path's block
  // tile (its float rows are whole 128-byte lines), channel by channel; smaller ones, where
  // its 64 x 64 tiles would leave most of the GPU idle, in 32 x 32 tiles, all channels in one
  // launch.
  if (static_cast<long>(a.x.small) * a.y.small >= kLargeSmallPlane) {
    GaussParams rest;
    rest.sigma_x = a.x.sigma_small;
    rest.sigma_y = a.y.sigma_small;
    rest.border = BorderMode::Replicate;
    for (int c = 0; c < C; ++c) {
      const auto plane = [&](const Planes& p) {
        return ImageView{reinterpret_cast<std::byte*>(p.data + c * p.plane), a.x.small, a.y.small,
                         static_cast<std::ptrdiff_t>(p.stride * sizeof(float)),
                         PixelFormat::Gray32F};
      };
      const cudaError_t status =
          gauss_detail::launch_fused_path(rest, const_view(plane(small_b)), plane(small_a), stream);
      if (status != cudaSuccess) return status;
    }
  } else {
    const cudaError_t status =
        launch_small_blur(small_b, small_a, a.x.small, a.y.small, C, blur_weights(a.x.sigma_small),
                          blur_weights(a.y.sigma_small), stream);
    if (status != cudaSuccess) return status;
  }
  const dim3 up((a.frame.width + kUpColumns - 1) / kUpColumns,
                (a.frame.height + up_rows<C>() - 1) / up_rows<C>());
  up_kernel<Io><<<up, dim3(kWarp, kUpThreadsY), 0, stream>>>(a, small_a, words_out);
  return cudaPeekAtLastError();
}

}  // namespace

namespace gauss_detail {

bool decimated_takes(const GaussParams& params, int width, int height, PixelFormat format,
                     const ScratchLayout& scratch) noexcept {
  return decimated_params(params) &&
         fits(args_for(params, width, height), format_info(format).color_channels, scratch);
}

cudaError_t launch_decimated(const GaussParams& params, ConstImageView in, ImageView out,
                             const ScratchLayout& scratch, cudaStream_t stream) {
  if (!decimated_params(params)) return cudaErrorInvalidValue;
  Args a = args_for(params, in.width, in.height);
  if (!fits(a, format_info(in.format).color_channels, scratch)) return cudaErrorInvalidValue;
  a.frame = gauss_io::plane_of(in, out);
  cudaError_t status = cudaSuccess;
  gauss_io::with_format(in.format,
                        [&](auto io) { status = run_decimated<decltype(io)>(a, scratch, stream); });
  return status;
}

}  // namespace gauss_detail

}  // namespace starsift::cuda
