// SPDX-License-Identifier: LGPL-2.1-or-later
// The fused Gaussian for gray frames: each block blurs a 64 x 64 tile in three phases through
// shared memory, so that every sample is converted once, every tap is one fused multiply-add on
// operands already in registers, and the warps of several blocks a SM hide each other's latency.
// It replaced a kernel in which each warp walked down a strip of columns, its neighbours'
// samples by shuffles and a ring of row sums: that one issued 68 instructions a pixel at sigma
// 0.5 with a quarter of the SM's warps active; this one is 1.6-2.9x faster on every gray
// format and sigma (bench/results/gauss/h200-tile/).
//
// 1. Load: the tile's input with a halo of R rows and Ra = R rounded up to whole words of
//    columns, a word (four samples) per thread and step, as floats. Words across the frame's
//    edge are read sample by sample through the border mode.
// 2. Rows: 16 threads a row, four neighbouring columns each, read as aligned 16-byte words
//    (whole quarter-warps on 128 contiguous bytes: no bank conflict), written as one.
// 3. Columns: each thread one column and 16 output rows, its 16 + 2 R row sums loaded once
//    into registers (the loop unrolled, so each is a register named at compile time).
//
// The sums are gauss_direct.cu's, in the same order: w0 x0 + sum_i w_i (x_-i + x_i) by fused
// multiply-adds, rows then columns, as the other direct paths sum.
// The radius is a template bucket (2, 4, 8, 12, 16); a smaller radius in a bucket has zero
// weights beyond it (and skips them for floats, where 0 * inf would be NaN).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "cuda/gauss/gauss.cuh"
#include "cuda/gauss/gauss_internal.cuh"
#include "cuda/gauss/gauss_io.cuh"
#include "cuda/gauss/gauss_words.cuh"
#include "pipeline/border.hpp"

namespace starsift::cuda {

namespace {

constexpr int kTileW = 64, kTileH = 64;
constexpr int kThreads = 256;
constexpr int kWord = 4;                            // samples a word
constexpr int kSegments = kTileW / kWord;           // threads a row in the row pass
constexpr int kRun = kTileH / (kThreads / kTileW);  // output rows a thread in the column pass
static_assert(kThreads % kTileW == 0 && kTileH % (kThreads / kTileW) == 0);

struct TileArgs {
  gauss_io::Plane plane;
  float wx[kMaxFusedRadius + 1];  // zero beyond rx
  float wy[kMaxFusedRadius + 1];  // zero beyond ry
  int rx;
  int ry;
  BorderMode border;
  float border_value;
};

template <int R>
struct Tile {
  static constexpr int kHaloX = (R + kWord - 1) / kWord * kWord;  // whole words
  static constexpr int kInWidth = kTileW + 2 * kHaloX;            // floats, whole words
  static constexpr int kRows = kTileH + 2 * R;
  static constexpr std::size_t kSharedBytes = sizeof(float) * kRows * (kInWidth + kTileW);
};

template <class Io, int R>
__global__ void __launch_bounds__(kThreads) gauss_gray_tile(const TileArgs a) {
  using Wd = gauss_io::Word<Io>;
  using T = Tile<R>;
  constexpr bool kGuard = !std::is_same_v<Io, gauss_io::Gray8> &&
                          !std::is_same_v<Io, gauss_io::Gray16>;  // floats may be inf
  extern __shared__ float4 shared_words[];
  float* const input = reinterpret_cast<float*>(shared_words);  // kRows x kInWidth
  float* const sums = input + T::kRows * T::kInWidth;           // kRows x kTileW
  const gauss_io::Plane& p = a.plane;
  const int x0 = blockIdx.x * kTileW, y0 = blockIdx.y * kTileH;

  // 1. Input rows y0 - R .. y0 + kTileH + R - 1, columns x0 - kHaloX on.
  constexpr int kRowWords = T::kInWidth / kWord;
  for (int k = threadIdx.x; k < T::kRows * kRowWords; k += kThreads) {
    const int ly = k / kRowWords, lw = k - ly * kRowWords;
    const int sy = border_index(y0 - R + ly, p.height, a.border);
    const int x = x0 - T::kHaloX + lw * kWord;
    const std::byte* row = p.in + static_cast<std::ptrdiff_t>(sy < 0 ? 0 : sy) * p.in_stride;
    float v[kWord];
    if (sy >= 0 && x >= 0 && x + kWord <= p.width) {
      Wd::unpack(Wd::load(row, x), v);
    } else {
#pragma unroll
      for (int i = 0; i < kWord; ++i) {
        const int sx = border_index(x + i, p.width, a.border);
        v[i] = sy < 0 || sx < 0 ? a.border_value : Io::load(row, sx, 0);
      }
      Wd::unpack(Wd::pack(v), v);  // a border value as the format holds it
    }
    reinterpret_cast<float4*>(input)[k] = make_float4(v[0], v[1], v[2], v[3]);
  }
  __syncthreads();

  // 2. Row sums of the tile's columns on every input row.
  for (int k = threadIdx.x; k < T::kRows * kSegments; k += kThreads) {
    const int ly = k / kSegments, segment = k - ly * kSegments;
    // Columns x0 + 4 segment - kHaloX .. x0 + 4 segment + 3 + kHaloX.
    const float4* from =
        reinterpret_cast<const float4*>(input + ly * T::kInWidth + segment * kWord);
    float f[kWord + 2 * T::kHaloX];
#pragma unroll
    for (int w = 0; w < (kWord + 2 * T::kHaloX) / kWord; ++w) {
      const float4 q = from[w];
      f[w * kWord] = q.x;
      f[w * kWord + 1] = q.y;
      f[w * kWord + 2] = q.z;
      f[w * kWord + 3] = q.w;
    }
    float h[kWord];
#pragma unroll
    for (int c = 0; c < kWord; ++c) {
      const float* centre = f + T::kHaloX + c;
      float v = a.wx[0] * centre[0];
#pragma unroll
      for (int i = 1; i <= R; ++i) {
        if (kGuard && i > a.rx) break;
        v = fmaf(a.wx[i], centre[-i] + centre[i], v);
      }
      h[c] = v;
    }
    reinterpret_cast<float4*>(sums)[k] = make_float4(h[0], h[1], h[2], h[3]);
  }
  __syncthreads();

  // 3. Column sums: this thread's column, rows run * kRun .. + kRun - 1 of the tile.
  const int column = threadIdx.x % kTileW, run = threadIdx.x / kTileW;
  const int x = x0 + column;
  if (x >= p.width) return;
  float col[kRun + 2 * R];
#pragma unroll
  for (int i = 0; i < kRun + 2 * R; ++i) col[i] = sums[(run * kRun + i) * kTileW + column];
#pragma unroll
  for (int i = 0; i < kRun; ++i) {
    const int y = y0 + run * kRun + i;
    if (y >= p.height) return;
    const float* centre = col + R + i;
    float v = a.wy[0] * centre[0];
#pragma unroll
    for (int j = 1; j <= R; ++j) {
      if (kGuard && j > a.ry) break;
      v = fmaf(a.wy[j], centre[-j] + centre[j], v);
    }
    Wd::store_one(p.out + static_cast<std::ptrdiff_t>(y) * p.out_stride, x, v);
  }
}

template <class Io, int R>
cudaError_t launch_as(const TileArgs& args, cudaStream_t stream) {
  constexpr std::size_t smem = Tile<R>::kSharedBytes;
  if (smem > gauss_detail::kDefaultSharedBytes) {  // opt in, per device (gauss_direct.cu)
    const cudaError_t opted =
        cudaFuncSetAttribute(gauss_gray_tile<Io, R>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(smem));
    if (opted != cudaSuccess) return opted;
  }
  const dim3 grid((args.plane.width + kTileW - 1) / kTileW,
                  (args.plane.height + kTileH - 1) / kTileH);
  gauss_gray_tile<Io, R><<<grid, kThreads, smem, stream>>>(args);
  return cudaPeekAtLastError();
}

template <class Io>
cudaError_t launch_bucket(const TileArgs& args, cudaStream_t stream) {
  const int r = args.rx > args.ry ? args.rx : args.ry;
  if (r <= 2) return launch_as<Io, 2>(args, stream);
  if (r <= 4) return launch_as<Io, 4>(args, stream);
  if (r <= 8) return launch_as<Io, 8>(args, stream);
  if (r <= 12) return launch_as<Io, 12>(args, stream);
  return launch_as<Io, 16>(args, stream);
}

}  // namespace

namespace gauss_detail {

bool gray_tile_takes(const GaussParams& params, ConstImageView in, ImageView out) noexcept {
  const FormatInfo& info = format_info(in.format);
  if (info.channels != 1) return false;
  const int radius = std::max(params.effective_radius_x(), params.effective_radius_y());
  if (radius > kMaxFusedRadius) return false;
  // Whole words: the rows of the input aligned to four samples (the output is written by
  // sample).
  const auto word = static_cast<std::uintptr_t>(kWord * info.bytes_per_sample);
  const auto bits =
      reinterpret_cast<std::uintptr_t>(in.data) | static_cast<std::uintptr_t>(in.stride);
  (void)out;
  return bits % word == 0;
}

cudaError_t launch_gray_tile(const GaussParams& params, ConstImageView in, ImageView out,
                             cudaStream_t stream) {
  TileArgs args{};
  args.plane = gauss_io::plane_of(in, out);
  args.rx = params.effective_radius_x();
  args.ry = params.effective_radius_y();
  if (args.rx > kMaxFusedRadius || args.ry > kMaxFusedRadius) return cudaErrorInvalidValue;
  // Zero beyond each radius: the bucket's unrolled taps past it add nothing.
  args.rx = gauss_half_weights(params.sigma_x, args.rx, args.wx);
  args.ry = gauss_half_weights(params.sigma_y, args.ry, args.wy);
  args.border = params.border;
  args.border_value = static_cast<float>(params.border_value);
  switch (in.format) {
    case PixelFormat::Gray8:
      return launch_bucket<gauss_io::Gray8>(args, stream);
    case PixelFormat::Gray16:
      return launch_bucket<gauss_io::Gray16>(args, stream);
    case PixelFormat::Gray32F:
      return launch_bucket<gauss_io::Gray32F>(args, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace gauss_detail

}  // namespace starsift::cuda
