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

// Byte `index` (0..3) of `word` as a float, exactly: on the device the byte placed in the
// mantissa of 2^23 (one byte permutation) and 2^23 taken off, no conversion instruction
// (conversions issue at a quarter of the float arithmetic's rate or less).
STARSIFT_HD float byte_float(std::uint32_t word, int index) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(__byte_perm(word, 0x4b000000u, 0x7540u | static_cast<unsigned>(index))) -
         8388608.0f;
#else
  return static_cast<float>((word >> (8 * index)) & 0xffu);
#endif
}

// 16-bit half `index` (0, 1) of `word` as a float, exactly, as byte_float() takes a byte.
STARSIFT_HD float half_float(std::uint32_t word, int index) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(__byte_perm(word, 0x4b000000u, index ? 0x7432u : 0x7410u)) - 8388608.0f;
#else
  return static_cast<float>((word >> (16 * index)) & 0xffffu);
#endif
}

#if defined(__CUDACC__)
// Samples x0 .. x0 + 3 of a row of gray format F as one word, loaded once and turned into
// read_pixel()'s floats later (so that a kernel keeps the narrow word, not four floats, while
// its loads are in flight). load() reads 4, 8 or 16 bytes: the row's address plus x0 samples
// must be aligned to that size; pack() builds the word from single samples (a row's end, rows of
// any alignment). GRAY32F samples keep their value; callers that need finite ones test them.
template <PixelFormat F>
struct SampleQuad;

template <>
struct SampleQuad<PixelFormat::Gray8> {
  using Word = std::uint32_t;
  __device__ static Word load(const std::byte* row, int x0) {
    return __ldg(reinterpret_cast<const unsigned int*>(row + x0));
  }
  __device__ static Word pack(const std::byte* row, int x0, int n) {  // samples 0..n-1, else 0
    Word w = 0;
    for (int i = 0; i < n; ++i)
      w |= static_cast<Word>(__ldg(reinterpret_cast<const std::uint8_t*>(row) + x0 + i)) << (8 * i);
    return w;
  }
  __device__ static float sample(Word w, int i) { return byte_float(w, i); }
};

template <>
struct SampleQuad<PixelFormat::Gray16> {
  using Word = uint2;
  __device__ static Word load(const std::byte* row, int x0) {
    return __ldg(reinterpret_cast<const uint2*>(row + 2 * static_cast<std::ptrdiff_t>(x0)));
  }
  __device__ static Word pack(const std::byte* row, int x0, int n) {
    std::uint32_t h[4] = {0, 0, 0, 0};
    for (int i = 0; i < n; ++i) h[i] = __ldg(reinterpret_cast<const std::uint16_t*>(row) + x0 + i);
    return make_uint2(h[0] | h[1] << 16, h[2] | h[3] << 16);
  }
  __device__ static float sample(Word w, int i) { return half_float(i < 2 ? w.x : w.y, i & 1); }
};

template <>
struct SampleQuad<PixelFormat::Gray32F> {
  using Word = float4;
  __device__ static Word load(const std::byte* row, int x0) {
    return __ldg(reinterpret_cast<const float4*>(row + 4 * static_cast<std::ptrdiff_t>(x0)));
  }
  __device__ static Word pack(const std::byte* row, int x0, int n) {
    float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int i = 0; i < n; ++i) v[i] = __ldg(reinterpret_cast<const float*>(row) + x0 + i);
    return make_float4(v[0], v[1], v[2], v[3]);
  }
  __device__ static float sample(Word w, int i) {
    return i == 0 ? w.x : i == 1 ? w.y : i == 2 ? w.z : w.w;
  }
};
#endif

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
