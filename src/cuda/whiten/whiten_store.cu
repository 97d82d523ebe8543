// Whitening, shift: resample, the aligned-grid passes around the camera pass
// (whiten_pixel.cu):
// predict: b = sum a_k h_k on the aligned grid (float, lags in order), for the camera pass
//   to resample. Reads n planes, writes b.
// store: the stored frame (y, or b where the nearest camera pixel was rejected, where the
//   sample point lies outside the camera's view, or where y is not finite), written into the
//   new slot; its products with the kept frames and itself (the new Gram row) as block
//   partials; the invalid masks updated. Reads y, b, the camera pixel's outlier flag and the
//   kept planes.
//
// Schedule: grid-stride, one pixel per thread per tile, a fixed grid (kWhitenPixelBlocks):
// the Gram partials are one row per block, added in a fixed tree, reproducible. Both passes
// are memory-bound; resampling reads the history twice per frame (predict and store) where
// shift: none reads it once (the fused pass).
#include <cuda_runtime.h>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"
#include "pipeline/whiten/resample.hpp"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

__global__ void __launch_bounds__(kWhitenBlock)
    predict_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  __shared__ float a[kWhitenMaxLags];
  const int n = plan.n;
  for (int k = threadIdx.x; k < n; k += blockDim.x) a[k] = s.weights_f[k];
  __syncthreads();
  for_each_tile(s.plane, [&](std::size_t q, bool inside) {
    if (!inside) return;
    float b = 0.0f;
    for (int k = 0; k < n; ++k) b += a[k] * plane_of(s, plan.lag_slots[k])[q];
    s.b[q] = b;
  });
}

template <int L>
__global__ void __launch_bounds__(kWhitenBlock)
    store_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  const int w = s.width, h = s.height;
  const int kept = plan.kept;
  const ShiftKernel to_grid = s.shift->to_grid;
  // An aligned pixel q takes the outlier test of the camera pixel nearest to q + s_t.
  const int dx = static_cast<int>(floor(s.shift->shift_x + 0.5));
  const int dy = static_cast<int>(floor(s.shift->shift_y + 0.5));
  float* stored_plane = plane_of(s, plan.new_slot, 0);
  double acc[L];
#pragma unroll
  for (int k = 0; k < L; ++k) acc[k] = 0.0;
  double self = 0.0;
  for_each_tile(s.plane, [&](std::size_t q, bool inside) {
    if (inside) {
      const int qy = static_cast<int>(static_cast<unsigned>(q) / static_cast<unsigned>(w));
      const int qx = static_cast<int>(q - static_cast<std::size_t>(qy) * w);
      const int cx = qx + dx, cy = qy + dy;
      const bool rejected = cx >= 0 && cx < w && cy >= 0 && cy < h &&
                            s.rejected[static_cast<std::size_t>(cy) * w + cx];
      const bool outside = !shifted_source_inside(to_grid, qx, qy, w, h);
      const float b = plan.n >= 1 ? s.b[q] : 0.0f;
      const float stored = stored_value(s.y[q], b, plan.n >= 1 && (rejected || outside));
      stored_plane[q] = stored;
      if (fit_row(qy, plan.fit_subsample)) {
        const double sd = stored;
#pragma unroll
        for (int k = 0; k < L; ++k) {
          if (k < kept) acc[k] += sd * static_cast<double>(plane_of(s, plan.lag_slots[k])[q]);
        }
        self += sd * sd;
      }
    }
    update_masks(s, plan, q, inside);
  });
  double* out_row = s.gram_partials + static_cast<std::size_t>(blockIdx.x) * kWhitenMaxLags;
  block_sum_store(acc, kept, out_row);
  double one[1] = {self};
  block_sum_store(one, 1, out_row + kept);
}

}  // namespace

cudaError_t launch_whiten_predict(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                  cudaStream_t stream) {
  predict_kernel<<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan);
  return cudaPeekAtLastError();
}

cudaError_t launch_whiten_store(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                cudaStream_t stream) {
  if (plan.kept <= kWhitenRegisterLags) {
    store_kernel<kWhitenRegisterLags><<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan);
  } else {
    store_kernel<kWhitenMaxLags><<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan);
  }
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
