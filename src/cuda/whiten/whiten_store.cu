// Whitening, shift: resample, the aligned-grid passes around the camera pass
// (whiten_pixel.cu):
// predict: b = sum a_k h_k on the aligned grid (float, lags in order), for the camera pass
//   to resample; unless the fit's dots already hold them (WhitenFramePlan::row_from_dots),
//   also the aligned frame's products with the kept frames and itself, the new Gram row as
//   if nothing were replaced. Reads max(n, kept) planes and y, writes b.
// store: the stored frame (y, or b where the nearest camera pixel was rejected, where the
//   sample point lies outside the camera's view, or where y is not finite), written into the
//   new slot; where it is not y, the difference it makes to the Gram row (few pixels: only
//   those read the history again). Reads y, b and the camera pixel's outlier flag.
// masks: the aligned frame's invalid mask into the new slot, the per-pixel count of invalid
//   stored frames updated where the slot's old mask differs (a thread per mask word).
// So the history is read once per frame (twice with fit: current, whose dots come first).
//
// Schedule: a fixed grid (kWhitenPixelBlocks): the Gram partials are one row per block, added
// in a fixed tree, reproducible. predict: grid-stride, one pixel per thread per tile. store:
// the 2-D tiles of whiten_device.cuh dealt to the blocks in turn, each thread's rows loaded
// together (the pass was bound by the latency of dependent loads). masks: a thread per word.
#include <cuda_runtime.h>

#include <algorithm>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"
#include "pipeline/whiten/resample.hpp"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

// b and (Row) the new Gram row over lags up to L. Full: a full history in steady state,
// n == kept == lags_read == L, so no lag is tested per pixel (with the counts known only at
// run time those tests were a third of the pass's instructions, and the pass is bound by
// instructions and latency more than by bandwidth); otherwise the lags beyond n (prediction),
// kept (row) or lags_read are skipped per pixel (the first frames, a changing history).
template <int L, bool Row, bool Full>
__global__ void __launch_bounds__(kWhitenBlock)
    predict_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  __shared__ float a[L];
  __shared__ const float* planes[L];
  const int n = Full ? L : plan.n;
  const int kept = Full ? L : plan.kept;
  const int lags = Full ? L : (Row ? plan.lags_read : n);
  for (int k = threadIdx.x; k < n; k += blockDim.x) a[k] = s.weights_f[k];
  load_lag_planes(s, plan.lag_slots, lags, planes);  // also the barrier after a[]
  double acc[Row ? L : 1];
#pragma unroll
  for (int k = 0; k < (Row ? L : 1); ++k) acc[k] = 0.0;
  double self = 0.0;
  // values(k): lag k + 1's value of the pixel, k < lags; values(lags): the aligned frame's.
  auto pixel = [&](std::size_t q, auto values) {
    float h[L];
#pragma unroll
    for (int k = 0; k < L; ++k) {
      if (k < lags) h[k] = values(k);
    }
    const float aligned = Row ? values(lags) : 0.0f;
    float b = 0.0f;
#pragma unroll
    for (int k = 0; k < L; ++k) {
      if (k < n) b += a[k] * h[k];
    }
    s.b[q] = b;
    if constexpr (Row) {
      if (fit_pixel(s, plan, q)) {
        const double t = fit_value(aligned);
#pragma unroll
        for (int k = 0; k < L; ++k) {
          if (k < kept) acc[k] = gram_add(acc[k], t, h[k]);
        }
        self = gram_add(self, t, t);
      }
    }
  };
  for_each_tile(s.plane, [&](std::size_t q, bool inside) {
    if (inside) pixel(q, [&](int k) { return __ldg((k < lags ? planes[k] : s.y) + q); });
  });
  if constexpr (Row) {
    double* out_row = s.gram_partials + static_cast<std::size_t>(blockIdx.x) * kWhitenMaxLags;
    block_sum_store(acc, kept, out_row);
    double one[1] = {self};
    block_sum_store(one, 1, out_row + kept);
  }
}

// predict_kernel<L, Row, true> for L == lags, 1 <= lags <= kWhitenRegisterLags.
template <bool Row, int L = 1>
void launch_predict_full(int lags, const WhitenDeviceState& state, const WhitenFramePlan& plan,
                         cudaStream_t stream) {
  if constexpr (L <= kWhitenRegisterLags) {
    if (lags == L) {
      predict_kernel<L, Row, true><<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan);
    } else {
      launch_predict_full<Row, L + 1>(lags, state, plan, stream);
    }
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
  const bool predicted = plan.n >= 1;
  float* stored_plane = plane_of(s, plan.new_slot, 0);
  // Replaced pixels are few: a warp takes them one by one, lane j adding entries j, j + 32
  // and j + 64 of the row, so a thread keeps three sums rather than one per lag.
  double row[3] = {0.0, 0.0, 0.0};
  const int tiles_x = (w + kTileW - 1) / kTileW;
  const int tiles = tiles_x * ((h + kTileH - 1) / kTileH);
  const int qx_in_tile = static_cast<int>(threadIdx.x) % kTileW;
  const int qy_in_tile = static_cast<int>(threadIdx.x) / kTileW;
  // 2-D tiles dealt to the blocks in turn (a fixed assignment: the partials' order is fixed).
  for (int tile = static_cast<int>(blockIdx.x); tile < tiles; tile += static_cast<int>(gridDim.x)) {
    const int tile_y = tile / tiles_x;
    const int qx = (tile - tile_y * tiles_x) * kTileW + qx_in_tile;
    // The loads of the thread's rows first, so they are in flight together.
    float ys[kRowsPerThread], bs[kRowsPerThread];
    bool rejected[kRowsPerThread];
#pragma unroll
    for (int j = 0; j < kRowsPerThread; ++j) {
      const int qy = tile_y * kTileH + qy_in_tile + j * kThreadRows;
      ys[j] = bs[j] = 0.0f;
      rejected[j] = false;
      if (qx < w && qy < h) {
        const std::size_t q = static_cast<std::size_t>(qy) * w + qx;
        const int cx = qx + dx, cy = qy + dy;
        ys[j] = __ldg(s.y + q);
        if (predicted) bs[j] = __ldg(s.b + q);
        rejected[j] = cx >= 0 && cx < w && cy >= 0 && cy < h &&
                      __ldg(s.rejected + static_cast<std::size_t>(cy) * w + cx);
      }
    }
#pragma unroll
    for (int j = 0; j < kRowsPerThread; ++j) {
      const int qy = tile_y * kTileH + qy_in_tile + j * kThreadRows;
      const std::size_t q = static_cast<std::size_t>(qy) * w + qx;
      bool fix = false;
      float stored = 0.0f;
      if (qx < w && qy < h) {
        const bool outside = !shifted_source_inside(to_grid, qx, qy, w, h);
        const bool replace = predicted && (rejected[j] || outside);
        stored = stored_value(ys[j], bs[j], replace);
        stored_plane[q] = stored;
        // The row holds fit_value(y)'s products (predict pass or the fit's dots); where the
        // stored value differs they are swapped for the stored value's.
        fix = (replace || !finite_float(ys[j])) && fit_row(qy, plan.fit_subsample);
      }
      for (unsigned fixes = __ballot_sync(0xffffffffu, fix); fixes != 0; fixes &= fixes - 1) {
        const int from = __ffs(fixes) - 1;
        const std::size_t at = __shfl_sync(0xffffffffu, static_cast<unsigned long long>(q), from);
        const double sd = __shfl_sync(0xffffffffu, stored, from);
        const double t = fit_value(__shfl_sync(0xffffffffu, ys[j], from));
#pragma unroll
        for (int e = 0; e < 3; ++e) row[e] += row_correction(s, plan, lane + 32 * e, at, sd, t);
      }
    }
  }
  // The warps' sums, then the block's in warp order: one row of partials per block.
#pragma unroll
  for (int e = 0; e < 3; ++e) {
    const int k = lane + 32 * e;
    if (k < kWhitenMaxLags) warp_rows[warp][k] = row[e];
  }
  __syncthreads();
  double* out_row = s.store_partials + static_cast<std::size_t>(blockIdx.x) * kWhitenMaxLags;
  for (int k = threadIdx.x; k <= plan.kept; k += blockDim.x) {
    double sum = 0.0;
    for (int v = 0; v < kWarps; ++v) sum += warp_rows[v][k];
    out_row[k] = sum;
  }
}

// The stored frame's invalid mask enters its slot (the evicted frame's leaves) and the count
// of invalid stored frames per pixel follows, touched only where the two masks differ: one
// thread per mask word.
__global__ void __launch_bounds__(kWhitenBlock)
    masks_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  std::uint32_t* slot = s.slot_bits + static_cast<std::size_t>(plan.new_slot) * s.words;
  const int stride = static_cast<int>(gridDim.x * blockDim.x);
  for (int word = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); word < s.words;
       word += stride) {
    const std::uint32_t now = s.frame_bits[word];
    const std::uint32_t before = plan.evicting ? slot[word] : 0u;
    for (std::uint32_t diff = now ^ before; diff != 0; diff &= diff - 1) {
      const int bit = __ffs(static_cast<int>(diff)) - 1;
      const std::size_t p = static_cast<std::size_t>(word) * 32 + bit;
      s.window_count[p] =
          static_cast<unsigned char>(s.window_count[p] + (((now >> bit) & 1u) ? 1 : -1));
    }
    slot[word] = now;
  }
}

}  // namespace

cudaError_t launch_whiten_predict(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                  cudaStream_t stream) {
  const dim3 grid(kWhitenPixelBlocks), block(kWhitenBlock);
  const bool full = plan.n >= 1 && plan.n == plan.kept && plan.n <= kWhitenRegisterLags;
  if (plan.row_from_dots) {
    if (full) {
      launch_predict_full<false>(plan.n, state, plan, stream);
    } else if (plan.n <= kWhitenRegisterLags) {
      predict_kernel<kWhitenRegisterLags, false, false><<<grid, block, 0, stream>>>(state, plan);
    } else {
      predict_kernel<kWhitenMaxLags, false, false><<<grid, block, 0, stream>>>(state, plan);
    }
  } else if (full) {
    launch_predict_full<true>(plan.n, state, plan, stream);
  } else if (plan.lags_read <= kWhitenRegisterLags) {
    predict_kernel<kWhitenRegisterLags, true, false><<<grid, block, 0, stream>>>(state, plan);
  } else {
    predict_kernel<kWhitenMaxLags, true, false><<<grid, block, 0, stream>>>(state, plan);
  }
  return cudaPeekAtLastError();
}

cudaError_t launch_whiten_store(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                cudaStream_t stream) {
  store_kernel<<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan);
  return cudaPeekAtLastError();
}

cudaError_t launch_whiten_masks(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                cudaStream_t stream) {
  const int needed = (state.words + kWhitenBlock - 1) / kWhitenBlock;
  const int blocks = std::min(needed, 1024);
  masks_kernel<<<blocks, kWhitenBlock, 0, stream>>>(state, plan);
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
