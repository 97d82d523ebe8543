// Whitening, fit: the normal equations assembled and solved on the device, so a frame needs
// no host round trip: R from the Gram matrix, r from this frame's partial dots (current) or
// the Gram matrix (past), less the excluded pixels' products, then (R + gamma I) a = r by the
// shared Cholesky code (weights.hpp), in double. Also begins the frame's WhitenStats.
//
// Schedule: one block. Its threads add the partial sums (each entry over the blocks in block
// order: fixed, reproducible), then one warp solves (n <= 64): the factorisation's rows below
// each pivot shared over the lanes, in shared memory up to kSharedLags frames. One thread
// solving from global memory took ~110 us a frame at n = 20 on an H100, a tenth of the
// frame's whole budget at 4096^2.
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

__device__ void entry_position(int e, int& r, int& c) {
  r = 0;
  while ((r + 1) * (r + 2) / 2 <= e) ++r;
  c = e - r * (r + 1) / 2;
}

__global__ void __launch_bounds__(kWhitenBlock)
    solve_kernel(WhitenDeviceState s, WhitenFramePlan plan) {
  __shared__ int blocks_found[kWhitenExcludedBlocks];
  __shared__ int blocks_count;
  __shared__ unsigned long long excluded_total;
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
  if (solving) {
    const int cap = s.capacity;
    for (int i = threadIdx.x; i < n * n; i += blockDim.x) {
      const int r = i / n, c = i - r * n;
      system[i] = s.gram[plan.fit_slots[r] * cap + plan.fit_slots[c]];
    }
    if (plan.past) {
      for (int k = threadIdx.x; k < n; k += blockDim.x)
        rhs[k] = s.gram[plan.target_slot * cap + plan.fit_slots[k]];
    } else {
      const int warp = threadIdx.x >> 5;
      for (int k = warp; k < n; k += blockDim.x / 32) {
        const double v = warp_sum_partials(s.dot_partials, kWhitenPixelBlocks, kWhitenMaxLags, k);
        if ((threadIdx.x & 31) == 0) rhs[k] = v;
      }
    }
    // The blocks that found excluded pixels, listed in block order: all threads read the
    // counts (one at a time they cost an L2 round trip each), warp votes place them.
    __shared__ int warp_found[kWhitenBlock / 32];
    if (threadIdx.x == 0) {
      blocks_count = 0;
      excluded_total = 0;
    }
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int first = 0; first < kWhitenExcludedBlocks; first += blockDim.x) {
      const int b = first + static_cast<int>(threadIdx.x);
      const unsigned count = b < kWhitenExcludedBlocks ? s.excluded_counts[b] : 0u;
      const unsigned votes = __ballot_sync(0xffffffffu, count != 0);
      if (lane == 0) warp_found[warp] = __popc(votes);
      if (count != 0) atomicAdd(&excluded_total, static_cast<unsigned long long>(count));
      __syncthreads();
      int before = blocks_count, added = 0;
      for (int v = 0; v < kWhitenBlock / 32; ++v) {
        if (v < warp) before += warp_found[v];
        added += warp_found[v];
      }
      if (count != 0) blocks_found[before + __popc(votes & ((1u << lane) - 1u))] = b;
      __syncthreads();
      if (threadIdx.x == 0) blocks_count += added;
      __syncthreads();
    }
    const int triangle = n * (n + 1) / 2;
    for (int e = threadIdx.x; e < triangle + n; e += blockDim.x) {
      double sum = 0.0;
      for (int i = 0; i < blocks_count; ++i)
        sum +=
            s.excluded_partials[static_cast<std::size_t>(blocks_found[i]) * kWhitenMaxEntries + e];
      if (e < triangle) {
        int r, c;
        entry_position(e, r, c);
        system[r * n + c] -= sum;
        if (c != r) system[c * n + r] -= sum;
      } else {
        rhs[e - triangle] -= sum;
      }
    }
    __syncthreads();
  }
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
    if (lane == 0) {
      solve.weights.n = w.n;
      solve.weights.gamma = w.gamma;
      solve.weights.sum_sq = w.sum_sq;
      solve.weights.regularised_more = w.regularised_more;
      solve.excluded = excluded_total;
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
