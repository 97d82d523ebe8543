// SPDX-License-Identifier: LGPL-2.1-or-later
// The Gaussian's decimated path, for sigma beyond the fused radii: the frame reduced by an
// integer factor k per axis, the small plane blurred by the rest of the Gaussian, and
// interpolated back. Its cost per pixel does not grow with sigma: k grows with it, so the
// small plane's blur stays within the fused path's radii (sigma_small < 4).
//
// 1. Down, rows then columns: small sample i of an axis is the cubic B-spline of width 4 k
//    centred on full-resolution position k i + (k - 1) / 2, over the frame extended by the
//    border mode (so every border mode means what it means on the full frame). The B-spline is
//    the anti-aliasing filter: its response falls as the fourth power beyond the small grid's
//    Nyquist frequency (a box's, as the first), and its variance is k^2 / 3.
// 2. The small plane, which reaches `margin` samples beyond the frame on each side, is blurred
//    by the fused path's shared-memory tiles with sigma_small = sqrt(sigma^2 - k^2 / 3) / k,
//    so the variances add up to sigma^2. The margin covers that blur's radius and
//    the interpolation's reach, so the small plane's own border never reaches a sample that is
//    read back.
// 3. Up, both axes in one kernel: Catmull-Rom cubic interpolation, which reproduces
//    quadratics and so adds no variance of its own.
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

#include "cuda/gauss/gauss.cuh"
#include "cuda/gauss/gauss_internal.cuh"
#include "cuda/gauss/gauss_io.cuh"
#include "cuda/gauss/gauss_words.cuh"
#include "pipeline/border.hpp"

namespace starsift::cuda {

namespace {

using gauss_io::Plane;

constexpr int kWarp = 32;
constexpr int kBlockX = 128;
constexpr int kBlockY = 2;

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

// The down weights of an axis, unnormalised, into shared memory by the whole block.
__device__ void load_down_weights(const Axis& a, float* w) {
  const int threads = blockDim.x * blockDim.y;
  for (int t = threadIdx.y * blockDim.x + threadIdx.x; t < a.taps; t += threads) {
    w[t] = static_cast<float>(bspline3((a.first_tap + t - a.centre) / static_cast<double>(a.k)));
  }
  __syncthreads();
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

// Pass 1: each column's small samples, over the frame extended by the border mode. kWords
// (gray frames whose rows hold whole words): a thread takes four columns, one vector load a
// tap (GRAY8: 32 bits), which reads the frame with a quarter of the instructions; else one
// pixel, all its colour channels.
template <class Io, bool kWords>
__global__ void __launch_bounds__(kBlockX* kBlockY) down_rows_kernel(const Args a, Planes out) {
  extern __shared__ float w[];
  load_down_weights(a.y, w);
  constexpr int V = kWords ? 4 : Io::kChannels;  // values a thread sums
  const int x = (kWords ? 4 : 1) * (blockIdx.x * kBlockX + threadIdx.x);
  const int s = blockIdx.y * kBlockY + threadIdx.y;
  if (x >= a.frame.width || s >= a.y.small) return;
  const bool whole = x + 4 <= a.frame.width;  // kWords: else the frame's last, partial word
  const auto load = [&](const std::byte* row, float(&v)[V]) {
    if constexpr (kWords) {
      using Wd = gauss_io::Word<Io>;
      if (whole) {
        Wd::unpack(Wd::load(row, x), v);
      } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) v[i] = Io::load(row, min(x + i, a.frame.width - 1), 0);
      }
    } else {
      Io::load_pixel(row, x, v);
    }
  };
  float sum[V] = {};
  const int y0 = a.y.k * (s - a.y.margin) + a.y.first_tap;
  if (y0 >= 0 && y0 + a.y.taps <= a.frame.height) {  // inside the frame: no border rule
    const std::byte* row = a.frame.in + static_cast<std::ptrdiff_t>(y0) * a.frame.in_stride;
    for (int t = 0; t < a.y.taps; ++t, row += a.frame.in_stride) {
      float v[V];
      load(row, v);
#pragma unroll
      for (int i = 0; i < V; ++i) sum[i] = fmaf(w[t], v[i], sum[i]);
    }
  } else {
    for (int t = 0; t < a.y.taps; ++t) {
      const int sy = border_index(y0 + t, a.frame.height, a.border);
      float v[V];
      if (sy < 0) {
#pragma unroll
        for (int i = 0; i < V; ++i) v[i] = a.border_value;
      } else {
        load(a.frame.in + static_cast<std::ptrdiff_t>(sy) * a.frame.in_stride, v);
      }
#pragma unroll
      for (int i = 0; i < V; ++i) sum[i] = fmaf(w[t], v[i], sum[i]);
    }
  }
  if constexpr (kWords) {
    // The plane's rows are whole 128-byte lines: the word lies in the row's padding at worst.
    *reinterpret_cast<float4*>(out.data + s * out.stride + x) =
        make_float4(sum[0] * a.y.norm, sum[1] * a.y.norm, sum[2] * a.y.norm, sum[3] * a.y.norm);
  } else {
#pragma unroll
    for (int c = 0; c < V; ++c) out.data[c * out.plane + s * out.stride + x] = sum[c] * a.y.norm;
  }
}

// Pass 2: each small row's samples along x; columns beyond the frame by the border mode.
__global__ void __launch_bounds__(kBlockX* kBlockY)
    down_columns_kernel(const Args a, int channels, Planes in, Planes out) {
  extern __shared__ float w[];
  load_down_weights(a.x, w);
  const int s = blockIdx.x * kBlockX + threadIdx.x;
  const int row = blockIdx.y * kBlockY + threadIdx.y;
  if (s >= a.x.small || row >= a.y.small) return;
  const int x0 = a.x.k * (s - a.x.margin) + a.x.first_tap;
  const bool inside = x0 >= 0 && x0 + a.x.taps <= a.frame.width;  // no border rule
  for (int c = 0; c < channels; ++c) {
    const float* line = in.data + c * in.plane + row * in.stride;
    float sum = 0.f;
    if (inside) {
#pragma unroll 4
      for (int t = 0; t < a.x.taps; ++t) sum = fmaf(w[t], line[x0 + t], sum);
    } else {
      for (int t = 0; t < a.x.taps; ++t) {
        const int sx = border_index(x0 + t, a.frame.width, a.border);
        sum = fmaf(w[t], sx < 0 ? a.border_value : line[sx], sum);
      }
    }
    out.data[c * out.plane + row * out.stride + s] = sum * a.x.norm;
  }
}

// Pass 4: the blurred small plane interpolated back to the frame, both axes in one kernel.
// A block writes a tile of kUpColumns x kUpRows pixels, each thread four neighbouring
// columns of four rows: first the small rows under the tile are interpolated across to the
// tile's columns, into shared memory; then each pixel from four of those rows.
constexpr int kUpColumns = 128;
constexpr int kUpRows = 32;
constexpr int kUpThreadsY = 8;
// Small rows a tile reads: ceil((kUpRows - 1) / k) + 4 at most, with k >= 2.
constexpr int kUpSmallRows = kUpRows / 2 + 4;

template <class Io>
__global__ void __launch_bounds__(kWarp* kUpThreadsY)
    up_kernel(const Args a, Planes in, bool words_out) {
  constexpr int C = Io::kChannels;
  __shared__ float across[C][kUpSmallRows][kUpColumns];
  const int x0 = blockIdx.x * kUpColumns + threadIdx.x * 4;
  const int y0 = blockIdx.y * kUpRows;
  float f;
  const int first = small_position(a.y, y0, f) - 1;
  const int last = small_position(a.y, min(y0 + kUpRows, a.frame.height) - 1, f) + 2;

  // The tile's columns on the small grid: the sample before each and its weights.
  int jx[4];
  float wx[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    jx[i] = small_position(a.x, min(x0 + i, a.frame.width - 1), f) - 1;
    catmull_rom(f, wx[i]);
  }
  for (int r = threadIdx.y; r <= last - first; r += kUpThreadsY) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const float* line = in.data + c * in.plane + (first + r) * in.stride;
      float v[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float* s = line + jx[i];
        v[i] = fmaf(wx[i][0], s[0], fmaf(wx[i][1], s[1], fmaf(wx[i][2], s[2], wx[i][3] * s[3])));
      }
      *reinterpret_cast<float4*>(&across[c][r][threadIdx.x * 4]) =
          make_float4(v[0], v[1], v[2], v[3]);
    }
  }
  __syncthreads();

  if (x0 >= a.frame.width) return;
  const bool whole = words_out && x0 + 4 <= a.frame.width;
  for (int dy = threadIdx.y; dy < kUpRows; dy += kUpThreadsY) {
    const int y = y0 + dy;
    if (y >= a.frame.height) break;
    float wy[4];
    const int j = small_position(a.y, y, f) - 1 - first;
    catmull_rom(f, wy);
    std::byte* out_row = a.frame.out + static_cast<std::ptrdiff_t>(y) * a.frame.out_stride;
    float v[C][4];
#pragma unroll
    for (int c = 0; c < C; ++c) {
      float4 r[4];
#pragma unroll
      for (int d = 0; d < 4; ++d)
        r[d] = *reinterpret_cast<const float4*>(&across[c][j + d][threadIdx.x * 4]);
      v[c][0] = fmaf(wy[0], r[0].x, fmaf(wy[1], r[1].x, fmaf(wy[2], r[2].x, wy[3] * r[3].x)));
      v[c][1] = fmaf(wy[0], r[0].y, fmaf(wy[1], r[1].y, fmaf(wy[2], r[2].y, wy[3] * r[3].y)));
      v[c][2] = fmaf(wy[0], r[0].z, fmaf(wy[1], r[1].z, fmaf(wy[2], r[2].z, wy[3] * r[3].z)));
      v[c][3] = fmaf(wy[0], r[0].w, fmaf(wy[1], r[1].w, fmaf(wy[2], r[2].w, wy[3] * r[3].w)));
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
                 Planes& wide, Planes& small_a, Planes& small_b) {
  const std::size_t wide_stride = round_up(static_cast<std::size_t>(a.frame.width), 32);
  const std::size_t wide_plane = wide_stride * static_cast<std::size_t>(a.y.small);
  const std::size_t small_stride = round_up(static_cast<std::size_t>(a.x.small), 32);
  const std::size_t small_plane = small_stride * static_cast<std::size_t>(a.y.small);
  const std::size_t wide_bytes = sizeof(float) * wide_plane * channels;
  const std::size_t small_bytes = sizeof(float) * small_plane * channels;
  if (wide_bytes > scratch.frame_bytes || small_bytes > scratch.frame_bytes) return false;
  wide = {scratch.frame_a, wide_stride, wide_plane};
  small_a = {scratch.frame_a, small_stride, small_plane};
  small_b = {scratch.frame_b, small_stride, small_plane};
  return true;
}

template <class Io>
cudaError_t run_decimated(const Args& a, const gauss_detail::ScratchLayout& scratch,
                          cudaStream_t stream) {
  constexpr int C = Io::kChannels;
  // Down rows into `wide`, down columns into small_b, blur into small_a (`wide` is read by
  // then), up into the frame.
  Planes wide{}, small_a{}, small_b{};
  if (!plan_planes(a, C, scratch, wide, small_a, small_b)) return cudaErrorInvalidValue;
  // Gray frames whose rows hold whole words of four samples are read and written by words.
  const auto words = [&](const void* data, std::ptrdiff_t stride) {
    return C == 1 && rows_aligned(data, stride, 4 * sizeof_sample<Io>());
  };
  const bool words_in = words(a.frame.in, a.frame.in_stride);
  const bool words_out = words(a.frame.out, a.frame.out_stride);
  const dim3 block(kBlockX, kBlockY);
  const auto grid = [&](int nx, int ny) {
    return dim3((nx + kBlockX - 1) / kBlockX, (ny + kBlockY - 1) / kBlockY);
  };
  bool by_words = false;
  if constexpr (C == 1) {
    by_words = words_in;
    if (by_words) {
      down_rows_kernel<Io, true>
          <<<grid((a.frame.width + 3) / 4, a.y.small), block, sizeof(float) * a.y.taps, stream>>>(
              a, wide);
    }
  }
  if (!by_words) {
    down_rows_kernel<Io, false>
        <<<grid(a.frame.width, a.y.small), block, sizeof(float) * a.y.taps, stream>>>(a, wide);
  }
  down_columns_kernel<<<grid(a.x.small, a.y.small), block, sizeof(float) * a.x.taps, stream>>>(
      a, C, wide, small_b);
  // The small plane's blur, channel by channel, by the fused path (the block tile: its float rows
  // are whole 128-byte lines): its radius is at most 16. Replicate borders: they reach only the
  // margins, never read back.
  GaussParams rest;
  rest.sigma_x = a.x.sigma_small;
  rest.sigma_y = a.y.sigma_small;
  rest.border = BorderMode::Replicate;
  for (int c = 0; c < C; ++c) {
    const auto plane = [&](const Planes& p) {
      return ImageView{reinterpret_cast<std::byte*>(p.data + c * p.plane), a.x.small, a.y.small,
                       static_cast<std::ptrdiff_t>(p.stride * sizeof(float)), PixelFormat::Gray32F};
    };
    const cudaError_t status =
        gauss_detail::launch_fused_path(rest, const_view(plane(small_b)), plane(small_a), stream);
    if (status != cudaSuccess) return status;
  }
  const dim3 up((a.frame.width + kUpColumns - 1) / kUpColumns,
                (a.frame.height + kUpRows - 1) / kUpRows);
  up_kernel<Io><<<up, dim3(kWarp, kUpThreadsY), 0, stream>>>(a, small_a, words_out);
  return cudaPeekAtLastError();
}

}  // namespace

namespace gauss_detail {

bool decimated_takes(const GaussParams& params, int width, int height, PixelFormat format,
                     const ScratchLayout& scratch) noexcept {
  if (!decimated_params(params)) return false;
  Args a{};
  a.frame.width = width;
  a.frame.height = height;
  a.x = axis_for(params.sigma_x, width);
  a.y = axis_for(params.sigma_y, height);
  Planes p[3];
  return plan_planes(a, format_info(format).color_channels, scratch, p[0], p[1], p[2]);
}

cudaError_t launch_decimated(const GaussParams& params, ConstImageView in, ImageView out,
                             const ScratchLayout& scratch, cudaStream_t stream) {
  if (!decimated_takes(params, in.width, in.height, in.format, scratch)) {
    return cudaErrorInvalidValue;
  }
  Args a{};
  a.frame = gauss_io::plane_of(in, out);
  a.x = axis_for(params.sigma_x, in.width);
  a.y = axis_for(params.sigma_y, in.height);
  a.border = params.border;
  a.border_value = static_cast<float>(params.border_value);
  cudaError_t status = cudaSuccess;
  gauss_io::with_format(in.format,
                        [&](auto io) { status = run_decimated<decltype(io)>(a, scratch, stream); });
  return status;
}

}  // namespace gauss_detail

}  // namespace starsift::cuda
