// SPDX-License-Identifier: LGPL-2.1-or-later
// Four neighbouring samples of a gray format as one vector word (32 bits of GRAY8, 64 of
// GRAY16, 128 of GRAY32F): loaded, unpacked to floats, exchanged between lanes, and rounded and
// stored back (or one sample stored), for the Gaussian's kernels on gray frames.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/gauss/gauss_io.cuh"

namespace starsift::cuda::gauss_io {

// Integer samples to float and back without the conversion unit (an eighth of the FP32 rate on
// Hopper: with 3 conversions a sample it bounded the blur): a sample n < 2^23 placed in the
// mantissa of 2^23 is the float 2^23 + n exactly, so one byte permute and one subtraction give n.
constexpr float kMagic = 8388608.0f;  // 2^23
constexpr std::uint32_t kMagicBits = 0x4b000000u;
// The float of the bytes of `w` chosen by `selector` (__byte_perm's, bytes 4..7 of kMagicBits
// for the zero and exponent bytes).
__device__ __forceinline__ float magic_to_float(std::uint32_t w, std::uint32_t selector) {
  return __uint_as_float(__byte_perm(w, kMagicBits, selector)) - kMagic;
}
// gauss_round(v, max) as the integer's bits: 0 for v <= 0 and NaN, max from max on, else
// trunc(v + 0.5f), here floor(v + 0.5f) by adding 2^23 rounding down (exact: the sum lies in
// [2^23, 2^24), whose spacing is 1).
__device__ __forceinline__ std::uint32_t round_bits(float v, float max) {
  const float c = fminf(fmaxf(v, 0.0f), max);  // fmaxf(NaN, 0) is 0
  return __float_as_uint(__fadd_rd(c + 0.5f, kMagic)) & 0xffffu;
}

// round_bits() for a sum that is a weighted mean of samples of the format (weights >= 0 summing
// to 1, as every direct Gaussian sum of an integer frame is): such a sum lies in [0, max] up to
// float rounding, far less than 0.5, so floor(v + 0.5) is in range without the clamp and equal
// to round_bits()'s. The integer in the low 16 bits (the bits above are the magic exponent's).
__device__ __forceinline__ std::uint32_t mean_bits(float v) {
  return __float_as_uint(__fadd_rd(v + 0.5f, kMagic));
}

// A word of four samples of each gray format.
template <class Io>
struct Word;

template <>
struct Word<Gray8> {
  using W = std::uint32_t;
  static constexpr float kMax = 255.0f;
  __device__ static W load(const std::byte* row, int x) {
    return __ldg(reinterpret_cast<const W*>(row + x));
  }
  __device__ static void unpack(W w, float* f) {
#pragma unroll
    for (int k = 0; k < 4; ++k) f[k] = magic_to_float(w, 0x7650u | static_cast<std::uint32_t>(k));
  }
  __device__ static W shfl_up(W w, int d) {
    return __shfl_up_sync(0xffffffffu, w, d);
  }
  __device__ static W shfl_down(W w, int d) {
    return __shfl_down_sync(0xffffffffu, w, d);
  }
  // Four samples that are values of the format already (loaded ones, a border value).
  __device__ static W pack(const float* v) {
    return static_cast<W>(v[0]) | static_cast<W>(v[1]) << 8 | static_cast<W>(v[2]) << 16 |
           static_cast<W>(v[3]) << 24;
  }
  // The four samples' integers q(0..3) (low bits) as one word.
  template <class Bits>
  __device__ static void store_bits(std::byte* row, int x, Bits q) {
    const W lo = __byte_perm(q(0), q(1), 0x0040u);
    const W hi = __byte_perm(q(2), q(3), 0x0040u);
    *reinterpret_cast<W*>(row + x) = __byte_perm(lo, hi, 0x5410u);
  }
  __device__ static void store(std::byte* row, int x, const float* v) {
    store_bits(row, x, [&](int k) { return round_bits(v[k], kMax); });
  }
  // store() for weighted means of samples (mean_bits()).
  __device__ static void store_mean(std::byte* row, int x, const float* v) {
    store_bits(row, x, [&](int k) { return mean_bits(v[k]); });
  }
  // One sample, rounded as store() rounds.
  __device__ static void store_one(std::byte* row, int x, float v) {
    reinterpret_cast<std::uint8_t*>(row)[x] = static_cast<std::uint8_t>(round_bits(v, kMax));
  }
};

template <>
struct Word<Gray16> {
  using W = uint2;
  static constexpr float kMax = 65535.0f;
  __device__ static W load(const std::byte* row, int x) {
    return __ldg(reinterpret_cast<const W*>(row + 2 * x));
  }
  __device__ static void unpack(W w, float* f) {
    f[0] = magic_to_float(w.x, 0x7610u);
    f[1] = magic_to_float(w.x, 0x7632u);
    f[2] = magic_to_float(w.y, 0x7610u);
    f[3] = magic_to_float(w.y, 0x7632u);
  }
  __device__ static W shfl_up(W w, int d) {
    return {__shfl_up_sync(0xffffffffu, w.x, d), __shfl_up_sync(0xffffffffu, w.y, d)};
  }
  __device__ static W shfl_down(W w, int d) {
    return {__shfl_down_sync(0xffffffffu, w.x, d), __shfl_down_sync(0xffffffffu, w.y, d)};
  }
  __device__ static W pack(const float* v) {
    const auto q = [&](int k) { return static_cast<unsigned>(v[k]); };
    return {q(0) | q(1) << 16, q(2) | q(3) << 16};
  }
  template <class Bits>
  __device__ static void store_bits(std::byte* row, int x, Bits q) {
    *reinterpret_cast<W*>(row + 2 * x) = {__byte_perm(q(0), q(1), 0x5410u),
                                          __byte_perm(q(2), q(3), 0x5410u)};
  }
  __device__ static void store(std::byte* row, int x, const float* v) {
    store_bits(row, x, [&](int k) { return round_bits(v[k], kMax); });
  }
  __device__ static void store_mean(std::byte* row, int x, const float* v) {
    store_bits(row, x, [&](int k) { return mean_bits(v[k]); });
  }
  __device__ static void store_one(std::byte* row, int x, float v) {
    reinterpret_cast<std::uint16_t*>(row)[x] = static_cast<std::uint16_t>(round_bits(v, kMax));
  }
};

template <>
struct Word<Gray32F> {
  using W = float4;
  __device__ static W load(const std::byte* row, int x) {
    return __ldg(reinterpret_cast<const W*>(row + 4 * x));
  }
  __device__ static void unpack(W w, float* f) {
    f[0] = w.x;
    f[1] = w.y;
    f[2] = w.z;
    f[3] = w.w;
  }
  __device__ static W shfl_up(W w, int d) {
    return {__shfl_up_sync(0xffffffffu, w.x, d), __shfl_up_sync(0xffffffffu, w.y, d),
            __shfl_up_sync(0xffffffffu, w.z, d), __shfl_up_sync(0xffffffffu, w.w, d)};
  }
  __device__ static W shfl_down(W w, int d) {
    return {__shfl_down_sync(0xffffffffu, w.x, d), __shfl_down_sync(0xffffffffu, w.y, d),
            __shfl_down_sync(0xffffffffu, w.z, d), __shfl_down_sync(0xffffffffu, w.w, d)};
  }
  __device__ static W pack(const float* v) { return {v[0], v[1], v[2], v[3]}; }
  __device__ static void store(std::byte* row, int x, const float* v) {
    *reinterpret_cast<W*>(row + 4 * x) = {v[0], v[1], v[2], v[3]};
  }
  __device__ static void store_mean(std::byte* row, int x, const float* v) { store(row, x, v); }
  __device__ static void store_one(std::byte* row, int x, float v) {
    reinterpret_cast<float*>(row)[x] = v;
  }
};

}  // namespace starsift::cuda::gauss_io
