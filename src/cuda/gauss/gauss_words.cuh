// SPDX-License-Identifier: LGPL-2.1-or-later
// Four neighbouring samples of a gray format as one vector word (32 bits of GRAY8, 64 of
// GRAY16, 128 of GRAY32F): loaded, unpacked to floats, exchanged between lanes, and rounded and
// stored back, for the Gaussian's kernels that give each thread four columns.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/gauss/gauss_io.cuh"

namespace starsift::cuda::gauss_io {

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
    for (int k = 0; k < 4; ++k) f[k] = static_cast<float>((w >> (8 * k)) & 0xffu);
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
  __device__ static void store(std::byte* row, int x, const float* v) {
    W w = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) w |= static_cast<W>(gauss_round(v[k], kMax)) << (8 * k);
    *reinterpret_cast<W*>(row + x) = w;
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
    f[0] = static_cast<float>(w.x & 0xffffu);
    f[1] = static_cast<float>(w.x >> 16);
    f[2] = static_cast<float>(w.y & 0xffffu);
    f[3] = static_cast<float>(w.y >> 16);
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
  __device__ static void store(std::byte* row, int x, const float* v) {
    const auto q = [&](int k) { return static_cast<unsigned>(gauss_round(v[k], kMax)); };
    *reinterpret_cast<W*>(row + 2 * x) = {q(0) | (q(1) << 16), q(2) | (q(3) << 16)};
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
};

}  // namespace starsift::cuda::gauss_io
