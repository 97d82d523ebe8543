// SPDX-License-Identifier: LGPL-2.1-or-later
// Whitening, shift: resample: the frame's displacement against the shift reference by phase
// correlation, entirely on the device (phase_correlation.cpp is the CPU's): the central
// M x M window despiked (window_despike(): hot pixels replaced by the sky around them), less its
// mean, times a Hann window, cuFFT R2C, the normalised cross-power spectrum with the
// reference's times the Gaussian taper of phase_peak.hpp, cuFFT C2R, the arg-max and the
// shared sub-pixel rule (refine_peak()), the choice between a far peak and the one near the
// previous shift (phase_peak.hpp), then the shift, the reference rule (shift-max) and the
// resampling kernels of the frame, left in WhitenShiftState for align.
//
// Schedules: the mean and the peak are two-stage reductions (kWhitenShiftParts blocks over
// contiguous parts of the window, then the parts in order: reproducible; one block over the
// whole M^2 = 256 K values took ~0.25 ms a frame on an H100); the despike, the window and the
// spectrum product are elementwise grids. Two M x M transforms per frame: plans made at configure,
// bound to the frame's stream here.
#include <cuda_runtime.h>

#include <cmath>

#include "cuda/cufft_library.hpp"
#include "cuda/whiten/whiten.cuh"
#include "cuda/whiten/whiten_device.cuh"
#include "pipeline/whiten/phase_peak.hpp"
#include "pipeline/whiten/resample.hpp"

namespace starsift::cuda {

namespace {

using namespace whiten_detail;

constexpr int kReduceBlock = 1024;
constexpr int kPartBlock = 256;

// The window's offset in the frame: centred, as the CPU correlator takes it.
__device__ __forceinline__ const float* window_origin(const WhitenDeviceState& s) {
  const int x0 = (s.width - s.window) / 2;
  const int y0 = (s.height - s.window) / 2;
  return s.x + static_cast<std::size_t>(y0) * s.width + x0;
}

// The window's samples, despiked, into fft_in (unweighted).
__global__ void despike_kernel(WhitenDeviceState s) {
  const int m = s.window;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m * m) return;
  const int r = i / m, c = i - r * m;
  s.fft_in[i] = window_despike(window_origin(s), s.width, c, r, m);
}

// The window's range of block `part` of the two-stage reductions: contiguous, in order.
__device__ __forceinline__ void part_range(int total, int part, int& begin, int& end) {
  const int per = (total + kWhitenShiftParts - 1) / kWhitenShiftParts;
  begin = part * per < total ? part * per : total;
  end = begin + per < total ? begin + per : total;
}

// The mean of the despiked window's finite samples, stage 1: each block's sum and count.
__global__ void __launch_bounds__(kPartBlock) window_sum_kernel(WhitenDeviceState s) {
  __shared__ double sums[kPartBlock / 32];
  __shared__ long long counts[kPartBlock / 32];
  int begin, end;
  part_range(s.window * s.window, blockIdx.x, begin, end);
  double sum = 0.0;
  long long count = 0;
  for (int i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const float v = s.fft_in[i];
    if (finite_float(v)) {
      sum += v;
      ++count;
    }
  }
  sum = warp_sum(sum);
  for (int offset = 16; offset > 0; offset >>= 1)
    count += __shfl_down_sync(0xffffffffu, count, offset);
  if ((threadIdx.x & 31) == 0) {
    sums[threadIdx.x >> 5] = sum;
    counts[threadIdx.x >> 5] = count;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0.0;
    long long n = 0;
    for (int w = 0; w < kPartBlock / 32; ++w) {
      total += sums[w];
      n += counts[w];
    }
    s.window_sums[blockIdx.x] = total;
    s.window_counts[blockIdx.x] = n;
  }
}

// Stage 2, by every block of the window pass: the blocks' sums added by the first warp, lane
// j taking parts j, j + 32, ... in order, then a fixed shuffle tree (the same additions in
// every block, so they agree; one thread adding all parts in turn made the pass ~20 us), kept
// by block 0 in the shift state.
__device__ float window_mean(const WhitenDeviceState& s) {
  __shared__ float mean;
  if (threadIdx.x < 32) {
    double total = 0.0;
    long long n = 0;
    for (int part = static_cast<int>(threadIdx.x); part < kWhitenShiftParts; part += 32) {
      total += s.window_sums[part];
      n += s.window_counts[part];
    }
    total = warp_sum(total);
    for (int offset = 16; offset > 0; offset >>= 1) n += __shfl_down_sync(0xffffffffu, n, offset);
    if (threadIdx.x == 0) {
      mean = n > 0 ? static_cast<float>(total / n) : 0.0f;
      if (blockIdx.x == 0) s.shift->window_mean = mean;
    }
  }
  __syncthreads();
  return mean;
}

// The despiked window less its mean, times the Hann window, in place.
__global__ void window_kernel(WhitenDeviceState s) {
  const float mean = window_mean(s);
  const int m = s.window;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m * m) return;
  const int r = i / m, c = i - r * m;
  const float v = s.fft_in[i];
  const float centred = finite_float(v) ? v - mean : 0.0f;
  s.fft_in[i] = centred * s.hann[r] * s.hann[c];
}

// frame * conj(reference), normalised, times the taper.
__global__ void cross_kernel(WhitenDeviceState s) {
  const int count = s.window * (s.window / 2 + 1);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const float a = s.spectrum[i].x, b = s.spectrum[i].y;
  const float c = s.reference[i].x, d = s.reference[i].y;
  const float re = a * c + b * d;
  const float im = b * c - a * d;
  const float magnitude = hypotf(re, im);
  const float weight = magnitude > 0.0f ? s.taper[i] / magnitude : 0.0f;
  s.cross[i] = make_float2(re * weight, im * weight);
}

// The first index of the largest value: `j` with value `v` replaces the best so far (`k`,
// `u`), as the CPU's scan from the first sample decides.
__device__ __forceinline__ bool better_peak(float v, int j, float u, int k) {
  return j >= 0 && (k < 0 || v > u || (v == u && j < k));
}

// The correlation peak, stage 1: each block's best value and its first index.
__global__ void __launch_bounds__(kPartBlock) peak_part_kernel(WhitenDeviceState s) {
  __shared__ float values[kPartBlock];
  __shared__ int indices[kPartBlock];
  int begin, end;
  part_range(s.window * s.window, blockIdx.x, begin, end);
  const float* c = s.correlation;
  float best = -INFINITY;
  int index = -1;
  for (int i = begin + threadIdx.x; i < end; i += blockDim.x) {
    if (index < 0 || c[i] > best) {
      best = c[i];
      index = i;
    }
  }
  values[threadIdx.x] = best;
  indices[threadIdx.x] = index;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half >>= 1) {
    if (threadIdx.x < half && better_peak(values[threadIdx.x + half], indices[threadIdx.x + half],
                                          values[threadIdx.x], indices[threadIdx.x])) {
      values[threadIdx.x] = values[threadIdx.x + half];
      indices[threadIdx.x] = indices[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    s.peak_values[blockIdx.x] = values[0];
    s.peak_indices[blockIdx.x] = indices[0];
  }
}

// The peak of the correlation surface (the first index of the largest value, as the CPU
// scan finds it), refined, and the frame's shift and resampling kernels.
__global__ void __launch_bounds__(kReduceBlock)
    peak_kernel(WhitenDeviceState s, WhitenFramePlan plan, bool first) {
  __shared__ float best_values[kReduceBlock];
  __shared__ int best_indices[kReduceBlock];
  WhitenShiftState& st = *s.shift;
  const int m = s.window;
  if (!first) {
    // Stage 2: the blocks' peaks.
    const bool mine = threadIdx.x < kWhitenShiftParts;
    best_values[threadIdx.x] = mine ? s.peak_values[threadIdx.x] : -INFINITY;
    best_indices[threadIdx.x] = mine ? s.peak_indices[threadIdx.x] : -1;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half >>= 1) {
      if (threadIdx.x < half &&
          better_peak(best_values[threadIdx.x + half], best_indices[threadIdx.x + half],
                      best_values[threadIdx.x], best_indices[threadIdx.x])) {
        best_values[threadIdx.x] = best_values[threadIdx.x + half];
        best_indices[threadIdx.x] = best_indices[threadIdx.x + half];
      }
      __syncthreads();
    }
  }
  if (threadIdx.x != 0) return;
  double sx = 0.0, sy = 0.0;
  int rejected = 0;
  if (first) {
    st.reference_x = st.reference_y = 0.0;
    st.peak = 1.0;
    st.adopt = 1;
    st.candidate = 0;
    st.candidate_x = st.candidate_y = 0.0;
  } else {
    const float* c = s.correlation;
    // The surface at a signed position (periodic), as PhaseCorrelator reads it.
    auto at = [&](int x, int y) {
      return c[static_cast<std::size_t>((y % m + m) % m) * m + (x % m + m) % m];
    };
    const int best = best_indices[0] < 0 ? 0 : best_indices[0];
    const int iy = best / m, ix = best - iy * m;
    const int ox = ix > m / 2 ? ix - m : ix;
    const int oy = iy > m / 2 ? iy - m : iy;
    double peak = at(ox, oy) / s.peak_scale;
    double dx = ox + refine_peak(at(ox - 1, oy), at(ox, oy), at(ox + 1, oy));
    double dy = oy + refine_peak(at(ox, oy - 1), at(ox, oy), at(ox, oy + 1));
    // The previous frame's displacement against the current reference: a far peak must
    // stand out from the surface near it, or repeat the previous frame's far peak.
    const double px = st.shift_x - st.reference_x;
    const double py = st.shift_y - st.reference_y;
    int candidate = 0;
    double far_x = 0.0, far_y = 0.0;
    if (shift_peak_far(ox, oy, px, py)) {
      int nx = 0, ny = 0;
      const bool near = shift_near_peak(at, px, py, nx, ny);
      const double near_peak = near ? at(nx, ny) / s.peak_scale : 0.0;
      far_x = st.reference_x + dx;
      far_y = st.reference_y + dy;
      const bool confirmed =
          shift_far_peak_confirmed(st.candidate != 0, far_x, far_y, st.candidate_x, st.candidate_y);
      if (near && !shift_far_peak_taken(peak, near_peak, confirmed)) {
        candidate = 1;
        rejected = 1;
        peak = near_peak;
        dx = nx + refine_peak(at(nx - 1, ny), at(nx, ny), at(nx + 1, ny));
        dy = ny + refine_peak(at(nx, ny - 1), at(nx, ny), at(nx, ny + 1));
      }
    }
    st.candidate = candidate;
    st.candidate_x = far_x;
    st.candidate_y = far_y;
    sx = st.reference_x + dx;
    sy = st.reference_y + dy;
    st.peak = peak;
    st.adopt = hypot(dx, dy) > plan.shift_max;
    if (st.adopt) {
      // The field has moved far from the reference: this frame becomes it, and its shift the
      // reference's offset, so later shifts stay on the first frame's grid.
      st.reference_x = sx;
      st.reference_y = sy;
    }
  }
  st.rejected = rejected;
  st.shift_x = sx;
  st.shift_y = sy;
  st.to_grid = make_shift_kernel(sx, sy);
  st.to_camera = make_shift_kernel(-sx, -sy);
  // Read by no later kernel of this frame: the stats record's own field (the solve kernel
  // writes the others).
  s.stats->shift_rejected = rejected != 0;
}

// The frame's spectrum becomes the reference's when the peak kernel said so.
__global__ void adopt_kernel(WhitenDeviceState s) {
  if (s.shift->adopt == 0) return;
  const int count = s.window * (s.window / 2 + 1);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
    s.reference[i] = s.spectrum[i];
}

cudaError_t fft_status(cufftResult result) {
  // cuFFT reports its own codes; a failed transform is reported as a failed launch.
  return result == CUFFT_SUCCESS ? cudaSuccess : cudaErrorLaunchFailure;
}

}  // namespace

cudaError_t launch_whiten_shift(const WhitenDeviceState& s, const WhitenFramePlan& plan,
                                cudaStream_t stream) {
  const int m = s.window;
  const int reals = m * m;
  const int complexes = m * (m / 2 + 1);
  constexpr int kBlock = 256;
  const bool first = plan.frame == 0;
  despike_kernel<<<(reals + kBlock - 1) / kBlock, kBlock, 0, stream>>>(s);
  STARSIFT_CUDA_TRY(cudaPeekAtLastError());
  window_sum_kernel<<<kWhitenShiftParts, kPartBlock, 0, stream>>>(s);
  STARSIFT_CUDA_TRY(cudaPeekAtLastError());
  window_kernel<<<(reals + kBlock - 1) / kBlock, kBlock, 0, stream>>>(s);
  STARSIFT_CUDA_TRY(cudaPeekAtLastError());
  // The plans were made from the loaded library (WhitenDeviceBuffers::allocate).
  const CufftLibrary& fft = cufft();
  STARSIFT_CUDA_TRY(fft_status(fft.set_stream(s.fft_forward, stream)));
  STARSIFT_CUDA_TRY(fft_status(
      fft.exec_r2c(s.fft_forward, s.fft_in, reinterpret_cast<cufftComplex*>(s.spectrum))));
  if (!first) {
    cross_kernel<<<(complexes + kBlock - 1) / kBlock, kBlock, 0, stream>>>(s);
    STARSIFT_CUDA_TRY(cudaPeekAtLastError());
    STARSIFT_CUDA_TRY(fft_status(fft.set_stream(s.fft_inverse, stream)));
    STARSIFT_CUDA_TRY(fft_status(
        fft.exec_c2r(s.fft_inverse, reinterpret_cast<cufftComplex*>(s.cross), s.correlation)));
    peak_part_kernel<<<kWhitenShiftParts, kPartBlock, 0, stream>>>(s);
    STARSIFT_CUDA_TRY(cudaPeekAtLastError());
  }
  peak_kernel<<<1, kReduceBlock, 0, stream>>>(s, plan, first);
  STARSIFT_CUDA_TRY(cudaPeekAtLastError());
  adopt_kernel<<<(complexes + kBlock - 1) / kBlock, kBlock, 0, stream>>>(s);
  return cudaPeekAtLastError();
}

}  // namespace starsift::cuda
