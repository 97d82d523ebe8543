// SPDX-License-Identifier: LGPL-2.1-or-later
// Whitening, shift: resample, the camera pass: per camera pixel the prediction B(p) = b(p - s)
// (the aligned prediction brought back by the shift's to_camera kernel, the bicubic rule of
// sample_shifted()), then camera_pixel() (whiten_device.cuh): the residual, the output and,
// without reject: objects, the noise update and the outlier test kept per pixel for the store.
// With shift-noise the significance outputs add registration_variance() of the aligned
// prediction around the pixel's place on that grid.
//
// Schedule: 2-D tiles of kTileW x kTileH pixels, one pixel a thread per tile row. The pass is
// bound by the pixels' own arithmetic (the significance's divisions, square roots and
// logarithm: some 290 instructions a pixel), not by its bytes. A form in register strips (a lane
// 4 columns, as the align pass) ran slower: 232 us at 4096^2 GRAY16 on an H200 against this
// one's 201, its four pixels' dependent chains (each division and square root a branch to its
// slow path) issued one after the other at a quarter of this pass's occupancy.
#include <cuda_runtime.h>

#include "cuda/common/tile_loader.cuh"
#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"
#include "pipeline/whiten/resample.hpp"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

// The tile schedule: a block of
// kTileW x kThreadRows threads per kTileW x kTileH tile, each thread kRowsPerThread rows of
// one column; a warp is one tile row.
inline constexpr int kTileW = 32;
inline constexpr int kTileH = 32;
inline constexpr int kThreadRows = kWhitenBlock / kTileW;
inline constexpr int kRowsPerThread = kTileH / kThreadRows;
static_assert(kWhitenBlock % kTileW == 0 && kTileH % kThreadRows == 0 && kTileW == 32);

inline dim3 tile_grid(const WhitenDeviceState& s) {
  return dim3((s.width + kTileW - 1) / kTileW, (s.height + kTileH - 1) / kTileH);
}

// Calls body(r, c, x, y) for each of the thread's kRowsPerThread rows of the tile at (x0, y0):
// r, c the pixel's row and column in the tile, (x, y) in the frame (possibly outside it). Every
// thread calls it the same number of times, so the body may vote across the warp.
template <class Body>
__device__ __forceinline__ void for_each_thread_row(int x0, int y0, Body body) {
  const int c = static_cast<int>(threadIdx.x) % kTileW;
  const int first = static_cast<int>(threadIdx.x) / kTileW;
#pragma unroll
  for (int j = 0; j < kRowsPerThread; ++j) {
    const int r = first + j * kThreadRows;
    body(r, c, x0 + c, y0 + r);
  }
}

// The bicubic rule's first pass over a tile's taps: rows[r][c] = sum of wx[t] * taps[r][c + t],
// t = 0..3 in order (sample_shifted()'s row sums; each serves the 4 output rows that use it).
template <int Rows, int TapsW>
__device__ __forceinline__ void bicubic_rows(const float (&wx)[4], const float (&taps)[Rows][TapsW],
                                             float (&rows)[Rows][kTileW]) {
  for (int i = threadIdx.x; i < Rows * kTileW; i += kWhitenBlock) {
    const int r = i / kTileW, c = i - r * kTileW;
    float row = 0.0f;
#pragma unroll
    for (int t = 0; t < 4; ++t) row += wx[t] * taps[r][c + t];
    rows[r][c] = row;
  }
}

// The second pass at tile pixel (r, c): sum of wy[t] * rows[r + t][c], t = 0..3 in order.
template <int Rows>
__device__ __forceinline__ float bicubic_column(const float (&wy)[4],
                                                const float (&rows)[Rows][kTileW], int r, int c) {
  float v = 0.0f;
#pragma unroll
  for (int t = 0; t < 4; ++t) v += wy[t] * rows[r + t][c];
  return v;
}

// The camera pass on 2-D tiles: the tile's 16-tap footprint of b in shared memory (border rule:
// clamped coordinates, as sample_shifted()), the bicubic rule in its two passes (the same
// arithmetic in the same order as sample_shifted()), then the camera-pixel rules. Read per pixel
// from b: 16 taps each had made the pass instruction-bound. Objects (reject: objects, the object
// test active): the residuals into s.rho; sigma, the runs, the rejected flags and their count are
// the objects pass's (whiten_objects.cu).
template <bool Objects>
__global__ void __launch_bounds__(kWhitenBlock)
    camera_kernel(WhitenDeviceState s, WhitenFramePlan plan, WhitenFrameView in,
                  WhitenFrameView out) {
  constexpr int kW = kTileW + 3, kH = kTileH + 3;
  __shared__ float taps[kH][kW];
  __shared__ float rows[kH][kTileW];
  const ShiftKernel k = s.shift->to_camera;
  const int w = s.width, h = s.height;
  const int x0 = static_cast<int>(blockIdx.x) * kTileW, y0 = static_cast<int>(blockIdx.y) * kTileH;
  const bool predicted = plan.n >= 1;  // else the prediction is 0 (b is not read)
  if (predicted) {
    const int left = x0 + k.ox - 1, top = y0 + k.oy - 1;
    for_each_row_cell<kTileW, kThreadRows, kH, kW>([&](int r, int c) {
      taps[r][c] = __ldg(s.b + static_cast<std::size_t>(clamp_index(top + r, h)) * w +
                         clamp_index(left + c, w));
    });
    __syncthreads();
    bicubic_rows<kH, kW>(k.wx, taps, rows);
    __syncthreads();
  }
  for_each_thread_row(x0, y0, [&](int r, int c, int x, int y) {
    bool rejected = false;
    if (x < w && y < h) {
      const float prediction = predicted ? bicubic_column(k.wy, rows, r, c) : 0.0f;
      const std::size_t p = static_cast<std::size_t>(y) * w + x;
      const float value = __ldg(s.x + p);
      // shift-noise: the registration's variance from the aligned prediction around the
      // pixel's place on that grid, the tile's taps (taps[r + 1][c + 1] is b at (x + ox,
      // y + oy), clamped at the frame's edges as the CPU clamps it).
      const float registration =
          predicted && plan.noise.shift_noise2 > 0.0f
              ? registration_variance(taps[r + 1][c + 1], taps[r + 1][c], taps[r + 1][c + 2],
                                      taps[r][c + 1], taps[r + 2][c + 1], plan.noise.shift_noise2)
              : 0.0f;
      rejected = camera_pixel(s, plan, p, x, y, value, despiked_at(s, p), prediction, in, out,
                              Objects ? s.rho : nullptr, registration);
      if (!Objects) s.rejected[p] = rejected;
    }
    if (!Objects) count_rejections(s, rejected);
  });
}

}  // namespace

cudaError_t launch_whiten_camera(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                 WhitenFrameView in, WhitenFrameView out, cudaStream_t stream) {
  // reject: objects before its test is active (sigma not yet trusted) finds no object: the
  // camera pass's own decision is then the reference's.
  if (plan.noise.objects) {
    camera_kernel<true><<<tile_grid(state), kWhitenBlock, 0, stream>>>(state, plan, in, out);
  } else {
    camera_kernel<false><<<tile_grid(state), kWhitenBlock, 0, stream>>>(state, plan, in, out);
  }
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
