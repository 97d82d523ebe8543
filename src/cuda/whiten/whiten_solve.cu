// SPDX-License-Identifier: LGPL-2.1-or-later
// Whitening, fit: the normal equations assembled and solved on the device, so a frame needs
// no host round trip: R from the Gram matrix, r from this frame's partial dots (current) or
// the Gram matrix (past), less the excluded pixels' products, then (R + gamma I) a = r by the
// shared Cholesky code (weights.hpp), in double. Also begins the frame's WhitenStats.
//
// Schedule: two kernels. The assembly gives every entry of (R, r) a warp of its own (a few
// hundred warps over the whole GPU): the lanes add the blocks' partials of that entry in a
// fixed order (lane l takes blocks l, l + 32, ...; the excluded partials are entry-major, so
// these loads are coalesced), then a fixed shuffle tree: the same sums every run, no atomics
// on doubles. One block adding 230 entries over 512 blocks' partials, a thread an entry, took
// ~80 us a frame at 4096^2, N = 20, once every block had excluded pixels. Then one block: one
// warp solves (n <= 64), the factorisation's rows below each pivot shared over the lanes, in
// shared memory up to kSharedLags frames. One thread solving from global memory took ~110 us
// a frame at n = 20 on an H100, a tenth of the frame's whole budget at 4096^2.
#include <cuda_runtime.h>

#include <cmath>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"
#include "pipeline/whiten/weights.hpp"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

constexpr int kSharedLags = 24;

struct WarpSync {
  __device__ void operator()() const { __syncwarp(); }
};

constexpr int kAssembleWarps = kWhitenBlock / 32;

// Warp t: entry t of (R, r) (the lower triangle of R row by row, then r), less its excluded
// sum, into s.system (both halves, n x n) and s.rhs; the warp after the last entry: the
// number of excluded pixels.
__global__ void __launch_bounds__(kWhitenBlock)
    assemble_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  const int n = plan.n;
  const int triangle = n * (n + 1) / 2;
  const int entries = triangle + n;
  const int task =
      static_cast<int>(blockIdx.x) * kAssembleWarps + static_cast<int>(threadIdx.x >> 5);
  const int lane = static_cast<int>(threadIdx.x & 31);
  if (task > entries) return;
  if (task == entries) {
    unsigned long long count = 0;
    for (int b = lane; b < kWhitenExcludedBlocks; b += 32) count += s.excluded_counts[b];
    for (int offset = 16; offset > 0; offset >>= 1)
      count += __shfl_down_sync(0xffffffffu, count, offset);
    if (lane == 0) s.solve->excluded = count;
    return;
  }
  const double excluded = warp_sum_partials<kWhitenExcludedBlocks>(s.excluded_partials, 1,
                                                                   task * kWhitenExcludedBlocks);
  const int cap = s.capacity;
  if (task < triangle) {
    if (lane != 0) return;
    int r, c;
    entry_position(task, r, c);
    const double v = s.gram[plan.fit_slots[r] * cap + plan.fit_slots[c]] - excluded;
    s.system[r * n + c] = v;
    s.system[c * n + r] = v;
    return;
  }
  const int k = task - triangle;
  const double dot = plan.past
                         ? s.gram[plan.target_slot * cap + plan.fit_slots[k]]
                         : warp_sum_partials<kWhitenPixelBlocks>(s.dot_partials, kWhitenMaxLags, k);
  if (lane == 0) s.rhs[k] = dot - excluded;
}

__global__ void __launch_bounds__(kWhitenBlock)
    solve_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  // Histories up to kSharedLags solve in shared memory: the factorisation reads back what it
  // has just written, which from global memory costs an L2 round trip per step.
  __shared__ double shared_system[kSharedLags * kSharedLags],
      shared_work[kSharedLags * kSharedLags];
  __shared__ double shared_rhs[kSharedLags], shared_weights[kSharedLags];
  const int n = plan.n;
  const bool small = n <= kSharedLags;
  double* system = small ? shared_system : s.system;
  double* work = small ? shared_work : s.work;
  double* rhs = small ? shared_rhs : s.rhs;
  double* weights = small ? shared_weights : s.weights;
  const bool solving = n >= 1 && plan.due;
  if (solving && small) {  // the assembled system (assemble_kernel) into shared memory
    for (int i = threadIdx.x; i < n * n; i += blockDim.x) shared_system[i] = s.system[i];
    for (int k = threadIdx.x; k < n; k += blockDim.x) shared_rhs[k] = s.rhs[k];
  }
  __syncthreads();
  // The solve on warp 0 (cholesky.hpp's lanes), the statistics by its lane 0.
  if (threadIdx.x >= 32) return;
  const int lane = static_cast<int>(threadIdx.x);
  WhitenSolveState& solve = *s.solve;
  if (n == 0) {
    if (lane == 0) {
      solve.weights.n = 0;
      solve.weights.gamma = 0.0;
      solve.weights.sum_sq = 0.0;
      solve.weights.regularised_more = false;
      solve.excluded = 0;
    }
  } else if (solving) {
    int identity[kWhitenMaxLags];
    for (int k = 0; k < n; ++k) identity[k] = k;
    const WhitenWeights w = solve_whiten_weights(system, n, identity, n, rhs, plan.gamma, work,
                                                 weights, lane, 32, WarpSync{});
    if (lane == 0) {  // solve.excluded: the assembly counted them
      solve.weights.n = w.n;
      solve.weights.gamma = w.gamma;
      solve.weights.sum_sq = w.sum_sq;
      solve.weights.regularised_more = w.regularised_more;
    }
    for (int k = lane; k < n; k += 32) {
      s.weights[k] = weights[k];
      s.weights_f[k] = static_cast<float>(weights[k]);
    }
  }
  __syncwarp();
  if (lane != 0) return;
  // Field by field into global memory: nvcc 13.0 compiled a local WhitenStats copied out
  // whole into a copy of the plan parameter's first 88 bytes (the record read back held the
  // plan, not the stats).
  WhitenStats& st = *s.stats;
  const WhitenWeights& w = s.solve->weights;
  st.frame = plan.frame;
  st.history_used = n;
  st.warmup = plan.warm;
  st.refit = solving;
  st.weight_sq_sum = w.sum_sq;
  st.noise_floor = sqrt(1.0 + w.sum_sq);
  st.gamma = w.gamma;
  st.excluded = solving ? s.solve->excluded : 0;
  st.rejected = 0;  // the finish kernel writes the count
  st.despiked = 0;  // and this one
  if (plan.resample) {
    const WhitenShiftState& shift = *s.shift;
    st.shift_x = shift.shift_x;
    st.shift_y = shift.shift_y;
    st.shift_peak = shift.peak;
    st.reference_changed = shift.adopt != 0;
  } else {
    st.shift_x = st.shift_y = st.shift_peak = 0.0;
    st.reference_changed = false;
  }
  *s.rejected_count = 0;
}

}  // namespace

cudaError_t launch_whiten_solve(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                cudaStream_t stream) {
  if (plan.n >= 1 && plan.due) {
    const int tasks = plan.n * (plan.n + 1) / 2 + plan.n + 1;  // the entries and the count
    assemble_kernel<<<(tasks + kAssembleWarps - 1) / kAssembleWarps, kWhitenBlock, 0, stream>>>(
        state, plan);
    STARSIFT_CUDA_TRY(cudaPeekAtLastError());
  }
  solve_kernel<<<1, kWhitenBlock, 0, stream>>>(state, plan);
  return cudaPeekAtLastError();
}

cudaError_t launch_whiten_fit(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                              cudaStream_t stream) {
  if (plan.n >= 1 && plan.due) {
    if (!plan.past) STARSIFT_CUDA_TRY(launch_whiten_current_dots(state, plan, stream));
    STARSIFT_CUDA_TRY(launch_whiten_excluded(state, plan, stream));
  }
  return launch_whiten_solve(state, plan, stream);
}

}  // namespace starsift::cuda
