// SPDX-License-Identifier: LGPL-2.1-or-later
// Whitening, per camera pixel: prediction, residual, noise update, outlier test and output.
//
// shift: none (one pass, fused): per pixel the lags 1..max(n, kept) are read once into
//   registers; b = sum a_k h_k (float, lags in order, as the reference); the residual, sigma,
//   the outlier test and the output; the stored value written into the new slot; its
//   products with the kept frames and itself added to the thread's running sums (the new
//   Gram row), and the invalid masks updated. Bytes per pixel: x (4) + 4 per lag read + the
//   stored value (4) + sigma^2 (4 + 4) + the run byte (only when it changes) + the output.
// shift: resample: the residual lives on the camera grid and the stored frame on the aligned
//   grid, a bicubic step apart, so the pass splits: predict (aligned, whiten_store.cu), this
//   camera pass (whiten_camera.cu: B(p) = b(p - s) by the shared bicubic rule, then as above,
//   and the outlier test kept per pixel for the store), store and masks (aligned,
//   whiten_store.cu).
//
// Schedule: the fused pass grid-stride, one pixel per thread per tile, a fixed grid
// (kWhitenPixelBlocks) so the Gram row partials (one row per block, reduced in a fixed tree)
// add up in the same order every run; warps cover one mask word each. The weights are read
// once per block into shared memory.
#include <cuda_runtime.h>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"
#include "pipeline/whiten/resample.hpp"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

// Full: a full history in steady state, n == kept == lags_read == L, no lag tested per pixel
// (as predict_kernel, whiten_store.cu). Half: history-format half.
template <int L, bool Full, bool Half>
__global__ void __launch_bounds__(kWhitenBlock)
    fused_kernel(WhitenDeviceState s, WhitenFramePlan plan, WhitenFrameView in,
                 WhitenFrameView out) {
  __shared__ float a[L];
  __shared__ const void* planes[L];
  const int n = Full ? L : plan.n;
  const int kept = Full ? L : plan.kept;
  const int lags = Full ? L : plan.lags_read;
  load_lag_planes(s, plan.lag_slots, lags, planes);
  load_weights(s, n, a);
  void* stored_plane = plane_of(s, plan.new_slot, 0);
  const float scale = s.history_scale, inv_scale = s.history_inv_scale;
  double acc[L];
#pragma unroll
  for (int k = 0; k < L; ++k) acc[k] = 0.0;
  double self = 0.0;
  const double inv_w = 1.0 / s.width;
  // values(k): lag k + 1's value of the pixel, k < lags; values(lags): the input's.
  auto pixel = [&](std::size_t p, bool inside, auto values) {
    bool rejected = false;
    if (inside) {
      const int y = row_of(p, s.width, inv_w);
      const int x = static_cast<int>(p - static_cast<std::size_t>(y) * s.width);
      float h[L];
#pragma unroll
      for (int k = 0; k < L; ++k) {
        if (k < lags) h[k] = values(k);
      }
      float b = 0.0f;
#pragma unroll
      for (int k = 0; k < L; ++k) {
        if (k < n) b += a[k] * h[k];
      }
      const float value = values(lags);
      rejected = camera_pixel(s, plan, p, x, y, value, despiked_at(s, p), b, in, out);
      const float stored = history_value<Half>(stored_value(value, b, n >= 1 && rejected), scale);
      store_history<Half>(stored_plane, p, stored, scale);
      if (fit_row(y, plan.fit_subsample)) {
        const double sd = stored;
#pragma unroll
        for (int k = 0; k < L; ++k) {
          if (k < kept) acc[k] = gram_add(acc[k], sd, h[k]);
        }
        self = gram_add(self, sd, sd);
      }
    }
    update_masks(s, plan, p, inside);
    count_rejections(s, rejected);
  };
  for_each_tile(s.plane, [&](std::size_t p, bool inside) {
    pixel(p, inside, [&](int k) {
      return k < lags ? history_sample<Half>(planes[k], p, inv_scale) : __ldg(s.x + p);
    });
  });
  store_gram_row(acc, kept, self, s.gram_partials);
}

// fused_kernel<L, true, Half> for a full history (L = n), else <kWhitenRegisterLags or
// kWhitenMaxLags, false, Half>: a history that is not full, or longer than the register lags.
template <bool Half>
void launch_fused(const WhitenDeviceState& state, const WhitenFramePlan& plan, WhitenFrameView in,
                  WhitenFrameView out, cudaStream_t stream) {
  if (full_history(plan)) {
    with_lag_count(plan.n, [&](auto lags) {
      fused_kernel<decltype(lags)::value, true, Half>
          <<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan, in, out);
    });
  } else if (plan.lags_read <= kWhitenRegisterLags) {
    fused_kernel<kWhitenRegisterLags, false, Half>
        <<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan, in, out);
  } else {
    fused_kernel<kWhitenMaxLags, false, Half>
        <<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan, in, out);
  }
}

}  // namespace

cudaError_t launch_whiten_apply(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                WhitenFrameView in, WhitenFrameView out, cudaStream_t stream) {
  if (plan.resample) {
    // Also when n is 0: the predict pass sums the new Gram row's products (b is then 0).
    STARSIFT_CUDA_TRY(launch_whiten_predict(state, plan, stream));
    STARSIFT_CUDA_TRY(launch_whiten_camera(state, plan, in, out, stream));
    if (plan.noise.objects) STARSIFT_CUDA_TRY(launch_whiten_objects(state, plan, stream));
    return launch_whiten_store(state, plan, stream);
  }
  // The fused pass decides each pixel alone: reject: objects needs shift: resample
  // (WhitenParams::validate_for_cuda()).
  if (plan.noise.objects) return cudaErrorInvalidValue;
  if (state.half_history) {
    launch_fused<true>(state, plan, in, out, stream);
  } else {
    launch_fused<false>(state, plan, in, out, stream);
  }
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
