// SPDX-License-Identifier: LGPL-2.1-or-later
// Whitening, reject: objects (shift: resample), between the camera pass (whiten_pixel.cu) and
// the store (whiten_store.cu): the reference's reject_objects() (reference.cpp). The camera
// pass has written this frame's residuals rho (camera grid) and left sigma^2, the runs and the
// rejected flags as they were; then
// box: per camera pixel the sums of rho and of sigma_{t-1}^2 over its 3 x 3 box (the
//   neighbours inside the frame, added in the reference's order) and pixel_box_significant():
//   one byte per pixel. Reads rho and sigma^2 over the tile and a 1-pixel ring.
// decide: a pixel is on an object when a box in its 3 x 3 neighbourhood passed (the dilation
//   by one pixel), then update_pixel_noise() with `object`: sigma^2, the run, the rejected flag
//   the store pass reads, and the rejection count. Reads the box bytes over the tile and a
//   1-pixel ring, rho, sigma^2, the run, x and the despike bit of the pixel.
// Two passes, not one: the box sums read sigma_{t-1}^2 of the neighbours, so no pixel's sigma^2
// may change before every box sum that reads it is taken, and the neighbours of a tile's edge
// belong to other blocks (one pass updating sigma^2 in place would race with them).
// Bytes per pixel: 4 + 4 (+ the ring) + 1, then 1 + 4 + 4 + 4 + 1 + 1 (+ sigma^2 and run
// written where they change) + 1/8; with the camera pass's rho written, ~29 more than mask.
//
// Schedule: 2-D tiles (whiten_device.cuh: kTileW x kTileH, a warp per tile row), the tile and
// its ring in shared memory. No sums over pixels but the rejection count (integers).
#include <cuda_runtime.h>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

// The tile and a 1-pixel ring around it.
constexpr int kRingW = kTileW + 2, kRingH = kTileH + 2;

// The box test of every pixel of the tile. Outside the frame rho and sigma^2 read as +0: adding
// +0 to a float sum leaves it as it is (but for the sign of a zero sum, which the test squares),
// so the sums equal the reference's over the neighbours inside the frame, in the same order.
__global__ void __launch_bounds__(kWhitenBlock)
    object_box_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  __shared__ float rho[kRingH][kRingW];
  __shared__ float var[kRingH][kRingW];
  const int w = s.width, h = s.height;
  const int x0 = static_cast<int>(blockIdx.x) * kTileW, y0 = static_cast<int>(blockIdx.y) * kTileH;
  for_each_cell(kRingH, kRingW, threadIdx.x, kWhitenBlock, [&](int r, int c) {
    const int gy = y0 - 1 + r, gx = x0 - 1 + c;
    float rv = 0.0f, vv = 0.0f;
    if (gx >= 0 && gx < w && gy >= 0 && gy < h) {
      const std::size_t q = static_cast<std::size_t>(gy) * w + gx;
      rv = __ldg(s.rho + q);
      vv = __ldg(s.var + q);
    }
    rho[r][c] = rv;
    var[r][c] = vv;
  });
  __syncthreads();
  for_each_thread_row(x0, y0, [&](int r, int tx, int x, int y) {
    if (x >= w || y >= h) return;
    // Box rows top to bottom, each left to right, as reject_objects() (the pixel (x, y) is at
    // [r + 1][tx + 1]).
    float rho_sum = 0.0f, var_sum = 0.0f;
#pragma unroll
    for (int dy = 0; dy < 3; ++dy) {
#pragma unroll
      for (int dx = 0; dx < 3; ++dx) {
        rho_sum += rho[r + dy][tx + dx];
        var_sum += var[r + dy][tx + dx];
      }
    }
    s.object_box[static_cast<std::size_t>(y) * w + x] =
        pixel_box_significant(rho_sum, var_sum, plan.noise);
  });
}

// The dilation and each pixel's decision (update_pixel_noise() with `object`), as
// camera_pixel() makes it without objects: sigma^2 and the run written where they change, the
// rejected flag always, the rejections counted by warp votes.
__global__ void __launch_bounds__(kWhitenBlock)
    object_decide_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  __shared__ unsigned char box[kRingH][kRingW];
  const int w = s.width, h = s.height;
  const int x0 = static_cast<int>(blockIdx.x) * kTileW, y0 = static_cast<int>(blockIdx.y) * kTileH;
  // (A plain loop, not for_each_cell(): through the lambda the compiler scheduled this kernel
  // differently.)
  for (int i = threadIdx.x; i < kRingW * kRingH; i += kWhitenBlock) {
    const int r = i / kRingW, c = i - r * kRingW;
    const int gy = y0 - 1 + r, gx = x0 - 1 + c;
    box[r][c] = gx >= 0 && gx < w && gy >= 0 && gy < h
                    ? __ldg(s.object_box + static_cast<std::size_t>(gy) * w + gx)
                    : 0;
  }
  __syncthreads();
  for_each_thread_row(x0, y0, [&](int r, int tx, int x, int y) {
    bool rejected = false;
    if (x < w && y < h) {
      bool object = false;
#pragma unroll
      for (int dy = 0; dy < 3; ++dy) {
#pragma unroll
        for (int dx = 0; dx < 3; ++dx) object = object || box[r + dy][tx + dx] != 0;
      }
      const std::size_t p = static_cast<std::size_t>(y) * w + x;
      const bool usable = measured(__ldg(s.x + p), despiked_at(s, p), plan.saturation);
      rejected = update_noise_at(s, plan, p, __ldg(s.rho + p), usable, object);
      s.rejected[p] = rejected;
    }
    count_rejections(s, rejected);  // every lane of the warp: a tile row
  });
}

}  // namespace

cudaError_t launch_whiten_objects(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                  cudaStream_t stream) {
  if (state.rho == nullptr || state.object_box == nullptr) return cudaErrorInvalidValue;
  object_box_kernel<<<tile_grid(state), kWhitenBlock, 0, stream>>>(state, plan);
  STARSIFT_CUDA_TRY(cudaPeekAtLastError());
  object_decide_kernel<<<tile_grid(state), kWhitenBlock, 0, stream>>>(state, plan);
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
