// SPDX-License-Identifier: LGPL-2.1-or-later
// A gray sample as the float it stands for, on the host or the device: one definition for
// every filter that computes in float (whitening; a Gaussian blur, detection). On the device
// the load goes through the read-only data cache (__ldg): the row must be global memory the
// kernel does not write. On the host it is a plain load of any alignment.
//
// Limits: gray formats only (GRAY8, GRAY16_LE, GRAY32F); colour formats have several samples a
// pixel and are read through their key traits (format_traits.cuh). The runtime forms read any
// format other than GRAY8 and GRAY16 as GRAY32F: callers pass gray formats only. No bit depth
// scaling: GRAY16 with 12 real bits reads 0..4095.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "pipeline/hd.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift {

// Sample x of a row of gray format F (fixed at compile time, for loops that read many samples).
template <PixelFormat F>
STARSIFT_HD float read_pixel(const std::byte* row, int x) {
  static_assert(F == PixelFormat::Gray8 || F == PixelFormat::Gray16 || F == PixelFormat::Gray32F,
                "read_pixel: gray formats only");
#if defined(__CUDA_ARCH__)
  if constexpr (F == PixelFormat::Gray8) {
    return static_cast<float>(__ldg(reinterpret_cast<const std::uint8_t*>(row) + x));
  } else if constexpr (F == PixelFormat::Gray16) {
    return static_cast<float>(__ldg(reinterpret_cast<const std::uint16_t*>(row) + x));
  } else {
    return __ldg(reinterpret_cast<const float*>(row) + x);
  }
#else
  // memcpy: host rows need not be aligned to the sample size (a GRAY16 frame with an odd
  // stride); the compiler turns it into one load.
  if constexpr (F == PixelFormat::Gray8) {
    return static_cast<float>(std::to_integer<unsigned>(row[x]));
  } else if constexpr (F == PixelFormat::Gray16) {
    std::uint16_t v;
    std::memcpy(&v, row + 2 * static_cast<std::ptrdiff_t>(x), sizeof v);
    return static_cast<float>(v);
  } else {
    float v;
    std::memcpy(&v, row + 4 * static_cast<std::ptrdiff_t>(x), sizeof v);
    return v;
  }
#endif
}

// The same with the format known at run time.
STARSIFT_HD float read_pixel(const std::byte* row, int x, PixelFormat format) {
  switch (format) {
    case PixelFormat::Gray8:
      return read_pixel<PixelFormat::Gray8>(row, x);
    case PixelFormat::Gray16:
      return read_pixel<PixelFormat::Gray16>(row, x);
    default:
      return read_pixel<PixelFormat::Gray32F>(row, x);
  }
}

// Sample (x, y) of a frame whose rows are `stride` bytes apart.
STARSIFT_HD float read_pixel(const std::byte* data, std::ptrdiff_t stride, int x, int y,
                             PixelFormat format) {
  return read_pixel(data + static_cast<std::ptrdiff_t>(y) * stride, x, format);
}

}  // namespace starsift
