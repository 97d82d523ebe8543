// SPDX-License-Identifier: LGPL-2.1-or-later
// The fused Gaussian for gray frames, in registers: each warp walks down a strip of columns,
// each thread owning four neighbouring columns, read and written as one vector word (a
// 32-bit word of GRAY8, 64 of GRAY16, 128 of GRAY32F).
//
// Along x: a thread's neighbours within the radius are in the words of the lanes beside it,
// fetched with warp shuffles, so no shared memory and no barrier. The L = ceil(R / 4) lanes
// at each side of the warp only lend their words: each warp writes (32 - 2 L) * 4 columns.
// Along y: each thread keeps the last 2 R + 1 row sums of its own columns in a ring in
// shared memory (its own slots only, so again no barrier), and from the row 2 R after the
// strip's first it writes one output row per input row.
//
// The radius is a template bucket (2, 4, 8, 12, 16: sigma 0.5, 1, 2, 3, 4 at ceil(4 sigma)),
// so every tap is unrolled with its index known at compile time; a smaller radius in a
// bucket has zero weights beyond it (and skips them for floats, where 0 * inf would be NaN).
// The sums are gauss_direct.cu's: w0 x0 + sum_i w_i (x_-i + x_i) by fused multiply-adds.
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

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 4;
// Output rows per warp: enough to amortise the 2 R extra input rows, few enough that a frame
// makes many warps.
template <int R>
constexpr int strip_rows() {
  return R <= 4 ? 32 : 64;
}
constexpr int kLanesColumns = 4;

struct StripArgs {
  gauss_io::Plane plane;
  float wx[kMaxFusedRadius + 1];  // zero beyond rx
  float wy[kMaxFusedRadius + 1];  // zero beyond ry
  int rx;
  int ry;
  BorderMode border;
  float border_value;
};

template <class Io, int R>
__global__ void __launch_bounds__(kWarp* kWarpsPerBlock) gauss_strips(const StripArgs a) {
  using Wd = gauss_io::Word<Io>;
  constexpr int P = kLanesColumns;
  constexpr int L = (R + P - 1) / P;  // lanes lending their words at each side
  constexpr int S = 2 * R + 1;        // rows in the ring
  constexpr bool kGuard = !std::is_same_v<Io, gauss_io::Gray8> &&
                          !std::is_same_v<Io, gauss_io::Gray16>;  // floats may be inf
  extern __shared__ float rings[];
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  float* const ring = rings + warp * S * P * kWarp;
  const gauss_io::Plane& p = a.plane;
  const int out_columns = (kWarp - 2 * L) * P;
  const int strip = blockIdx.x * kWarpsPerBlock + warp;
  if (strip * out_columns >= p.width) return;          // whole warps: they shuffle
  const int x = strip * out_columns + (lane - L) * P;  // this lane's first column
  const bool writes = lane >= L && lane < kWarp - L && x < p.width;
  const bool inside = x >= 0 && x + P <= p.width;  // the word lies in the frame
  const int y0 = blockIdx.y * strip_rows<R>();
  const int rows = min(strip_rows<R>(), p.height - y0);

  // Input row t of the strip (y0 - R + t) as this lane's word.
  const auto fetch = [&](int t) -> typename Wd::W {
    const int sy = border_index(y0 - R + t, p.height, a.border);
    const std::byte* row = p.in + static_cast<std::ptrdiff_t>(sy < 0 ? 0 : sy) * p.in_stride;
    if (sy >= 0 && inside) return Wd::load(row, x);
    // The frame's left and right edges (and constant rows): sample by sample, then packed as
    // a word so the neighbours can take it like any other.
    float v[P];
#pragma unroll
    for (int k = 0; k < P; ++k) {
      const int sx = border_index(x + k, p.width, a.border);
      v[k] = sy < 0 || sx < 0 ? a.border_value : Io::load(row, sx, 0);
    }
    return Wd::pack(v);
  };
  // Rows are fetched kAhead rows before they are used, so a warp's loads overlap its
  // arithmetic instead of each row waiting for memory in turn.
  const int total = rows + 2 * R;
  typename Wd::W q0 = fetch(0);
  typename Wd::W q1 = total > 1 ? fetch(1) : q0;
  typename Wd::W q2 = total > 2 ? fetch(2) : q0;
  typename Wd::W q3 = total > 3 ? fetch(3) : q0;

  int slot = 0;  // where the next row sum goes; after the write, the oldest row's
  for (int t = 0; t < total; ++t) {
    const typename Wd::W own = q0;
    q0 = q1;
    q1 = q2;
    q2 = q3;
    if (t + 4 < total) q3 = fetch(t + 4);
    float f[(2 * L + 1) * P];
    Wd::unpack(own, f + L * P);
#pragma unroll
    for (int d = 1; d <= L; ++d) {
      Wd::unpack(Wd::shfl_up(own, d), f + (L - d) * P);
      Wd::unpack(Wd::shfl_down(own, d), f + (L + d) * P);
    }
#pragma unroll
    for (int k = 0; k < P; ++k) {
      const float* c = f + L * P + k;
      float h = a.wx[0] * c[0];
#pragma unroll
      for (int i = 1; i <= R; ++i) {
        if (kGuard && i > a.rx) break;
        h = fmaf(a.wx[i], c[-i] + c[i], h);
      }
      ring[(slot * P + k) * kWarp + lane] = h;
    }
    slot = slot + 1 == S ? 0 : slot + 1;
    if (t < 2 * R) continue;

    // Output row y0 + t - 2 R from the ring's 2 R + 1 rows, the oldest at `slot`.
    const auto at = [&](int m, int k) {
      int i = slot + m;
      i = i >= S ? i - S : i;
      return ring[(i * P + k) * kWarp + lane];
    };
    float o[P];
#pragma unroll
    for (int k = 0; k < P; ++k) {
      float v = a.wy[0] * at(R, k);
#pragma unroll
      for (int j = 1; j <= R; ++j) {
        if (kGuard && j > a.ry) break;
        v = fmaf(a.wy[j], at(R - j, k) + at(R + j, k), v);
      }
      o[k] = v;
    }
    if (!writes) continue;
    std::byte* out_row = p.out + static_cast<std::ptrdiff_t>(y0 + t - 2 * R) * p.out_stride;
    if (inside) {
      Wd::store(out_row, x, o);
    } else {
#pragma unroll
      for (int k = 0; k < P; ++k) {
        if (x + k < p.width) Io::store(out_row, x + k, 0, o[k]);
      }
    }
  }
}

template <class Io, int R>
cudaError_t launch_strips_as(const StripArgs& args, cudaStream_t stream) {
  constexpr int P = kLanesColumns;
  constexpr int L = (R + P - 1) / P;
  const std::size_t smem = sizeof(float) * kWarpsPerBlock * (2 * R + 1) * P * kWarp;
  if (smem > gauss_detail::kDefaultSharedBytes) {  // opt in, per device (gauss_direct.cu)
    const cudaError_t opted = cudaFuncSetAttribute(
        gauss_strips<Io, R>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (opted != cudaSuccess) return opted;
  }
  const int out_columns = (kWarp - 2 * L) * P;
  const int strips = (args.plane.width + out_columns - 1) / out_columns;
  const dim3 grid((strips + kWarpsPerBlock - 1) / kWarpsPerBlock,
                  (args.plane.height + strip_rows<R>() - 1) / strip_rows<R>());
  gauss_strips<Io, R><<<grid, kWarp * kWarpsPerBlock, smem, stream>>>(args);
  return cudaPeekAtLastError();
}

template <class Io>
cudaError_t launch_strips_bucket(const StripArgs& args, cudaStream_t stream) {
  const int r = args.rx > args.ry ? args.rx : args.ry;
  if (r <= 2) return launch_strips_as<Io, 2>(args, stream);
  if (r <= 4) return launch_strips_as<Io, 4>(args, stream);
  if (r <= 8) return launch_strips_as<Io, 8>(args, stream);
  if (r <= 12) return launch_strips_as<Io, 12>(args, stream);
  return launch_strips_as<Io, 16>(args, stream);
}

}  // namespace

namespace gauss_detail {

bool strips_take(const GaussParams& params, ConstImageView in, ImageView out) noexcept {
  const FormatInfo& info = format_info(in.format);
  if (info.channels != 1) return false;
  // GRAY32F from radius 8: the shared-memory tiles are the faster there (a float word is 4
  // registers, and the strips' ring of 2 R + 1 rows of them leaves few warps a SM).
  const int radius = std::max(params.effective_radius_x(), params.effective_radius_y());
  if (in.format == PixelFormat::Gray32F && radius > 4) return false;
  // Whole words: the rows of both frames aligned to four samples.
  const auto word = static_cast<std::uintptr_t>(4 * info.bytes_per_sample);
  const auto bits =
      reinterpret_cast<std::uintptr_t>(in.data) | reinterpret_cast<std::uintptr_t>(out.data) |
      static_cast<std::uintptr_t>(in.stride) | static_cast<std::uintptr_t>(out.stride);
  return bits % word == 0;
}

cudaError_t launch_strips(const GaussParams& params, ConstImageView in, ImageView out,
                          cudaStream_t stream) {
  StripArgs args{};
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
      return launch_strips_bucket<gauss_io::Gray8>(args, stream);
    case PixelFormat::Gray16:
      return launch_strips_bucket<gauss_io::Gray16>(args, stream);
    case PixelFormat::Gray32F:
      return launch_strips_bucket<gauss_io::Gray32F>(args, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace gauss_detail

}  // namespace starsift::cuda
