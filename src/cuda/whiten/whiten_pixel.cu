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
//   camera pass (B(p) = b(p - s) by the shared bicubic rule, then as above, and the outlier
//   test kept per pixel for the store), store (aligned, whiten_store.cu).
//
// Schedule: grid-stride, one pixel per thread per tile, a fixed grid (kWhitenPixelBlocks) so
// the Gram row partials (one row per block, reduced in a fixed tree) add up in the same order
// every run; warps cover one mask word each. The weights are read once per block into
// shared memory.
#include <cuda_runtime.h>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"
#include "pipeline/whiten/resample.hpp"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

__device__ void load_weights(const WhitenDeviceState& s, int n, float* a) {
  for (int k = threadIdx.x; k < n; k += blockDim.x) a[k] = s.weights_f[k];
  __syncthreads();
}

template <int L>
__global__ void __launch_bounds__(kWhitenBlock)
    fused_kernel(WhitenDeviceState s, WhitenFramePlan plan, WhitenFrameView in,
                 WhitenFrameView out) {
  __shared__ float a[kWhitenMaxLags];
  __shared__ const float* planes[kWhitenMaxLags];
  const int n = plan.n;
  const int kept = plan.kept;
  const int lags = plan.lags_read;
  load_lag_planes(s, plan.lag_slots, lags, planes);
  load_weights(s, n, a);
  float* stored_plane = plane_of(s, plan.new_slot, 0);
  double acc[L];
#pragma unroll
  for (int k = 0; k < L; ++k) acc[k] = 0.0;
  double self = 0.0;
  for_each_tile(s.plane, [&](std::size_t p, bool inside) {
    bool rejected = false;
    if (inside) {
      const int y = static_cast<int>(static_cast<unsigned>(p) / static_cast<unsigned>(s.width));
      const int x = static_cast<int>(p - static_cast<std::size_t>(y) * s.width);
      float h[L];
      float b = 0.0f;
#pragma unroll
      for (int k = 0; k < L; ++k) {
        if (k < lags) h[k] = __ldg(planes[k] + p);
        if (k < n) b += a[k] * h[k];
      }
      const float value = __ldg(s.x + p);
      rejected = camera_pixel(s, plan, p, x, y, value, b, in, out);
      const float stored = stored_value(value, b, n >= 1 && rejected);
      stored_plane[p] = stored;
      if (fit_row(y, plan.fit_subsample)) {
        const double sd = stored;
#pragma unroll
        for (int k = 0; k < L; ++k) {
          if (k < kept) acc[k] += sd * static_cast<double>(h[k]);
        }
        self += sd * sd;
      }
    }
    update_masks(s, plan, p, inside);
    count_rejections(s, rejected);
  });
  double* out_row = s.gram_partials + static_cast<std::size_t>(blockIdx.x) * kWhitenMaxLags;
  block_sum_store(acc, kept, out_row);
  double one[1] = {self};
  block_sum_store(one, 1, out_row + kept);
}

__global__ void __launch_bounds__(kWhitenBlock)
    camera_kernel(WhitenDeviceState s, WhitenFramePlan plan, WhitenFrameView in,
                  WhitenFrameView out) {
  const ShiftKernel k = s.shift->to_camera;
  const int w = s.width, h = s.height;
  const float* b = s.b;
  auto read = [&](int ix, int iy) { return __ldg(b + static_cast<std::size_t>(iy) * w + ix); };
  for_each_tile(s.plane, [&](std::size_t p, bool inside) {
    bool rejected = false;
    if (inside) {
      const int y = static_cast<int>(static_cast<unsigned>(p) / static_cast<unsigned>(w));
      const int x = static_cast<int>(p - static_cast<std::size_t>(y) * w);
      float prediction = 0.0f;
      if (plan.n >= 1) {
        prediction = taps_inside(k, x, y, w, h) ? sample_inside(k, b, x, y, w)
                                                : sample_shifted(k, x, y, w, h, read);
      }
      rejected = camera_pixel(s, plan, p, x, y, __ldg(s.x + p), prediction, in, out);
      s.rejected[p] = rejected;
    }
    count_rejections(s, rejected);
  });
}

}  // namespace

cudaError_t launch_whiten_apply(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                WhitenFrameView in, WhitenFrameView out, cudaStream_t stream) {
  if (plan.resample) {
    // Also when n is 0: the predict pass sums the new Gram row's products (b is then 0).
    STARSIFT_CUDA_TRY(launch_whiten_predict(state, plan, stream));
    camera_kernel<<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan, in, out);
    STARSIFT_CUDA_TRY(cudaPeekAtLastError());
    return launch_whiten_store(state, plan, stream);
  }
  if (plan.lags_read <= kWhitenRegisterLags) {
    fused_kernel<kWhitenRegisterLags>
        <<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan, in, out);
  } else {
    fused_kernel<kWhitenMaxLags>
        <<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan, in, out);
  }
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
