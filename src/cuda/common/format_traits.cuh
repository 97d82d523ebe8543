// SPDX-License-Identifier: LGPL-2.1-or-later
// How a device kernel reads and writes the samples of each pixel format, in two families:
//
// Key formats (namespace key_formats): samples as order-preserving 32-bit keys
// (sample_key.hpp), for filters that only compare samples (the median; morphology). A format
// says how many colour planes it has, loads a pixel's keys and stores one plane's key back;
// kPackable formats' keys fit 16 bits, so two can share a register. Colour formats filter
// bytes 0..2 and carry byte 3 (alpha or padding) over unchanged (copy_alpha).
//
// Float samples of gray formats (write_sample, copy_sample here; reading, on host and device,
// in pixel_reader.hpp): for filters that compute in float (whitening; a Gaussian blur).
//
// Limits: little-endian GRAY16 only; no bit-depth scaling (GRAY16 with 12 real bits holds
// 0..4095). The float writers take gray formats only, any format other than GRAY8 and GRAY16
// being written as GRAY32F, and expect integer values already rounded and clamped.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "pipeline/pixel_format.hpp"
#include "pipeline/sample_key.hpp"

namespace starsift::cuda {

namespace key_formats {

struct Gray8 {
  static constexpr int kPlanes = 1;  // colour channels a filter computes
  __device__ static void load(const std::byte* row, int x, std::uint32_t (&k)[kPlanes]) {
    k[0] = reinterpret_cast<const std::uint8_t*>(row)[x];
  }
  __device__ static void store(std::byte* row, int x, int plane, std::uint32_t key) {
    (void)plane;
    reinterpret_cast<std::uint8_t*>(row)[x] = static_cast<std::uint8_t>(key);
  }
  static constexpr bool kPackable = true;
  static constexpr bool kHasAlpha = false;
  using Sample = std::uint8_t;  // gray formats: one sample per pixel, stored in runs
  __device__ static std::uint32_t to_sample(std::uint32_t key) { return key; }
};

struct Gray16 {
  static constexpr int kPlanes = 1;
  __device__ static void load(const std::byte* row, int x, std::uint32_t (&k)[kPlanes]) {
    k[0] = reinterpret_cast<const std::uint16_t*>(row)[x];
  }
  __device__ static void store(std::byte* row, int x, int plane, std::uint32_t key) {
    (void)plane;
    reinterpret_cast<std::uint16_t*>(row)[x] = static_cast<std::uint16_t>(key);
  }
  static constexpr bool kPackable = true;
  static constexpr bool kHasAlpha = false;
  using Sample = std::uint16_t;
  __device__ static std::uint32_t to_sample(std::uint32_t key) { return key; }
};

struct Gray32F {
  static constexpr int kPlanes = 1;
  __device__ static void load(const std::byte* row, int x, std::uint32_t (&k)[kPlanes]) {
    k[0] = float_bits_to_key(reinterpret_cast<const std::uint32_t*>(row)[x]);
  }
  __device__ static void store(std::byte* row, int x, int plane, std::uint32_t key) {
    (void)plane;
    reinterpret_cast<std::uint32_t*>(row)[x] = key_to_float_bits(key);
  }
  static constexpr bool kPackable = false;  // 32-bit keys need a whole register
  static constexpr bool kHasAlpha = false;
  using Sample = std::uint32_t;
  __device__ static std::uint32_t to_sample(std::uint32_t key) { return key_to_float_bits(key); }
};

// RGBA/BGRA/RGBx/BGRx: bytes 0..2 are filtered channel by channel, byte 3 is copied.
struct Color4x8 {
  static constexpr int kPlanes = 3;
  __device__ static void load(const std::byte* row, int x, std::uint32_t (&k)[kPlanes]) {
    const std::uint32_t px = reinterpret_cast<const std::uint32_t*>(row)[x];
    k[0] = px & 0xffu;
    k[1] = (px >> 8) & 0xffu;
    k[2] = (px >> 16) & 0xffu;
  }
  __device__ static void store(std::byte* row, int x, int plane, std::uint32_t key) {
    reinterpret_cast<std::uint8_t*>(row)[4 * x + plane] = static_cast<std::uint8_t>(key);
  }
  __device__ static void copy_alpha(const std::byte* in_row, std::byte* out_row, int x) {
    reinterpret_cast<std::uint8_t*>(out_row)[4 * x + 3] =
        reinterpret_cast<const std::uint8_t*>(in_row)[4 * x + 3];
  }
  static constexpr bool kPackable = true;
  static constexpr bool kHasAlpha = true;
  using Sample = std::uint32_t;  // a whole pixel
};

}  // namespace key_formats

// Sample (x, y) of a gray frame (rows `stride` bytes apart) set to `value`, which is already
// rounded and clamped for the integer formats.
__device__ __forceinline__ void write_sample(std::byte* data, std::ptrdiff_t stride, int x, int y,
                                             PixelFormat format, float value) {
  std::byte* row = data + static_cast<std::ptrdiff_t>(y) * stride;
  switch (format) {
    case PixelFormat::Gray8:
      reinterpret_cast<std::uint8_t*>(row)[x] = static_cast<std::uint8_t>(value);
      break;
    case PixelFormat::Gray16:
      reinterpret_cast<std::uint16_t*>(row)[x] = static_cast<std::uint16_t>(value);
      break;
    default:
      reinterpret_cast<float*>(row)[x] = value;
  }
}

// Sample (x, y) of one gray frame copied bit for bit into another of the same format (a float
// keeps its NaN payload, as a host memcpy does).
__device__ __forceinline__ void copy_sample(const std::byte* in, std::ptrdiff_t in_stride,
                                            std::byte* out, std::ptrdiff_t out_stride, int x, int y,
                                            PixelFormat format) {
  const std::byte* from = in + static_cast<std::ptrdiff_t>(y) * in_stride;
  std::byte* to = out + static_cast<std::ptrdiff_t>(y) * out_stride;
  switch (format) {
    case PixelFormat::Gray8:
      to[x] = from[x];
      break;
    case PixelFormat::Gray16:
      reinterpret_cast<std::uint16_t*>(to)[x] = reinterpret_cast<const std::uint16_t*>(from)[x];
      break;
    default:
      reinterpret_cast<std::uint32_t*>(to)[x] = reinterpret_cast<const std::uint32_t*>(from)[x];
  }
}

// Calls f(std::integral_constant<PixelFormat, F>{}) with the gray format F of `format` (any
// format other than GRAY8 and GRAY16 as GRAY32F): the launchers of kernels templated on the
// input format, so that a loop reading many samples does not switch on the format per read.
template <class Fn>
void with_gray_format(PixelFormat format, Fn&& f) {
  switch (format) {
    case PixelFormat::Gray8:
      f(std::integral_constant<PixelFormat, PixelFormat::Gray8>{});
      break;
    case PixelFormat::Gray16:
      f(std::integral_constant<PixelFormat, PixelFormat::Gray16>{});
      break;
    default:
      f(std::integral_constant<PixelFormat, PixelFormat::Gray32F>{});
  }
}

}  // namespace starsift::cuda
