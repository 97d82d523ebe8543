// SPDX-License-Identifier: LGPL-2.1-or-later
// The Gaussian's direct paths: sums of weighted samples, exact up to float rounding.
//
// Fused (radii <= kMaxFusedRadius): a block loads its output tile and the apron around it
// into shared memory once (borders resolved there, through border_index(), as on the CPU),
// sums along x into a second shared buffer, and along y from that into the output. The
// intermediate never touches global memory, so the cost is one read and one write of the
// frame plus arithmetic. 4-channel pixels are read with one 32-bit load each.
//
// Separable (any radius): a pass along x into a float frame in the scratch, and a pass
// along y from it, each thread summing its taps through the cache. Weights of any length
// come from the scratch, where gauss_weights_kernel() writes them before each frame.
//
// Both sum a window as w0 x0 + sum_i w_i (x_-i + x_i) with fused multiply-adds: half the
// multiplications of the plain sum, and within a rounding of it (gauss.cuh).
#include <cuda_runtime.h>

#include "cuda/common/launch_limits.cuh"
#include "cuda/gauss/gauss.cuh"
#include "cuda/gauss/gauss_internal.cuh"
#include "cuda/gauss/gauss_io.cuh"
#include "pipeline/border.hpp"

namespace starsift::cuda {

namespace {

using gauss_io::Plane;

constexpr int kFusedTileW = 32;
constexpr int kBlockW = 32;
constexpr int kBlockH = 8;

template <int C>
constexpr int fused_tile_h() {
  return C == 1 ? 32 : 16;  // colour: three planes in shared memory, so fewer rows
}

struct HalfWeights {
  float w[kMaxFusedRadius + 1];  // w[0] the centre, w[i] at distance i
  int radius;
};

struct FusedArgs {
  Plane plane;
  HalfWeights wx;
  HalfWeights wy;
  BorderMode border;
  float border_value;
};

template <class Io, int TH>
__global__ void __launch_bounds__(kBlockW* kBlockH) gauss_fused(const FusedArgs a) {
  constexpr int C = Io::kChannels;
  constexpr int TW = kFusedTileW;
  extern __shared__ float smem[];
  const int rx = a.wx.radius, ry = a.wy.radius;
  const int in_w = TW + 2 * rx, in_h = TH + 2 * ry;
  float* const tile = smem;                    // C planes of in_h x in_w: the input and apron
  float* const rows = smem + C * in_h * in_w;  // C planes of in_h x TW: summed along x
  const int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
  const Plane& p = a.plane;

  for (int ly = threadIdx.y; ly < in_h; ly += kBlockH) {
    const int sy = border_index(y0 - ry + ly, p.height, a.border);
    const std::byte* row = p.in + static_cast<std::ptrdiff_t>(sy) * p.in_stride;
    for (int lx = threadIdx.x; lx < in_w; lx += kBlockW) {
      const int sx = border_index(x0 - rx + lx, p.width, a.border);
      float v[C];
      if (sx < 0 || sy < 0) {
#pragma unroll
        for (int c = 0; c < C; ++c) v[c] = a.border_value;
      } else {
        Io::load_pixel(row, sx, v);
      }
#pragma unroll
      for (int c = 0; c < C; ++c) tile[(c * in_h + ly) * in_w + lx] = v[c];
    }
  }
  __syncthreads();

  for (int ly = threadIdx.y; ly < in_h; ly += kBlockH) {
    const int lx = threadIdx.x;  // TW == kBlockW
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const float* t = tile + (c * in_h + ly) * in_w + lx + rx;
      float s = a.wx.w[0] * t[0];
#pragma unroll 4
      for (int i = 1; i <= rx; ++i) s = fmaf(a.wx.w[i], t[-i] + t[i], s);
      rows[(c * in_h + ly) * TW + lx] = s;
    }
  }
  __syncthreads();

  const int x = x0 + threadIdx.x;
  if (x >= p.width) return;
  for (int ly = threadIdx.y; ly < TH; ly += kBlockH) {
    const int y = y0 + ly;
    if (y >= p.height) break;
    std::byte* out_row = p.out + static_cast<std::ptrdiff_t>(y) * p.out_stride;
#pragma unroll
    for (int c = 0; c < C; ++c) {
      const float* t = rows + (c * in_h + ly + ry) * TW + threadIdx.x;
      float s = a.wy.w[0] * t[0];
#pragma unroll 4
      for (int j = 1; j <= ry; ++j) s = fmaf(a.wy.w[j], t[-j * TW] + t[j * TW], s);
      Io::store(out_row, x, c, s);
    }
    if constexpr (Io::kHasAlpha) {
      Io::copy_alpha(p.in + static_cast<std::ptrdiff_t>(y) * p.in_stride, out_row, x);
    }
  }
}

HalfWeights half_weights(double sigma, int radius) {
  HalfWeights h{};
  h.radius = gauss_half_weights(sigma, radius, h.w);
  return h;
}

template <class Io>
cudaError_t launch_fused_as(const FusedArgs& args, cudaStream_t stream) {
  constexpr int C = Io::kChannels;
  constexpr int TH = fused_tile_h<C>();
  const int in_w = kFusedTileW + 2 * args.wx.radius, in_h = TH + 2 * args.wy.radius;
  const std::size_t smem =
      sizeof(float) * C * (static_cast<std::size_t>(in_h) * in_w + in_h * kFusedTileW);
  if (const cudaError_t opted = allow_shared(gauss_fused<Io, TH>, smem); opted != cudaSuccess) {
    return opted;
  }
  const dim3 block(kBlockW, kBlockH);
  const dim3 grid((args.plane.width + kFusedTileW - 1) / kFusedTileW,
                  (args.plane.height + TH - 1) / TH);
  gauss_fused<Io, TH><<<grid, block, smem, stream>>>(args);
  return cudaPeekAtLastError();
}

// ---- Separable ---------------------------------------------------------------------------

// The half weights of one axis into `w` (radius + 1 floats), normalised over the whole
// window, in double as gauss_weights() computes them.
__global__ void gauss_weights_kernel(double sigma, int radius, float* w) {
  __shared__ double partial[256];
  double sum = 0.0;
  for (int i = threadIdx.x; i <= radius; i += blockDim.x) {
    const double v = sigma > 0.0 ? exp(-static_cast<double>(i) * i / (2.0 * sigma * sigma)) : 1.0;
    sum += i == 0 ? v : 2.0 * v;
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  const double total = partial[0];
  for (int i = threadIdx.x; i <= radius; i += blockDim.x) {
    const double v = sigma > 0.0 ? exp(-static_cast<double>(i) * i / (2.0 * sigma * sigma)) : 1.0;
    w[i] = static_cast<float>(v / total);
  }
}

struct SeparableArgs {
  Plane plane;
  const float* wx;
  const float* wy;
  int rx;
  int ry;
  BorderMode border;
  float border_value;
  float* rows;             // the frame summed along x: width * C floats a row
  std::size_t row_floats;  // its pitch
};

template <class Io>
__global__ void gauss_rows(const SeparableArgs a) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const Plane& p = a.plane;
  if (x >= p.width || y >= p.height) return;
  const std::byte* row = p.in + static_cast<std::ptrdiff_t>(y) * p.in_stride;
  const auto at = [&](int sx, int c) {
    const int i = border_index(sx, p.width, a.border);
    return i < 0 ? a.border_value : Io::load(row, i, c);
  };
  for (int c = 0; c < Io::kChannels; ++c) {
    float s = a.wx[0] * Io::load(row, x, c);
    for (int i = 1; i <= a.rx; ++i) s = fmaf(a.wx[i], at(x - i, c) + at(x + i, c), s);
    a.rows[static_cast<std::size_t>(y) * a.row_floats +
           static_cast<std::size_t>(x) * Io::kChannels + c] = s;
  }
}

template <class Io>
__global__ void gauss_columns(const SeparableArgs a) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const Plane& p = a.plane;
  if (x >= p.width || y >= p.height) return;
  const auto at = [&](int sy, int c) {
    const int j = border_index(sy, p.height, a.border);
    return j < 0 ? a.border_value
                 : a.rows[static_cast<std::size_t>(j) * a.row_floats +
                          static_cast<std::size_t>(x) * Io::kChannels + c];
  };
  std::byte* out_row = p.out + static_cast<std::ptrdiff_t>(y) * p.out_stride;
  for (int c = 0; c < Io::kChannels; ++c) {
    float s = a.wy[0] * at(y, c);
    for (int j = 1; j <= a.ry; ++j) s = fmaf(a.wy[j], at(y - j, c) + at(y + j, c), s);
    Io::store(out_row, x, c, s);
  }
  if constexpr (Io::kHasAlpha) {
    Io::copy_alpha(p.in + static_cast<std::ptrdiff_t>(y) * p.in_stride, out_row, x);
  }
}

}  // namespace

namespace gauss_detail {

cudaError_t launch_fused(const GaussParams& params, ConstImageView in, ImageView out,
                         cudaStream_t stream) {
  FusedArgs args{};
  args.plane = gauss_io::plane_of(in, out);
  if (params.effective_radius_x() > kMaxFusedRadius ||
      params.effective_radius_y() > kMaxFusedRadius) {
    return cudaErrorInvalidValue;
  }
  args.wx = half_weights(params.sigma_x, params.effective_radius_x());
  args.wy = half_weights(params.sigma_y, params.effective_radius_y());
  args.border = params.border;
  args.border_value = static_cast<float>(params.border_value);
  cudaError_t status = cudaSuccess;
  gauss_io::with_format(in.format,
                        [&](auto io) { status = launch_fused_as<decltype(io)>(args, stream); });
  return status;
}

cudaError_t launch_separable(const GaussParams& params, ConstImageView in, ImageView out,
                             const ScratchLayout& scratch, cudaStream_t stream) {
  SeparableArgs args{};
  args.plane = gauss_io::plane_of(in, out);
  args.rx = params.effective_radius_x();
  args.ry = params.effective_radius_y();
  args.wx = scratch.weights_x;
  args.wy = scratch.weights_y;
  args.border = params.border;
  args.border_value = static_cast<float>(params.border_value);
  args.rows = scratch.frame_a;
  args.row_floats = scratch.row_floats;
  gauss_weights_kernel<<<1, 256, 0, stream>>>(params.sigma_x, args.rx, scratch.weights_x);
  gauss_weights_kernel<<<1, 256, 0, stream>>>(params.sigma_y, args.ry, scratch.weights_y);
  const dim3 block(kBlockW, kBlockH);
  const dim3 grid((in.width + kBlockW - 1) / kBlockW, (in.height + kBlockH - 1) / kBlockH);
  gauss_io::with_format(in.format, [&](auto io) {
    using Io = decltype(io);
    gauss_rows<Io><<<grid, block, 0, stream>>>(args);
    gauss_columns<Io><<<grid, block, 0, stream>>>(args);
  });
  return cudaPeekAtLastError();
}

}  // namespace gauss_detail

}  // namespace starsift::cuda
