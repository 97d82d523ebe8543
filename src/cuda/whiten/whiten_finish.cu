// SPDX-License-Identifier: LGPL-2.1-or-later
// Whitening, end of a frame: the new frame's Gram row (its block partials added in block
// order, for resample the aligned frame's products and then the corrections) written into the
// circular Gram matrix, and the frame's rejection and despike counts into its statistics. Also the
// reset of the state and the frame's sequence of launches.
//
// Schedule: a warp per Gram entry (kept + 1 warps over as many blocks as they need, so no warp
// adds more than one entry: each is a chain of dependent L2 loads), each lane adding every
// 32nd block's partial, then a fixed shuffle tree: reproducible.
#include <cuda_runtime.h>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

constexpr int kFinishWarps = kWhitenBlock / 32;

__global__ void __launch_bounds__(kWhitenBlock)
    finish_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  const int cap = s.capacity;
  const int slot = plan.new_slot;
  // shift: none: the fused pass left the row. resample: the aligned frame's products (the
  // fit's dots or the predict pass's) plus the store pass's corrections.
  const double* base = plan.row_from_dots ? s.dot_partials : s.gram_partials;
  const int k = static_cast<int>(blockIdx.x) * kFinishWarps + static_cast<int>(threadIdx.x >> 5);
  if (k <= plan.kept) {  // the same in the whole warp
    double dot = warp_sum_partials<kWhitenPixelBlocks>(base, kWhitenMaxLags, k);
    if (plan.resample) {
      dot += warp_sum_partials<kWhitenPixelBlocks>(s.store_partials, kWhitenMaxLags, k);
    }
    if ((threadIdx.x & 31) == 0) {
      if (k == plan.kept) {
        s.gram[slot * cap + slot] = dot;
      } else {
        const int other = plan.lag_slots[k];
        s.gram[slot * cap + other] = dot;
        s.gram[other * cap + slot] = dot;
      }
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    // Field by field (whiten_solve.cu says why), and the despike count cleared for the next
    // frame's load kernel.
    s.stats->rejected = *s.rejected_count;
    s.stats->despiked = *s.despiked_count;
    *s.despiked_count = 0;
  }
}

}  // namespace

cudaError_t launch_whiten_finish(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                 cudaStream_t stream) {
  const int blocks = (plan.kept + 1 + kFinishWarps - 1) / kFinishWarps;
  finish_kernel<<<blocks, kWhitenBlock, 0, stream>>>(state, plan);
  return cudaPeekAtLastError();
}

cudaError_t launch_whiten_reset(const WhitenDeviceState& s, cudaStream_t stream) {
  STARSIFT_CUDA_TRY(cudaMemsetAsync(s.var, 0, s.plane * sizeof(float), stream));
  STARSIFT_CUDA_TRY(cudaMemsetAsync(s.run, 0, s.plane, stream));
  STARSIFT_CUDA_TRY(cudaMemsetAsync(s.window_count, 0, s.plane, stream));
  STARSIFT_CUDA_TRY(cudaMemsetAsync(s.solve, 0, sizeof(WhitenSolveState), stream));
  STARSIFT_CUDA_TRY(cudaMemsetAsync(s.despiked_count, 0, sizeof(unsigned long long), stream));
  STARSIFT_CUDA_TRY(cudaMemsetAsync(s.shift, 0, sizeof(WhitenShiftState), stream));
  return cudaMemsetAsync(s.weights_f, 0, kWhitenMaxLags * sizeof(float), stream);
}

cudaError_t launch_whiten_frame(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                WhitenFrameView in, WhitenFrameView out, cudaStream_t stream) {
  STARSIFT_CUDA_TRY(launch_whiten_load(state, plan, in, stream));
  if (plan.resample) {
    STARSIFT_CUDA_TRY(launch_whiten_shift(state, plan, stream));
    STARSIFT_CUDA_TRY(launch_whiten_align(state, plan, stream));
  }
  STARSIFT_CUDA_TRY(launch_whiten_fit(state, plan, stream));
  STARSIFT_CUDA_TRY(launch_whiten_apply(state, plan, in, out, stream));
  return launch_whiten_finish(state, plan, stream);
}

}  // namespace starsift::cuda
