// SPDX-License-Identifier: LGPL-2.1-or-later
// How the Gaussian kernels read and write the samples of each format: a colour channel of a
// pixel as float, written back rounded as gauss_round() rounds on the CPU. One struct per
// format family, so the kernels are templates over it and never switch per sample.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/gauss/gauss.cuh"
#include "pipeline/gauss/params.hpp"
#include "pipeline/image.hpp"

namespace starsift::cuda::gauss_io {

// What a kernel needs of one frame: base, stride, size.
struct Plane {
  const std::byte* in;
  std::byte* out;
  std::ptrdiff_t in_stride;
  std::ptrdiff_t out_stride;
  int width;
  int height;
};

inline Plane plane_of(ConstImageView in, ImageView out) {
  return {in.data, out.data, in.stride, out.stride, in.width, in.height};
}

// What the fused kernels (block tile, tensor cores) take by value: the frame, both axes'
// weights (w[0] the centre, zero beyond each radius, so a kernel's bucket radius adds
// nothing past it), the radii, the border.
struct FusedArgs {
  Plane plane;
  float wx[kMaxTensorFusedRadius + 1];
  float wy[kMaxTensorFusedRadius + 1];
  int rx;
  int ry;
  BorderMode border;
  float border_value;
};

// The arguments of `params` on these frames; nothing where a radius is beyond `max_radius`.
inline bool fused_args(const GaussParams& params, ConstImageView in, ImageView out, int max_radius,
                       FusedArgs& args) {
  args = FusedArgs{};
  args.plane = plane_of(in, out);
  args.rx = params.effective_radius_x();
  args.ry = params.effective_radius_y();
  if (args.rx > max_radius || args.ry > max_radius) return false;
  args.rx = gauss_half_weights(params.sigma_x, args.rx, args.wx);
  args.ry = gauss_half_weights(params.sigma_y, args.ry, args.wy);
  args.border = params.border;
  args.border_value = static_cast<float>(params.border_value);
  return true;
}

template <class S, int Max>
struct GrayInt {
  static constexpr int kChannels = 1;
  static constexpr int kPixelBytes = sizeof(S);
  static constexpr bool kHasAlpha = false;
  __device__ static float load(const std::byte* row, int x, int) {
    return static_cast<float>(__ldg(reinterpret_cast<const S*>(row) + x));
  }
  __device__ static void store(std::byte* row, int x, int, float v) {
    reinterpret_cast<S*>(row)[x] = static_cast<S>(gauss_round(v, static_cast<float>(Max)));
  }
  __device__ static void load_pixel(const std::byte* row, int x, float (&v)[1]) {
    v[0] = load(row, x, 0);
  }
  __device__ static void copy_alpha(const std::byte*, std::byte*, int) {}
};

using Gray8 = GrayInt<std::uint8_t, 255>;
using Gray16 = GrayInt<std::uint16_t, 65535>;

struct Gray32F {
  static constexpr int kChannels = 1;
  static constexpr int kPixelBytes = sizeof(float);
  static constexpr bool kHasAlpha = false;
  __device__ static float load(const std::byte* row, int x, int) {
    return __ldg(reinterpret_cast<const float*>(row) + x);
  }
  __device__ static void store(std::byte* row, int x, int, float v) {
    reinterpret_cast<float*>(row)[x] = v;
  }
  __device__ static void load_pixel(const std::byte* row, int x, float (&v)[1]) {
    v[0] = load(row, x, 0);
  }
  __device__ static void copy_alpha(const std::byte*, std::byte*, int) {}
};

// RGBA/BGRA/RGBx/BGRx: bytes 0..2 blurred, byte 3 copied.
struct Color4x8 {
  static constexpr int kChannels = 3;
  static constexpr int kPixelBytes = 4;
  static constexpr bool kHasAlpha = true;
  __device__ static float load(const std::byte* row, int x, int c) {
    return static_cast<float>(__ldg(reinterpret_cast<const std::uint8_t*>(row) + 4 * x + c));
  }
  __device__ static void store(std::byte* row, int x, int c, float v) {
    reinterpret_cast<std::uint8_t*>(row)[4 * x + c] =
        static_cast<std::uint8_t>(gauss_round(v, 255.0f));
  }
  // The whole pixel in one 32-bit load (rows of these formats are 4-byte aligned).
  __device__ static void load_pixel(const std::byte* row, int x, float (&v)[3]) {
    const std::uint32_t px = __ldg(reinterpret_cast<const std::uint32_t*>(row) + x);
    v[0] = static_cast<float>(px & 0xffu);
    v[1] = static_cast<float>((px >> 8) & 0xffu);
    v[2] = static_cast<float>((px >> 16) & 0xffu);
  }
  __device__ static void copy_alpha(const std::byte* in_row, std::byte* out_row, int x) {
    reinterpret_cast<std::uint8_t*>(out_row)[4 * x + 3] =
        __ldg(reinterpret_cast<const std::uint8_t*>(in_row) + 4 * x + 3);
  }
};

// Calls f(Io{}) with the traits of `format` (the caller checked gauss_supports()).
template <class Fn>
void with_format(PixelFormat format, Fn&& f) {
  switch (format) {
    case PixelFormat::Gray8:
      f(Gray8{});
      break;
    case PixelFormat::Gray16:
      f(Gray16{});
      break;
    case PixelFormat::Gray32F:
      f(Gray32F{});
      break;
    default:
      f(Color4x8{});
  }
}

}  // namespace starsift::cuda::gauss_io
