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
// frame is read (each row by the up to four small rows whose B-splines reach it, from L1 and
// L2 after the first) and written once.
//
// k = max(2, ceil(sigma / 4)), so sigma / k lies in (2, 4] and from sigma 12 in [3, 4]: the
// small grid samples the blurred frame at least every sigma / 2. Against the exact Gaussian
// (gauss_reference()) a point source's blur differs by at most 0.3 % of its peak from sigma 8
// and 1.2 % below, where k = 2 is coarse for the B-spline (measured: 0.07-0.16 % and up to
// 0.72 %), a step's by at most 0.1 % of its height (tests/gauss/test_gauss_cuda.cpp).
//
// Planes between the passes are float, one per colour channel, in the caller's scratch.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "cuda/common/launch_limits.cuh"
#include "cuda/gauss/gauss.cuh"
#include "cuda/gauss/gauss_internal.cuh"
#include "cuda/gauss/gauss_io.cuh"
#include "cuda/gauss/gauss_words.cuh"
#include "pipeline/border.hpp"

namespace starsift::cuda {

namespace {

using gauss_io::Plane;

constexpr int kWarp = 32;

// The cubic B-spline of unit knot spacing, support (-2, 2).
__host__ __device__ inline double bspline3(double t) {
  t = t < 0 ? -t : t;
  if (t < 1.0) return 2.0 / 3.0 - t * t + 0.5 * t * t * t;
  if (t < 2.0) {
    const double u = 2.0 - t;
    return u * u * u / 6.0;
  }
  return 0.0;
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
  a.k = std::max(2, static_cast<int>(std::ceil(sigma / 4.0)));
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

// Pass 1 (down), both axes in one kernel. A block makes kDownRows small rows of `columns`
// small samples. Its threads are a band of units (kWords: a word of four gray samples, else a
// pixel) across by the kDownRows small rows: each thread sums its small row's taps down its
// unit's column (the taps unrolled, so that their loads are in flight together; the rows the
// block's small rows share come from L1), into shared memory; then each small sample is summed
// across from there.
constexpr int kDownRows = 8;
constexpr int kDownUnits = 64;  // threads across a block
constexpr int kDownThreads = kDownUnits * kDownRows;
// Full-resolution samples a band holds at most. kWords: a word a thread, two at k = 3 and 4,
// where a thread's fixed work (its place, the tables, the sums across) is otherwise spread
// over few samples (measured on an H200, 4096^2 GRAY8 at sigma 10: 97 -> 91 us; four words a
// thread at k = 2 were slower, 109 -> 112 us at sigma 5). Else four pixels a thread, whose
// three channels' rows fill the shared memory.
int down_band_most(const Axis& x, bool words) {
  if (!words) return 4 * kDownUnits;
  return 4 * kDownUnits * (x.k == 3 || x.k == 4 ? 2 : 1);
}

// A down block's shape along x, chosen on the host for the axis.
struct DownShape {
  int columns = 1;  // small columns a block makes
  int band = 0;     // full-resolution samples a band holds (kWords: whole words)
};

DownShape down_shape(const Axis& x, bool words) {
  // kWords: the band starts at the word holding the first tap, up to 3 samples before it.
  const int lead = words ? 3 : 0;
  DownShape d;
  d.columns = std::max(1, (down_band_most(x, words) - lead - x.taps) / x.k + 1);
  d.band = lead + x.k * (d.columns - 1) + x.taps;
  if (words) d.band = (d.band + 3) / 4 * 4;
  return d;
}

// Full-resolution rows a down block reads.
__host__ __device__ int down_span(const Axis& y) {
  return y.k * (kDownRows - 1) + y.taps;
}

std::size_t down_shared_bytes(const Axis& x, const Axis& y, int channels, const DownShape& d) {
  const std::size_t tables = (static_cast<std::size_t>(x.taps) + y.taps + down_span(y) + 3) / 4 * 4;
  return sizeof(float) * (tables + static_cast<std::size_t>(channels) * kDownRows * d.band);
}

// The B-spline weights of an axis, unnormalised, by the whole block.
__device__ void load_down_weights(const Axis& a, float* w) {
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  for (int t = tid; t < a.taps; t += blockDim.x * blockDim.y) {
    w[t] = static_cast<float>(bspline3((a.first_tap + t - a.centre) / static_cast<double>(a.k)));
  }
}

// Three blocks a multiprocessor: 42 registers a thread, room for eight loads in flight.
template <class Io, bool kWords>
__global__ void __launch_bounds__(kDownThreads, blocks_per_sm(3, kDownThreads))
    down_kernel(const Args a, const DownShape shape, Planes out) {
  constexpr int C = Io::kChannels;
  constexpr int V = kWords ? 4 : C;  // values a unit holds
  extern __shared__ float shared[];
  float* wy = shared;
  float* wx = wy + a.y.taps;
  // The frame row of each row the block reads, through the border rule (-1: border_value),
  // found once here rather than for every tap of every thread (reflect-101 divides).
  int* row_of = reinterpret_cast<int*>(wx + a.x.taps);
  const int span = down_span(a.y);
  // [C][kDownRows][band], from a 16-byte boundary for the words' vector stores.
  float* reduced = shared + (a.y.taps + a.x.taps + span + 3) / 4 * 4;
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
  // kWords: the band starts at the word holding the first tap (floor to a multiple of 4).
  const int band_x = kWords ? first_x - (((first_x % 4) + 4) % 4) : first_x;
  const int units = kWords ? shape.band / 4 : shape.band;
  const int width = a.frame.width;
  const bool rows_inside = first_y >= 0 && first_y + a.y.taps <= a.frame.height;

  for (int u = threadIdx.x; u < units; u += kDownUnits) {
    const int x = band_x + (kWords ? 4 * u : u);
    float acc[V] = {};
    if (x >= 0 && x + (kWords ? 4 : 1) <= width) {
      const auto load = [&](const std::byte* row, float(&v)[V]) {
        if constexpr (kWords) {
          gauss_io::Word<Io>::unpack(gauss_io::Word<Io>::load(row, x), v);
        } else {
          Io::load_pixel(row, x, v);
        }
      };
      if (rows_inside) {  // the common case: loads in flight together
        const std::byte* row =
            a.frame.in + static_cast<std::ptrdiff_t>(first_y) * a.frame.in_stride;
#pragma unroll 8
        for (int t = 0; t < a.y.taps; ++t) {
          float v[V];
          load(row + t * a.frame.in_stride, v);
          const float w = wy[t];
#pragma unroll
          for (int i = 0; i < V; ++i) acc[i] = fmaf(w, v[i], acc[i]);
        }
      } else {
#pragma unroll 4
        for (int t = 0; t < a.y.taps; ++t) {
          const int ry = rows[t];
          float v[V];
          if (ry < 0) {
#pragma unroll
            for (int i = 0; i < V; ++i) v[i] = a.border_value;
          } else {
            load(a.frame.in + static_cast<std::ptrdiff_t>(ry) * a.frame.in_stride, v);
          }
          const float w = wy[t];
#pragma unroll
          for (int i = 0; i < V; ++i) acc[i] = fmaf(w, v[i], acc[i]);
        }
      }
    } else {
      // A unit beyond a side of the frame: each sample's column through the border rule once.
      constexpr int kColumns = kWords ? 4 : 1;
      int columns[kColumns];
#pragma unroll
      for (int i = 0; i < kColumns; ++i) columns[i] = border_index(x + i, width, a.border);
      for (int t = 0; t < a.y.taps; ++t) {
        const int ry = rows[t];
        const std::byte* row =
            a.frame.in + static_cast<std::ptrdiff_t>(ry < 0 ? 0 : ry) * a.frame.in_stride;
        float v[V];
        if constexpr (kWords) {
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            v[i] = ry < 0 || columns[i] < 0 ? a.border_value : Io::load(row, columns[i], 0);
          }
        } else if (ry < 0 || columns[0] < 0) {
#pragma unroll
          for (int c = 0; c < C; ++c) v[c] = a.border_value;
        } else {
          Io::load_pixel(row, columns[0], v);
        }
        const float w = wy[t];
#pragma unroll
        for (int i = 0; i < V; ++i) acc[i] = fmaf(w, v[i], acc[i]);
      }
    }
    const int column = x - band_x;
    if constexpr (kWords) {
      *reinterpret_cast<float4*>(&reduced[j * shape.band + column]) =
          make_float4(acc[0] * a.y.norm, acc[1] * a.y.norm, acc[2] * a.y.norm, acc[3] * a.y.norm);
    } else {
#pragma unroll
      for (int c = 0; c < C; ++c) {
        reduced[(c * kDownRows + j) * shape.band + column] = acc[c] * a.y.norm;
      }
    }
  }
  __syncthreads();

  if (sy >= a.y.small) return;
  const int lead = first_x - band_x;
  for (int i = threadIdx.x; i < shape.columns; i += kDownUnits) {
    const int sx = sx0 + i;
    if (sx >= a.x.small) break;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const float* line = reduced + (c * kDownRows + j) * shape.band + lead + a.x.k * i;
      float sum = 0.f;
#pragma unroll 4
      for (int t = 0; t < a.x.taps; ++t) sum = fmaf(wx[t], line[t], sum);
      out.data[c * out.plane + sy * out.stride + sx] = sum * a.x.norm;
    }
  }
}

// Pass 2 for small planes: the rest of the Gaussian (radius <= kMaxFusedRadius), both axes in
// one kernel over a tile of kBlurTile x kBlurTile samples, channel blockIdx.z. The small plane's
// own border is replicated: it reaches only the margins, which are never read back.
constexpr int kBlurApron = kMaxFusedRadius;
constexpr int kBlurTile = 16;
// Small planes of at least this many samples are blurred by the fused path instead.
constexpr long kLargeSmallPlane = 1L << 20;

struct BlurWeights {
  float w[kMaxFusedRadius + 1];  // centre first
  int radius = 0;
};

BlurWeights blur_weights(double sigma) {
  BlurWeights b{};
  b.radius = gauss_half_weights(sigma, static_cast<int>(std::ceil(4.0 * sigma)), b.w);
  return b;
}

__global__ void __launch_bounds__(256)
    small_blur_kernel(Planes in, Planes out, int width, int height, BlurWeights wx,
                      BlurWeights wy) {
  constexpr int kTile = kBlurTile;
  constexpr int kSide = kTile + 2 * kBlurApron;
  __shared__ float tile[kSide][kSide + 1];
  __shared__ float across[kSide][kTile + 1];
  __shared__ float weights_x[kBlurApron + 1], weights_y[kBlurApron + 1];
  const int threads = blockDim.x * blockDim.y;
  const int tid = threadIdx.y * blockDim.x + threadIdx.x;
  // Indexed by a loop counter: from shared memory, where the parameter's array would be copied
  // to the stack.
  if (tid == 0) {
#pragma unroll
    for (int i = 0; i <= kBlurApron; ++i) {
      weights_x[i] = wx.w[i];
      weights_y[i] = wy.w[i];
    }
  }
  const int x0 = blockIdx.x * kTile, y0 = blockIdx.y * kTile;
  const float* plane = in.data + blockIdx.z * in.plane;
  const int h = kTile + 2 * wy.radius, w = kTile + 2 * wx.radius;
  for (int i = tid; i < h * w; i += threads) {
    const int ty = i / w, tx = i % w;
    const int sy = min(max(y0 - wy.radius + ty, 0), height - 1);
    const int sx = min(max(x0 - wx.radius + tx, 0), width - 1);
    tile[ty][tx] = plane[sy * in.stride + sx];
  }
  __syncthreads();
  for (int i = tid; i < h * kTile; i += threads) {
    const int ty = i / kTile, tx = i % kTile;
    const float* s = &tile[ty][tx + wx.radius];
    float sum = weights_x[0] * s[0];
    for (int d = 1; d <= wx.radius; ++d) sum = fmaf(weights_x[d], s[-d] + s[d], sum);
    across[ty][tx] = sum;
  }
  __syncthreads();
  float* result = out.data + blockIdx.z * out.plane;
  for (int i = tid; i < kTile * kTile; i += threads) {
    const int ty = i / kTile, tx = i % kTile;
    if (y0 + ty >= height || x0 + tx >= width) continue;
    float sum = weights_y[0] * across[ty + wy.radius][tx];
    for (int d = 1; d <= wy.radius; ++d) {
      sum =
          fmaf(weights_y[d], across[ty + wy.radius - d][tx] + across[ty + wy.radius + d][tx], sum);
    }
    result[(y0 + ty) * out.stride + x0 + tx] = sum;
  }
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
  return C == 1 ? 64 : 32;  // colour: three planes' rows within the static shared memory
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

template <class Io>
constexpr std::size_t sizeof_sample() {
  if constexpr (std::is_same_v<Io, gauss_io::Gray8>) return 1;
  if constexpr (std::is_same_v<Io, gauss_io::Gray16>) return 2;
  return 4;
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
  for (bool words : {false, true}) {
    if (words && channels != 1) continue;
    if (down_shared_bytes(a.x, a.y, channels, down_shape(a.x, words)) > kDefaultSharedBytes) {
      return false;
    }
  }
  return true;
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
    return C == 1 && rows_aligned(data, stride, 4 * sizeof_sample<Io>());
  };
  const bool words_in = words(a.frame.in, a.frame.in_stride);
  const bool words_out = words(a.frame.out, a.frame.out_stride);
  const DownShape shape = down_shape(a.x, words_in);
  const dim3 down_grid((a.x.small + shape.columns - 1) / shape.columns,
                       (a.y.small + kDownRows - 1) / kDownRows);
  const std::size_t down_bytes = down_shared_bytes(a.x, a.y, C, shape);
  bool by_words = false;
  if constexpr (C == 1) {
    by_words = words_in;
    if (by_words) {
      down_kernel<Io, true>
          <<<down_grid, dim3(kDownUnits, kDownRows), down_bytes, stream>>>(a, shape, small_b);
    }
  }
  if (!by_words) {
    down_kernel<Io, false>
        <<<down_grid, dim3(kDownUnits, kDownRows), down_bytes, stream>>>(a, shape, small_b);
  }
  // The small plane's blur. Large planes (k <= 3 on a 4096^2 frame) by the fused path's block
  // tile (its float rows are whole 128-byte lines), channel by channel; smaller ones, where
  // its 64 x 64 tiles would leave most of the GPU idle, in 16 x 16 tiles, all channels in one
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
    constexpr int T = kBlurTile;
    const dim3 grid((a.x.small + T - 1) / T, (a.y.small + T - 1) / T, C);
    small_blur_kernel<<<grid, dim3(kWarp, 8), 0, stream>>>(small_b, small_a, a.x.small, a.y.small,
                                                           blur_weights(a.x.sigma_small),
                                                           blur_weights(a.y.sigma_small));
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
