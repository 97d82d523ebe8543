// SPDX-License-Identifier: LGPL-2.1-or-later
// Whitening, fit: current: r_k = sum over the fit rows of y(p) h_k(p), the current (aligned)
// frame against the n history frames of the fit, in double; also sum y(p)^2, which with
// them is the new Gram row when the fit's frames are the kept ones (WhitenFramePlan::
// row_from_dots).
//
// Schedule: grid-stride over the plane, one pixel per thread per tile (a half history: two), a
// fixed grid (kWhitenPixelBlocks); each thread keeps its n running sums in registers (up to
// kWhitenRegisterLags; a larger history spills them to local memory), the block adds its
// threads' sums in a fixed tree and leaves one row of partials; the solve adds the rows in
// block order. No atomics: the same sums in the same order every run. Memory-bound: the
// target (4 B/px) and n history planes (4n B/px, half: 2n) of the fit rows are read once.
#include <cuda_runtime.h>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

// The lags are split between two groups of blocks (block b takes group b % 2 and every other
// block's share of the pixels): a thread keeps half the sums, which doubles the threads an SM
// holds and the loads in flight; the target is read twice (4 B/px against 4n).
constexpr int kLagGroups = 2;

template <int L, bool Half>
__global__ void __launch_bounds__(kWhitenBlock)
    current_dots_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  const float inv_scale = s.history_inv_scale;
  const float* target = plan.resample ? s.y : s.x;
  const int n = plan.n;
  const int group = static_cast<int>(blockIdx.x) % kLagGroups;
  const int per_group = (n + kLagGroups - 1) / kLagGroups;
  const int first = group * per_group;
  const int count = n - first < per_group ? n - first : per_group;  // may be 0 or less
  __shared__ const void* planes[L];
  load_lag_planes(s, plan.fit_slots + first, count > 0 ? count : 0, planes);
  double acc[L];
#pragma unroll
  for (int k = 0; k < L; ++k) acc[k] = 0.0;
  double self = 0.0;
  const std::size_t step = static_cast<std::size_t>(gridDim.x / kLagGroups) * blockDim.x;
  const std::size_t start =
      static_cast<std::size_t>(blockIdx.x / kLagGroups) * blockDim.x + threadIdx.x;
  // Only the fit rows are visited (fit-subsample k: rows 0, k, 2k, ...): the pass reads a k-th
  // of the history. fit_rows(): how many; the j-th fit unit (a pair, or a pixel) maps to the
  // plane through its row.
  const std::size_t width = static_cast<std::size_t>(s.width);
  const std::size_t sub = static_cast<std::size_t>(plan.fit_subsample);
  const std::size_t fit_rows = (static_cast<std::size_t>(s.height) + sub - 1) / sub;
  if constexpr (Half) {
    // Two pixels a thread, one 4-byte load a lag (as the prediction's predict_pairs_kernel:
    // two bytes a lane left the pass latency-bound); the pair's products in turn. With an
    // even width no pair straddles two rows and the fit rows' pairs are listed directly; an
    // odd width walks every pair and loads only those that touch a fit row.
    const bool rows_of_pairs = width % 2 == 0;
    const std::size_t row_pairs = width / 2;
    const std::size_t pairs = rows_of_pairs ? fit_rows * row_pairs : (s.plane + 1) / 2;
    // The unit's fit row without a 64-bit division (a software routine of some hundred
    // instructions, which had made this pass instruction-bound).
    const double inv_row_pairs = 1.0 / static_cast<double>(row_pairs);
    for (std::size_t unit = start; unit < pairs; unit += step) {
      std::size_t pair = unit;
      bool fit0 = true, fit1 = true;  // a fit row's pair: both on it
      if (rows_of_pairs) {
        const auto fit =
            static_cast<std::size_t>(row_of(unit, static_cast<int>(row_pairs), inv_row_pairs));
        pair = fit * sub * row_pairs + (unit - fit * row_pairs);
      } else {
        fit0 = fit_pixel(s, plan, 2 * pair);
        fit1 = 2 * pair + 1 < s.plane && fit_pixel(s, plan, 2 * pair + 1);
      }
      const std::size_t q = 2 * pair;
      if (!fit0 && !fit1) continue;
      const double t0 = fit0 ? fit_value(__ldg(target + q)) : 0.0;
      const double t1 = fit1 ? fit_value(__ldg(target + q + 1)) : 0.0;
#pragma unroll
      for (int k = 0; k < L; ++k) {
        if (k < count) {
          const __half2 h = __ldg(static_cast<const __half2*>(planes[k]) + pair);
          acc[k] = gram_add(gram_add(acc[k], t0, __low2float(h) * inv_scale), t1,
                            __high2float(h) * inv_scale);
        }
      }
      self += t0 * t0;
      self += t1 * t1;
    }
  } else {
    const std::size_t pixels = fit_rows * width;
    const double inv_w = 1.0 / static_cast<double>(width);
    for (std::size_t unit = start; unit < pixels; unit += step) {
      const auto fit = static_cast<std::size_t>(row_of(unit, s.width, inv_w));
      const std::size_t p = fit * sub * width + (unit - fit * width);
      const double t = fit_value(__ldg(target + p));
#pragma unroll
      for (int k = 0; k < L; ++k) {
        if (k < count) acc[k] = gram_add(acc[k], t, history_sample<Half>(planes[k], p, inv_scale));
      }
      self += t * t;
    }
  }
  // This block's row: its group's sums, 0 for the other group's lags; y^2 from group 0.
  double* out_row = s.dot_partials + static_cast<std::size_t>(blockIdx.x) * kWhitenMaxLags;
  for (int k = threadIdx.x; k < n; k += blockDim.x) {
    if (k < first || k >= first + count) out_row[k] = 0.0;
  }
  block_sum_store(acc, count > 0 ? count : 0, out_row + first);
  double one[1] = {group == 0 ? self : 0.0};
  block_sum_store(one, 1, out_row + n);
}

}  // namespace

cudaError_t launch_whiten_current_dots(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                       cudaStream_t stream) {
  static_assert(kWhitenPixelBlocks % kLagGroups == 0, "every group gets the same blocks");
  constexpr int kSmall = (kWhitenRegisterLags + kLagGroups - 1) / kLagGroups;
  constexpr int kLarge = (kWhitenMaxLags + kLagGroups - 1) / kLagGroups;
  const dim3 grid(kWhitenPixelBlocks), block(kWhitenBlock);
  const bool small = plan.n <= kWhitenRegisterLags;
  if (state.half_history) {
    small ? current_dots_kernel<kSmall, true><<<grid, block, 0, stream>>>(state, plan)
          : current_dots_kernel<kLarge, true><<<grid, block, 0, stream>>>(state, plan);
  } else {
    small ? current_dots_kernel<kSmall, false><<<grid, block, 0, stream>>>(state, plan)
          : current_dots_kernel<kLarge, false><<<grid, block, 0, stream>>>(state, plan);
  }
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
