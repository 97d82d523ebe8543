// SPDX-License-Identifier: LGPL-2.1-or-later
// Device functions shared by the whitening kernels (whiten_*.cu only): the fixed-order block
// reduction of double sums, the invalid-mask bookkeeping, the per-camera-
// pixel rules. Every kernel is compiled with -fmad=false (src/cuda/CMakeLists.txt) so that
// float arithmetic rounds each operation as the CPU reference does: the prediction, the
// residual and the noise update are then the same numbers on both backends.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "cuda/common/format_traits.cuh"
#include "cuda/common/pixel_reader.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_tuning.hpp"
#include "pipeline/whiten/pixel_rules.hpp"

namespace starsift::cuda::whiten_detail {

// acc + t * h for the Gram sums, as one fused multiply-add: the product of two floats is
// exact in double, so this is the reference's multiply then add, in one instruction.
__device__ __forceinline__ double gram_add(double acc, double t, double h) {
  return __fma_rn(t, h, acc);
}

// Where history slot `slot`'s plane starts (float or __half samples).
__device__ __forceinline__ const void* plane_of(const WhitenDeviceState& s, int slot) {
  const std::size_t bytes = s.half_history ? sizeof(__half) : sizeof(float);
  return static_cast<const char*>(s.history) +
         static_cast<std::size_t>(slot) * s.slot_stride * bytes;
}
__device__ __forceinline__ void* plane_of(const WhitenDeviceState& s, int slot, int) {
  return const_cast<void*>(plane_of(s, slot));
}

// Sample q of a history plane as the float it stands for: Half (history-format: half) fixed at
// compile time in the passes that read every lag, at run time elsewhere.
template <bool Half>
__device__ __forceinline__ float history_sample(const void* plane, std::size_t q, float inv_scale) {
  if constexpr (Half) {
    return __half2float(__ldg(static_cast<const __half*>(plane) + q)) * inv_scale;
  } else {
    return __ldg(static_cast<const float*>(plane) + q);
  }
}
__device__ __forceinline__ float history_sample(const WhitenDeviceState& s, const void* plane,
                                                std::size_t q) {
  return s.half_history ? history_sample<true>(plane, q, s.history_inv_scale)
                        : history_sample<false>(plane, q, 1.0f);
}

// The value a stored sample keeps (half_history_value(), pixel_rules.hpp), and its store.
template <bool Half>
__device__ __forceinline__ float history_value(float v, float scale) {
  if constexpr (Half) {
    return half_history_value(v, scale);
  } else {
    return v;
  }
}
// `v` already history_value(): exact in half.
template <bool Half>
__device__ __forceinline__ void store_history(void* plane, std::size_t q, float v, float scale) {
  if constexpr (Half) {
    static_cast<__half*>(plane)[q] = __float2half_rn(v * scale);
  } else {
    static_cast<float*>(plane)[q] = v;
  }
}

// The first n weights, as the prediction uses them, into `a` (shared memory). Every thread of
// the block calls it.
__device__ __forceinline__ void load_weights(const WhitenDeviceState& s, int n, float* a) {
  for (int k = threadIdx.x; k < n; k += blockDim.x) a[k] = s.weights_f[k];
  __syncthreads();
}

// The planes of `count` history slots (slots[k], lag order) into `planes` (shared memory),
// so the per-pixel loops index a lag's plane with one shared load instead of working out
// slot * plane for every pixel and lag. Every thread of the block calls it.
__device__ __forceinline__ void load_lag_planes(const WhitenDeviceState& s, const int* slots,
                                                int count, const void** planes) {
  for (int k = threadIdx.x; k < count; k += blockDim.x) planes[k] = plane_of(s, slots[k]);
  __syncthreads();
}

__device__ __forceinline__ bool fit_row(int y, int subsample) {
  return y % subsample == 0;
}

// Whether pixel p lies on a fit row; without subsampling (the default) every pixel does and
// the row is not worked out.
__device__ __forceinline__ bool fit_pixel(const WhitenDeviceState& s, const WhitenFramePlan& plan,
                                          std::size_t p) {
  return plan.fit_subsample == 1 ||
         fit_row(static_cast<int>(static_cast<unsigned>(p) / static_cast<unsigned>(s.width)),
                 plan.fit_subsample);
}

__device__ __forceinline__ double warp_sum(double v) {
  // A fixed tree: the same additions in the same order every run.
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// out[k] = the block's sum of acc[k] over its threads, k < count (count <= L), in a fixed
// order: a shuffle tree per warp, then the warps in order. kWhitenBlock threads.
template <int L>
__device__ void block_sum_store(const double (&acc)[L], int count, double* out) {
  constexpr int kWarps = kWhitenBlock / 32;
  __shared__ double warp_sums[kWarps][L];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
#pragma unroll
  for (int k = 0; k < L; ++k) {
    if (k < count) {
      const double v = warp_sum(acc[k]);
      if (lane == 0) warp_sums[warp][k] = v;
    }
  }
  __syncthreads();
  for (int k = threadIdx.x; k < count; k += blockDim.x) {
    double sum = 0.0;
    for (int w = 0; w < kWarps; ++w) sum += warp_sums[w][k];
    out[k] = sum;
  }
  __syncthreads();
}

// The block's part of the new Gram row: acc[0..count) (its products with lags 1..count) then
// `self` (its own square), one row of kWhitenMaxLags partials per block in `partials`.
template <int L>
__device__ void store_gram_row(const double (&acc)[L], int count, double self, double* partials) {
  double* out_row = partials + static_cast<std::size_t>(blockIdx.x) * kWhitenMaxLags;
  block_sum_store(acc, count, out_row);
  double one[1] = {self};
  block_sum_store(one, 1, out_row + count);
}

// Entry e of a fit's normal equations, the lower triangle of R row by row: its row r and
// column c (c <= r). The excluded-pixel pass and the assembly number the entries alike.
__device__ __forceinline__ void entry_position(int e, int& r, int& c) {
  r = 0;
  while ((r + 1) * (r + 2) / 2 <= e) ++r;
  c = e - r * (r + 1) / 2;
}

// sum over blocks 0..Blocks-1 of partials[b * stride + index], in a fixed order (lane l adds
// blocks l, l + 32, ..., then a fixed shuffle tree), by one warp; every lane gets the total.
// Blocks fixed at compile time, so each lane's loads are issued together: each sum is a chain
// of L2 round trips otherwise.
template <int Blocks>
__device__ __forceinline__ double warp_sum_partials(const double* partials, int stride, int index) {
  const int lane = threadIdx.x & 31;
  double sum = 0.0;
#pragma unroll
  for (int b = lane; b < Blocks; b += 32)
    sum += partials[static_cast<std::size_t>(b) * stride + index];
  sum = warp_sum(sum);
  return __shfl_sync(0xffffffffu, sum, 0);
}

// The stored frame's invalid mask enters its slot and the window's count per pixel follows:
// the evicted frame's bit leaves, the new one joins; the count is touched only where they
// differ. All 32 lanes of a warp call this for one aligned word (`valid`: the lane's pixel
// exists).
__device__ __forceinline__ void update_masks(const WhitenDeviceState& s,
                                             const WhitenFramePlan& plan, std::size_t p,
                                             bool valid) {
  const std::size_t word = p >> 5;
  const unsigned bit = 1u << (p & 31);
  const bool word_exists = word < static_cast<std::size_t>(s.words);
  const std::uint32_t now = word_exists ? s.frame_bits[word] : 0u;
  std::uint32_t* slot = s.slot_bits + static_cast<std::size_t>(plan.new_slot) * s.words;
  const std::uint32_t before = word_exists && plan.evicting ? slot[word] : 0u;
  if (valid) {
    const int change = ((now & bit) != 0) - ((before & bit) != 0);
    if (change != 0) s.window_count[p] = static_cast<unsigned char>(s.window_count[p] + change);
  }
  __syncwarp();  // every lane has read the old word before it is replaced
  if ((threadIdx.x & 31) == 0 && word_exists) slot[word] = now;
}

// Counts the warp's rejections into the frame's total (integers: order does not matter).
__device__ __forceinline__ void count_rejections(const WhitenDeviceState& s, bool rejected) {
  const unsigned votes = __ballot_sync(0xffffffffu, rejected);
  if ((threadIdx.x & 31) == 0 && votes != 0) {
    atomicAdd(s.rejected_count, static_cast<unsigned long long>(__popc(votes)));
  }
}

// Whether camera pixel p's input sample was despiked: its value in x is its neighbours' level,
// for the shift estimate, the alignment and the history, but it is no measurement.
__device__ __forceinline__ bool despiked_at(const WhitenDeviceState& s, std::size_t p) {
  return ((__ldg(s.spike_bits + (p >> 5)) >> (p & 31)) & 1u) != 0;
}

// The outlier test and noise update of camera pixel p (update_pixel_noise()), sigma^2 and the
// run written back only where they change (rejected and unusable pixels keep theirs).
// Returns whether the pixel was rejected.
__device__ __forceinline__ bool update_noise_at(const WhitenDeviceState& s,
                                                const WhitenFramePlan& plan, std::size_t p,
                                                float rho, bool usable, bool object = false) {
  float var = s.var[p];
  unsigned char run = s.run[p];
  const float var_before = var;
  const unsigned char run_before = run;
  const bool rejected = update_pixel_noise(rho, usable, plan.noise, var, run, object);
  if (!(var == var_before)) s.var[p] = var;
  if (run != run_before) s.run[p] = run;
  return rejected;
}

// Whether a warming-up frame writes the zero level (warmup: zeros; passthrough, in the outputs
// that do not pass the input through).
__device__ __forceinline__ bool blank_output(const WhitenFramePlan& plan) {
  return plan.warm && plan.warmup != WhitenWarmup::Partial;
}

// The output sample of a camera pixel from its residual, sigma_{t-1}^2 and the registration's
// variance, for every output but the input passed through (residual and float while warming
// up with passthrough: camera_pixel()). `integer_out`: a GRAY8 or GRAY16 output (rounded and
// clamped); `blank`: warming up without a fit, the output's zero level.
__device__ __forceinline__ float camera_output(const WhitenFramePlan& plan, float rho,
                                               float var_before, float registration,
                                               bool integer_out, bool blank) {
  switch (plan.output) {
    case WhitenOutput::Residual: {
      const float r = blank ? 0.0f : rho;
      return integer_out ? integer_output(r, plan.offset, plan.gain, plan.saturation)
                         : plan.offset + plan.gain * r;
    }
    case WhitenOutput::Significance: {
      const float snr =
          blank ? 0.0f
                : pixel_significance(rho, significance_sigma(var_before, registration, plan.noise),
                                     plan.noise);
      return integer_out ? integer_output(snr, plan.offset, plan.gain, plan.saturation)
                         : plan.offset + plan.gain * snr;
    }
    case WhitenOutput::Float:
      return blank ? 0.0f : rho;
    case WhitenOutput::Snr:
      // sigma (a square root) worked out only for the outputs that write it.
      return blank ? 0.0f
                   : pixel_significance(
                         rho, significance_sigma(var_before, registration, plan.noise), plan.noise);
    case WhitenOutput::Sigma:
      return blank ? 0.0f : pixel_sigma(var_before, plan.noise);
  }
  return 0.0f;
}

// The residual, noise update, outlier test and output of camera pixel (x, y) = p, given the
// input `value` (x), whether it was despiked, and the prediction there (reference.cpp,
// residual_and_output()). Returns whether the pixel was rejected.
// With `residuals` (reject: objects, whose decision reads the neighbours' residuals) the
// residual is written there instead, and sigma, the run and the outlier test are left to the
// objects pass (whiten_objects.cu): the pixel is not rejected here.
__device__ __forceinline__ bool camera_pixel(const WhitenDeviceState& s,
                                             const WhitenFramePlan& plan, std::size_t p, int x,
                                             int y, float value, bool despiked, float prediction,
                                             WhitenFrameView in, WhitenFrameView out,
                                             float* residuals = nullptr,
                                             float registration = 0.0f) {
  const bool usable = measured(value, despiked, plan.saturation);
  const float rho = pixel_residual(value, prediction, plan.n >= 1, usable);
  const float var_before = s.var[p];
  bool rejected = false;
  if (residuals != nullptr) {
    residuals[p] = rho;
  } else {
    rejected = update_noise_at(s, plan, p, rho, usable);
  }
  const bool passthrough = plan.warm && plan.warmup == WhitenWarmup::Passthrough;
  if (passthrough && plan.output == WhitenOutput::Residual) {
    copy_sample(in.data, in.stride, out.data, out.stride, x, y, in.format);
    return rejected;
  }
  // The input as it came, despiked samples included.
  const float v = passthrough && plan.output == WhitenOutput::Float
                      ? read_pixel(in.data, in.stride, x, y, in.format)
                      : camera_output(plan, rho, var_before, registration,
                                      out.format != PixelFormat::Gray32F, blank_output(plan));
  write_sample(out.data, out.stride, x, y, out.format, v);
  return rejected;
}

// p / w for 0 <= p < 2^31 without an integer division (some twenty instructions): the quotient
// in double is off by at most one, then corrected.
__device__ __forceinline__ int row_of(std::size_t p, int w, double inv_w) {
  int y = static_cast<int>(static_cast<double>(p) * inv_w);
  const long long rest = static_cast<long long>(p) - static_cast<long long>(y) * w;
  y += (rest >= w) - (rest < 0);
  return y;
}

// Iterates the pixels of a plane in block-sized tiles, grid-stride: every thread of a block
// runs the same number of iterations (block-wide barriers and warp votes stay legal), and a
// warp's 32 pixels are 32 consecutive indices starting at a multiple of 32 (one mask word).
template <class Body>
__device__ __forceinline__ void for_each_tile(std::size_t total, Body body) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t start = static_cast<std::size_t>(blockIdx.x) * blockDim.x; start < total;
       start += step) {
    const std::size_t p = start + threadIdx.x;
    body(p, p < total);
  }
}

// Whether the frame's passes that read every lag may take the lag count as a compile-time
// constant: a full history in steady state (n == kept == lags_read), short enough for
// registers.
inline bool full_history(const WhitenFramePlan& plan) {
  return plan.n >= 1 && plan.n == plan.kept && plan.n <= kWhitenRegisterLags;
}

// Calls f(std::integral_constant<int, n>{}) for 1 <= n <= kWhitenRegisterLags: the launchers
// of the full-history kernels, instantiated for every such lag count.
template <int L = 1, class F>
void with_lag_count(int n, F&& f) {
  if constexpr (L <= kWhitenRegisterLags) {
    if (n == L) {
      f(std::integral_constant<int, L>{});
    } else {
      with_lag_count<L + 1>(n, f);
    }
  }
}

}  // namespace starsift::cuda::whiten_detail

namespace starsift::cuda {

// Launchers of the single kernels, used by launch_whiten_fit() and launch_whiten_apply().
cudaError_t launch_whiten_current_dots(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                       cudaStream_t stream);
cudaError_t launch_whiten_excluded(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                   cudaStream_t stream);
cudaError_t launch_whiten_solve(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                cudaStream_t stream);
cudaError_t launch_whiten_predict(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                  cudaStream_t stream);
cudaError_t launch_whiten_store(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                cudaStream_t stream);

cudaError_t launch_whiten_camera(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                 WhitenFrameView in, WhitenFrameView out, cudaStream_t stream);
cudaError_t launch_whiten_objects(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                  cudaStream_t stream);

}  // namespace starsift::cuda
