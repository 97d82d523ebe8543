// SPDX-License-Identifier: LGPL-2.1-or-later
// What detection's kernels share (detect_kernels.cu, detect_mask.cu): the frame as the passes
// see it, a pixel's sample, background and noise as the reference computes them, and the mask
// pass's launcher.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "pipeline/detect/background_mesh.hpp"
#include "pipeline/detect/line_channel.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift::cuda::detect_pass {

__device__ __forceinline__ float load_sample(const std::byte* row, int x, PixelFormat f) {
  switch (f) {
    case PixelFormat::Gray8:
      return static_cast<float>(reinterpret_cast<const std::uint8_t*>(row)[x]);
    case PixelFormat::Gray16:
      return static_cast<float>(reinterpret_cast<const std::uint16_t*>(row)[x]);
    default: {
      const float v = reinterpret_cast<const float*>(row)[x];
      return isfinite(v) ? v : 0.0f;
    }
  }
}

struct Frame {
  int width, height;
  ConstImageView in;  // the frame detected in
  std::uint8_t* mask;
  std::size_t mask_pitch;  // bytes, a multiple of 16 (cudaMallocPitch); padding kept at 0
  std::uint32_t* labels;
  std::size_t label_pitch;  // elements
  MeshAxis ax, ay;
  bool has_background;  // a mesh or global background; else `level` and `noise` everywhere
  float level, noise;   // background: none (detect_background_plan())
  const int* col_tile;
  const float* col_weight;
  const int* row_tile;
  const float* row_weight;
  const float* tile_mean;
  const float* tile_sigma;
  const unsigned long long* sigma_max;
  float* capped;             // the line channel's input, or nullptr when it is off
  std::size_t capped_pitch;  // elements
  // The merged flag's z (pipeline/detect/blend.hpp) of every pixel the mask sets, written where
  // the mask is: the value above the background over its noise (absolute thresholds: the value
  // above the background). Elsewhere it holds an earlier frame's, or 0 (cleared when allocated).
  float* z;
  std::size_t z_pitch;  // elements
};

// detect_sigma_floor() of the tiles' largest sigma.
__device__ __forceinline__ float sigma_floor(const Frame& f) {
  const double best = __longlong_as_double(static_cast<long long>(*f.sigma_max));
  return static_cast<float>(best > 0.0 ? best * 1e-3 : 1e-6);
}

__device__ __forceinline__ float value_at(const Frame& f, int x, int y) {
  return load_sample(f.in.data + y * f.in.stride, x, f.in.format);
}
// The blended background and noise of a pixel, as DetectState::estimate_background().
__device__ __forceinline__ float background_at(const Frame& f, int x, int y) {
  if (!f.has_background) return f.level;
  return mesh_blend(f.ax, f.ay, f.col_tile[x], f.col_weight[x], f.row_tile[y], f.row_weight[y],
                    [&](int k) { return f.tile_mean[k]; });
}
// A blended sigma held at the frame's floor.
__device__ __forceinline__ float floored(float sigma, float floor) {
  return sigma > floor ? sigma : floor;
}
__device__ __forceinline__ float sigma_at(const Frame& f, int x, int y) {
  if (!f.has_background) return f.noise;
  const float s = mesh_blend(f.ax, f.ay, f.col_tile[x], f.col_weight[x], f.row_tile[y],
                             f.row_weight[y], [&](int k) { return f.tile_sigma[k]; });
  return floored(s, sigma_floor(f));
}
__device__ __forceinline__ float residual_at(const Frame& f, int x, int y) {
  return value_at(f, x, y) - background_at(f, x, y);
}

// The line channel's input: the significance capped at LineBank::kCap, as the CPU caps it
// (std::min(sig, kCap): a NaN passes as itself).
__device__ __forceinline__ float capped_significance(float sig) {
  constexpr float kCap = LineBank::kCap;
  return kCap < sig ? kCap : sig;
}

// The mask (and the line channel's capped significance, where f.capped) of a filter of
// `radius` (0: none) with `taps`, on `stream`.
cudaError_t launch_mask(const Frame& f, int radius, const float* taps, float norm, bool sigma_units,
                        float threshold, cudaStream_t stream);

}  // namespace starsift::cuda::detect_pass
