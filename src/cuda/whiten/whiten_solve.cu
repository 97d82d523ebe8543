// Whitening, fit: the normal equations assembled and solved on the device, so a frame needs
// no host round trip: R from the Gram matrix, r from this frame's partial dots (current) or
// the Gram matrix (past), less the excluded pixels' products, then (R + gamma I) a = r by the
// shared Cholesky code (weights.hpp), in double. Also begins the frame's WhitenStats.
//
// Schedule: one block. Its threads add the partial sums (each entry over the blocks in block
// order: fixed, reproducible), then one thread solves: n <= 64, a few microseconds, far less
// than a launch's worth of parallel work would save.
#include <cuda_runtime.h>

#include <cmath>

#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"
#include "pipeline/whiten/weights.hpp"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

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
  const int n = plan.n;
  const bool solving = n >= 1 && plan.due;
  if (solving) {
    const int cap = s.capacity;
    for (int i = threadIdx.x; i < n * n; i += blockDim.x) {
      const int r = i / n, c = i - r * n;
      s.system[i] = s.gram[plan.fit_slots[r] * cap + plan.fit_slots[c]];
    }
    if (plan.past) {
      for (int k = threadIdx.x; k < n; k += blockDim.x)
        s.rhs[k] = s.gram[plan.target_slot * cap + plan.fit_slots[k]];
    } else {
      const int warp = threadIdx.x >> 5;
      for (int k = warp; k < n; k += blockDim.x / 32) {
        const double v = warp_sum_partials(s.dot_partials, kWhitenPixelBlocks, kWhitenMaxLags, k);
        if ((threadIdx.x & 31) == 0) s.rhs[k] = v;
      }
    }
    if (threadIdx.x == 0) {
      int found = 0;
      unsigned long long total = 0;
      for (int b = 0; b < kWhitenExcludedBlocks; ++b) {
        const unsigned count = s.excluded_counts[b];
        if (count != 0) blocks_found[found++] = b;
        total += count;
      }
      blocks_count = found;
      excluded_total = total;
    }
    __syncthreads();
    const int triangle = n * (n + 1) / 2;
    for (int e = threadIdx.x; e < triangle + n; e += blockDim.x) {
      double sum = 0.0;
      for (int i = 0; i < blocks_count; ++i)
        sum +=
            s.excluded_partials[static_cast<std::size_t>(blocks_found[i]) * kWhitenMaxEntries + e];
      if (e < triangle) {
        int r, c;
        entry_position(e, r, c);
        s.system[r * n + c] -= sum;
        if (c != r) s.system[c * n + r] -= sum;
      } else {
        s.rhs[e - triangle] -= sum;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  if (n == 0) {
    s.solve->weights = WhitenWeights{};
    s.solve->excluded = 0;
  } else if (solving) {
    int identity[kWhitenMaxLags];
    for (int k = 0; k < n; ++k) identity[k] = k;
    s.solve->weights =
        solve_whiten_weights(s.system, n, identity, n, s.rhs, plan.gamma, s.work, s.weights);
    s.solve->excluded = excluded_total;
    for (int k = 0; k < n; ++k) s.weights_f[k] = static_cast<float>(s.weights[k]);
  }
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
