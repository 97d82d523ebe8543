// SPDX-License-Identifier: LGPL-2.1-or-later
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
//   Then the aligned frame's invalid mask into the new slot, the per-pixel count of invalid
//   stored frames updated where the slot's old mask differs (a thread per mask word).
// So the history is read once per frame (twice with fit: current, whose dots come first).
//
// Schedule: a fixed grid (kWhitenPixelBlocks): the Gram partials are one row per block, added
// in a fixed tree, reproducible. predict and store: grid-stride, one pixel per thread per tile
// (a half history's predict and the store two: see there; store measured slower on 2-D tiles
// with each thread's rows loaded together, 172 -> 199 us at 4096^2 on an H100); the store's
// mask update a thread per word.
#include <cuda_runtime.h>

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
// Half: history-format half (the row pairs the value the store pass will keep).
template <int L, bool Row, bool Full, bool Half>
__global__ void __launch_bounds__(kWhitenBlock)
    predict_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  __shared__ float a[L];
  __shared__ const void* planes[L];
  const float scale = s.history_scale, inv_scale = s.history_inv_scale;
  const int n = Full ? L : plan.n;
  const int kept = Full ? L : plan.kept;
  const int lags = Full ? L : (Row ? plan.lags_read : n);
  load_weights(s, n, a);
  load_lag_planes(s, plan.lag_slots, lags, planes);
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
        const double t = fit_value(history_value<Half>(aligned, scale));
#pragma unroll
        for (int k = 0; k < L; ++k) {
          if (k < kept) acc[k] = gram_add(acc[k], t, h[k]);
        }
        self = gram_add(self, t, t);
      }
    }
  };
  for_each_tile(s.plane, [&](std::size_t q, bool inside) {
    if (inside) {
      pixel(q, [&](int k) {
        return k < lags ? history_sample<Half>(planes[k], q, inv_scale) : __ldg(s.y + q);
      });
    }
  });
  if constexpr (Row) store_gram_row(acc, kept, self, s.gram_partials);
}

// The prediction of a full half history (L lags), two pixels a thread: a lag is one 4-byte
// load of two samples. One sample per load (2 bytes a lane) left the pass at 55 % of
// the bandwidth, latency-bound, at 4096^2 on an H100. The same arithmetic per pixel: b in lag
// order; the Gram sums take the pair's two products in turn (another order of the same
// products, as any schedule of the sums is).
template <int L, bool Row>
__global__ void __launch_bounds__(kWhitenBlock)
    predict_pairs_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  __shared__ float a[L];
  __shared__ const void* planes[L];
  const float scale = s.history_scale, inv_scale = s.history_inv_scale;
  load_weights(s, L, a);
  load_lag_planes(s, plan.lag_slots, L, planes);
  double acc[Row ? L : 1];
#pragma unroll
  for (int k = 0; k < (Row ? L : 1); ++k) acc[k] = 0.0;
  double self = 0.0;
  const std::size_t pairs = (s.plane + 1) / 2;
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t pair = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       pair < pairs; pair += step) {
    const std::size_t q = 2 * pair;
    const bool second = q + 1 < s.plane;  // the last pixel of an odd plane pairs with padding
    // The samples stay packed until used: one register a lag for the pair.
    __half2 h[L];
#pragma unroll
    for (int k = 0; k < L; ++k) h[k] = __ldg(static_cast<const __half2*>(planes[k]) + pair);
    double t0 = 0.0, t1 = 0.0;
    if constexpr (Row) {
      const bool fit0 = fit_pixel(s, plan, q), fit1 = second && fit_pixel(s, plan, q + 1);
      t0 = fit0 ? fit_value(half_history_value(__ldg(s.y + q), scale)) : 0.0;
      t1 = fit1 ? fit_value(half_history_value(__ldg(s.y + q + 1), scale)) : 0.0;
    }
    float b0 = 0.0f, b1 = 0.0f;
#pragma unroll
    for (int k = 0; k < L; ++k) {
      const float v0 = __low2float(h[k]) * inv_scale, v1 = __high2float(h[k]) * inv_scale;
      b0 += a[k] * v0;
      b1 += a[k] * v1;
      if constexpr (Row) acc[k] = gram_add(gram_add(acc[k], t0, v0), t1, v1);
    }
    s.b[q] = b0;
    if (second) s.b[q + 1] = b1;
    if constexpr (Row) self = gram_add(gram_add(self, t0, t0), t1, t1);
  }
  if constexpr (Row) store_gram_row(acc, L, self, s.gram_partials);
}

// The prediction pass: a full history with the lag count fixed at compile time (a half one two
// samples a thread, predict_pairs_kernel), else predict_kernel for up to kWhitenRegisterLags or
// kWhitenMaxLags lags. Row: also the new Gram row (unless the fit's dots hold it).
template <bool Row, bool Half>
void launch_predict(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                    cudaStream_t stream) {
  const dim3 grid(kWhitenPixelBlocks), block(kWhitenBlock);
  if (full_history(plan)) {
    with_lag_count(plan.n, [&](auto lags) {
      constexpr int L = decltype(lags)::value;
      if constexpr (Half) {
        predict_pairs_kernel<L, Row><<<grid, block, 0, stream>>>(state, plan);
      } else {
        predict_kernel<L, Row, true, false><<<grid, block, 0, stream>>>(state, plan);
      }
    });
  } else if ((Row ? plan.lags_read : plan.n) <= kWhitenRegisterLags) {
    predict_kernel<kWhitenRegisterLags, Row, false, Half><<<grid, block, 0, stream>>>(state, plan);
  } else {
    predict_kernel<kWhitenMaxLags, Row, false, Half><<<grid, block, 0, stream>>>(state, plan);
  }
}

// The store pass's correction of entry k of the Gram row for one replaced pixel: the stored
// value's product with lag k + 1 (k < kept) or with itself (k == kept), less the aligned
// value's that the row already holds; 0 for k beyond the row.
__device__ __forceinline__ double row_correction(const WhitenDeviceState& s,
                                                 const WhitenFramePlan& plan, int k, std::size_t q,
                                                 double stored, double aligned) {
  if (k < plan.kept) {
    const double other = history_sample(s, plane_of(s, plan.lag_slots[k]), q);
    return stored * other - aligned * other;
  }
  return k == plan.kept ? stored * stored - aligned * aligned : 0.0;
}

// The stored frame's invalid mask enters its slot (the evicted frame's leaves) and the count
// of invalid stored frames per pixel follows, touched only where the two masks differ: one
// thread per mask word, grid-stride (run by the store pass's threads after their pixels: a
// pass of its own cost a launch and ~5 us at 4096^2).
__device__ void update_slot_masks(const WhitenDeviceState& s, const WhitenFramePlan& plan) {
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

template <bool Half>
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
  const float scale = s.history_scale;
  void* stored_plane = plane_of(s, plan.new_slot, 0);
  // Replaced pixels are few: a warp takes them one by one, lane j adding entries j, j + 32
  // and j + 64 of the row, so a thread keeps three sums rather than one per lag.
  double row[3] = {0.0, 0.0, 0.0};
  const double inv_w = 1.0 / w;
  // fit_row() by the double reciprocal, as row_of(): an integer remainder by the run-time
  // subsample was some twenty instructions a pixel, worked out whether or not it was needed.
  const int sub = plan.fit_subsample;
  const double inv_sub = 1.0 / sub;
  // The stored value of aligned pixel (qx, qy) (y and b its aligned and predicted values), and
  // whether the row needs correcting there.
  auto decide = [&](int qx, int qy, float y, float b, bool& fix) {
    const int cx = qx + dx, cy = qy + dy;
    const bool rejected = cx >= 0 && cx < w && cy >= 0 && cy < h &&
                          __ldg(s.rejected + static_cast<std::size_t>(cy) * w + cx);
    const bool outside = !shifted_source_inside(to_grid, qx, qy, w, h);
    const bool replace = predicted && (rejected || outside);
    // The row holds the products of fit_value(y) as the history keeps it (predict pass or
    // the fit's dots); where the stored value differs they are swapped for the stored
    // value's.
    fix = (replace || !finite_float(y)) &&
          (sub == 1 || qy == row_of(static_cast<std::size_t>(qy), sub, inv_sub) * sub);
    return history_value<Half>(stored_value(y, b, replace), scale);
  };
  auto correct = [&](bool fix, std::size_t q, float stored, float y) {
    for (unsigned fixes = __ballot_sync(0xffffffffu, fix); fixes != 0; fixes &= fixes - 1) {
      const int from = __ffs(fixes) - 1;
      const std::size_t at = __shfl_sync(0xffffffffu, static_cast<unsigned long long>(q), from);
      const double sd = __shfl_sync(0xffffffffu, stored, from);
      const double t = fit_value(history_value<Half>(__shfl_sync(0xffffffffu, y, from), scale));
#pragma unroll
      for (int e = 0; e < 3; ++e) row[e] += row_correction(s, plan, lane + 32 * e, at, sd, t);
    }
  };
  // Two pixels a thread (one 8-byte load of y and of b, one store of the pair): the pass moves
  // ~11 bytes a pixel and was bound by instructions and latency at one.
  const std::size_t pairs = (s.plane + 1) / 2;
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  // Every thread runs the same number of iterations: the ballots need the whole warp.
  for (std::size_t start = static_cast<std::size_t>(blockIdx.x) * blockDim.x; start < pairs;
       start += step) {
    const std::size_t pair = start + threadIdx.x;
    const std::size_t q = 2 * pair;
    const bool inside = pair < pairs, second = inside && q + 1 < s.plane;
    float2 y = {0.0f, 0.0f}, b = {0.0f, 0.0f};
    if (second) {
      y = __ldg(reinterpret_cast<const float2*>(s.y) + pair);
      if (predicted) b = __ldg(reinterpret_cast<const float2*>(s.b) + pair);
    } else if (inside) {
      y.x = __ldg(s.y + q);
      if (predicted) b.x = __ldg(s.b + q);
    }
    bool fix0 = false, fix1 = false;
    float stored0 = 0.0f, stored1 = 0.0f;
    if (inside) {
      // The pair's row once; its second pixel may begin the next row (an odd width).
      const int qy = row_of(q, w, inv_w);
      const int qx = static_cast<int>(q - static_cast<std::size_t>(qy) * w);
      stored0 = decide(qx, qy, y.x, b.x, fix0);
      if (second) {
        const bool wraps = qx + 1 == w;
        stored1 = decide(wraps ? 0 : qx + 1, wraps ? qy + 1 : qy, y.y, b.y, fix1);
      }
    }
    if (second) {
      if constexpr (Half) {
        static_cast<__half2*>(stored_plane)[pair] =
            __floats2half2_rn(stored0 * scale, stored1 * scale);
      } else {
        static_cast<float2*>(stored_plane)[pair] = make_float2(stored0, stored1);
      }
    } else if (inside) {
      store_history<Half>(stored_plane, q, stored0, scale);
    }
    // Replaced pixels are few: most warps have none.
    if (__any_sync(0xffffffffu, fix0 || fix1)) {
      correct(fix0, q, stored0, y.x);
      correct(fix1, q + 1, stored1, y.y);
    }
  }
  update_slot_masks(s, plan);
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

}  // namespace

cudaError_t launch_whiten_predict(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                  cudaStream_t stream) {
  // With the fit's dots (fit: current, n == kept) the row is theirs: b alone.
  const bool row = !plan.row_from_dots;
  if (state.half_history) {
    row ? launch_predict<true, true>(state, plan, stream)
        : launch_predict<false, true>(state, plan, stream);
  } else {
    row ? launch_predict<true, false>(state, plan, stream)
        : launch_predict<false, false>(state, plan, stream);
  }
  return cudaPeekAtLastError();
}

cudaError_t launch_whiten_store(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                cudaStream_t stream) {
  if (state.half_history) {
    store_kernel<true><<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan);
  } else {
    store_kernel<false><<<kWhitenPixelBlocks, kWhitenBlock, 0, stream>>>(state, plan);
  }
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
