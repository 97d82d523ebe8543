// Whitening, shift: resample, the aligned-grid passes around the camera pass
// (whiten_pixel.cu):
// predict: b = sum a_k h_k on the aligned grid (float, lags in order), for the camera pass
//   to resample; unless the fit's dots already hold them (WhitenFramePlan::row_from_dots),
//   also the aligned frame's products with the kept frames and itself, the new Gram row as
//   if nothing were replaced. Reads max(n, kept) planes and y, writes b.
// store: the stored frame (y, or b where the nearest camera pixel was rejected, where the
//   sample point lies outside the camera's view, or where y is not finite), written into the
//   new slot; where it is not y, the difference it makes to the Gram row (few pixels: only
//   those read the history again); the invalid masks updated. Reads y, b and the camera
//   pixel's outlier flag.
// So the history is read once per frame (twice with fit: current, whose dots come first).
//
// Schedule: grid-stride, one pixel per thread per tile, a fixed grid (kWhitenPixelBlocks):
// the Gram partials are one row per block, added in a fixed tree, reproducible.
#include <cuda_runtime.h>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"
#include "pipeline/whiten/resample.hpp"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

template <int L, bool Row>
__global__ void __launch_bounds__(kWhitenBlock)
    predict_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  __shared__ float a[kWhitenMaxLags];
  __shared__ const float* planes[kWhitenMaxLags];
  const int n = plan.n;
  const int kept = plan.kept;
  const int lags = Row ? plan.lags_read : n;
  // The row's form is instruction-bound on working out the lag planes per pixel; the lean
  // form measured faster with them worked out (H100).
  if constexpr (Row) load_lag_planes(s, plan.lag_slots, lags, planes);
  for (int k = threadIdx.x; k < n; k += blockDim.x) a[k] = s.weights_f[k];
  __syncthreads();
  double acc[Row ? L : 1];
#pragma unroll
  for (int k = 0; k < (Row ? L : 1); ++k) acc[k] = 0.0;
  double self = 0.0;
  for_each_tile(s.plane, [&](std::size_t q, bool inside) {
    if (!inside) return;
    float h[L];
    float b = 0.0f;
    const float aligned = Row ? __ldg(s.y + q) : 0.0f;  // read-only here: loaded with the lags
#pragma unroll
    for (int k = 0; k < L; ++k) {
      if (k < lags) h[k] = __ldg((Row ? planes[k] : plane_of(s, plan.lag_slots[k])) + q);
      if (k < n) b += a[k] * h[k];
    }
    s.b[q] = b;
    if constexpr (Row) {
      if (fit_pixel(s, plan, q)) {
        const double t = fit_value(aligned);
#pragma unroll
        for (int k = 0; k < L; ++k) {
          if (k < kept) acc[k] += t * static_cast<double>(h[k]);
        }
        self += t * t;
      }
    }
  });
  if constexpr (Row) {
    double* out_row = s.gram_partials + static_cast<std::size_t>(blockIdx.x) * kWhitenMaxLags;
    block_sum_store(acc, kept, out_row);
    double one[1] = {self};
    block_sum_store(one, 1, out_row + kept);
  }
}

// The store pass's correction of entry k of the Gram row for one replaced pixel: the stored
// value's product with lag k + 1 (k < kept) or with itself (k == kept), less the aligned
// value's that the row already holds; 0 for k beyond the row.
__device__ __forceinline__ double row_correction(const WhitenDeviceState& s,
                                                 const WhitenFramePlan& plan, int k, std::size_t q,
                                                 double stored, double aligned) {
  if (k < plan.kept) {
    const double other = __ldg(plane_of(s, plan.lag_slots[k]) + q);
    return stored * other - aligned * other;
  }
  return k == plan.kept ? stored * stored - aligned * aligned : 0.0;
}

__global__ void __launch_bounds__(kWhitenBlock)
    store_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  constexpr int kWarps = kWhitenBlock / 32;
  __shared__ double warp_rows[kWarps][kWhitenMaxLags];
  const int w = s.width, h = s.height;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const ShiftKernel to_grid = s.shift->to_grid;
  // An aligned pixel q takes the outlier test of the camera pixel nearest to q + s_t.
  const int dx = static_cast<int>(floor(s.shift->shift_x + 0.5));
  const int dy = static_cast<int>(floor(s.shift->shift_y + 0.5));
  float* stored_plane = plane_of(s, plan.new_slot, 0);
  // Replaced pixels are few: a warp takes them one by one, lane j adding entries j, j + 32
  // and j + 64 of the row, so a thread keeps three sums rather than one per lag.
  double row[3] = {0.0, 0.0, 0.0};
  for_each_tile(s.plane, [&](std::size_t q, bool inside) {
    bool fix = false;
    float stored = 0.0f, y = 0.0f;
    if (inside) {
      const int qy = static_cast<int>(static_cast<unsigned>(q) / static_cast<unsigned>(w));
      const int qx = static_cast<int>(q - static_cast<std::size_t>(qy) * w);
      const int cx = qx + dx, cy = qy + dy;
      const bool rejected = cx >= 0 && cx < w && cy >= 0 && cy < h &&
                            __ldg(s.rejected + static_cast<std::size_t>(cy) * w + cx);
      const bool outside = !shifted_source_inside(to_grid, qx, qy, w, h);
      y = __ldg(s.y + q);
      const bool replace = plan.n >= 1 && (rejected || outside);
      const float b = plan.n >= 1 ? __ldg(s.b + q) : 0.0f;
      stored = stored_value(y, b, replace);
      stored_plane[q] = stored;
      // The row holds fit_value(y)'s products (predict pass or the fit's dots); where the
      // stored value differs they are swapped for the stored value's.
      fix = (replace || !finite_float(y)) && fit_row(qy, plan.fit_subsample);
    }
    for (unsigned fixes = __ballot_sync(0xffffffffu, fix); fixes != 0; fixes &= fixes - 1) {
      const int from = __ffs(fixes) - 1;
      const std::size_t at = __shfl_sync(0xffffffffu, static_cast<unsigned long long>(q), from);
      const double sd = __shfl_sync(0xffffffffu, stored, from);
      const double t = fit_value(__shfl_sync(0xffffffffu, y, from));
#pragma unroll
      for (int j = 0; j < 3; ++j) row[j] += row_correction(s, plan, lane + 32 * j, at, sd, t);
    }
    update_masks(s, plan, q, inside);
  });
  // The warps' sums, then the block's in warp order: one row of partials per block.
#pragma unroll
  for (int j = 0; j < 3; ++j) {
    const int k = lane + 32 * j;
    if (k < kWhitenMaxLags) warp_rows[warp][k] = row[j];
  }
  __syncthreads();
  double* out_row = s.store_partials + static_cast<std::size_t>(blockIdx.x) * kWhitenMaxLags;
  for (int k = threadIdx.x; k <= plan.kept; k += blockDim.x) {
    double sum = 0.0;
    for (int v = 0; v < kWarps; ++v) sum += warp_rows[v][k];
    out_row[k] = sum;
  }
}

}  // namespace

cudaError_t launch_whiten_predict(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                  cudaStream_t stream) {
  const dim3 grid(kWhitenPixelBlocks), block(kWhitenBlock);
  if (plan.row_from_dots) {
    if (plan.n <= kWhitenRegisterLags) {
      predict_kernel<kWhitenRegisterLags, false><<<grid, block, 0, stream>>>(state, plan);
    } else {
      predict_kernel<kWhitenMaxLags, false><<<grid, block, 0, stream>>>(state, plan);
    }
  } else if (plan.lags_read <= kWhitenRegisterLags) {
    predict_kernel<kWhitenRegisterLags, true><<<grid, block, 0, stream>>>(state, plan);
  } else {
    predict_kernel<kWhitenMaxLags, true><<<grid, block, 0, stream>>>(state, plan);
  }
  return cudaPeekAtLastError();
}

cudaError_t launch_whiten_store(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                cudaStream_t stream) {
  store_kernel<<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan);
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
