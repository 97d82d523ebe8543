// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cuda/whiten/whiten_buffers.hpp"

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/cufft_library.hpp"
#include "cuda/whiten/whiten_tuning.hpp"
#include "pipeline/error.hpp"
#include "pipeline/whiten/phase_peak.hpp"

namespace starsift::cuda {

namespace {

constexpr std::size_t kAlign = 256;

std::size_t round_up(std::size_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

}  // namespace

void WhitenDeviceBuffers::allocate(const WhitenParams& params, const FrameShape& shape) {
  release();
  WhitenDeviceState s;
  s.width = shape.width;
  s.height = shape.height;
  s.plane = static_cast<std::size_t>(shape.width) * shape.height;
  s.words = static_cast<int>((s.plane + 31) / 32);
  s.capacity = params.history + 1;
  s.slot_stride = (s.plane + 63) / 64 * 64;
  const float scale = whiten_history_scale(params, shape);
  s.half_history = scale != 0.0f;
  s.history_scale = s.half_history ? scale : 1.0f;
  s.history_inv_scale = 1.0f / s.history_scale;
  const bool resample = params.shift == WhitenShift::Resample;
  // reject: objects (CUDA: shift: resample only) decides in a pass of its own (whiten_objects.cu).
  const bool objects = resample && params.reject == WhitenReject::Objects;
  s.window = resample ? params.effective_shift_window(shape) : 0;
  const std::size_t plane = s.plane;
  const std::size_t cap = s.capacity;
  const std::size_t m = s.window;
  const std::size_t spectrum = m * (m / 2 + 1);

  // The size table: every buffer, its bytes, where its pointer goes.
  struct Entry {
    std::size_t bytes;
    void** target;
  };
  const std::vector<Entry> table = {
      {cap * s.slot_stride * (s.half_history ? sizeof(std::uint16_t) : sizeof(float)),
       reinterpret_cast<void**>(&s.history)},
      {cap * s.words * sizeof(std::uint32_t), reinterpret_cast<void**>(&s.slot_bits)},
      {s.words * sizeof(std::uint32_t), reinterpret_cast<void**>(&s.frame_bits)},
      {s.words * sizeof(std::uint32_t), reinterpret_cast<void**>(&s.spike_bits)},
      {plane, reinterpret_cast<void**>(&s.window_count)},
      {plane * sizeof(float), reinterpret_cast<void**>(&s.x)},
      {resample ? plane * sizeof(float) : 0, reinterpret_cast<void**>(&s.y)},
      {resample ? plane * sizeof(float) : 0, reinterpret_cast<void**>(&s.b)},
      {resample ? plane : 0, reinterpret_cast<void**>(&s.rejected)},
      {plane * sizeof(float), reinterpret_cast<void**>(&s.var)},
      {plane, reinterpret_cast<void**>(&s.run)},
      {cap * cap * sizeof(double), reinterpret_cast<void**>(&s.gram)},
      {std::size_t{kWhitenPixelBlocks} * kWhitenMaxLags * sizeof(double),
       reinterpret_cast<void**>(&s.dot_partials)},
      {std::size_t{kWhitenPixelBlocks} * kWhitenMaxLags * sizeof(double),
       reinterpret_cast<void**>(&s.gram_partials)},
      {resample ? std::size_t{kWhitenPixelBlocks} * kWhitenMaxLags * sizeof(double) : 0,
       reinterpret_cast<void**>(&s.store_partials)},
      {std::size_t{kWhitenMaxEntries} * kWhitenExcludedBlocks * sizeof(double),
       reinterpret_cast<void**>(&s.excluded_partials)},
      {std::size_t{kWhitenExcludedBlocks} * sizeof(unsigned),
       reinterpret_cast<void**>(&s.excluded_counts)},
      {std::size_t{kWhitenMaxLags} * kWhitenMaxLags * sizeof(double),
       reinterpret_cast<void**>(&s.system)},
      {std::size_t{kWhitenMaxLags} * kWhitenMaxLags * sizeof(double),
       reinterpret_cast<void**>(&s.work)},
      {kWhitenMaxLags * sizeof(double), reinterpret_cast<void**>(&s.rhs)},
      {kWhitenMaxLags * sizeof(double), reinterpret_cast<void**>(&s.weights)},
      {kWhitenMaxLags * sizeof(float), reinterpret_cast<void**>(&s.weights_f)},
      {sizeof(WhitenSolveState), reinterpret_cast<void**>(&s.solve)},
      {sizeof(WhitenStats), reinterpret_cast<void**>(&s.stats)},
      {sizeof(unsigned long long), reinterpret_cast<void**>(&s.rejected_count)},
      {sizeof(unsigned long long), reinterpret_cast<void**>(&s.despiked_count)},
      {sizeof(WhitenShiftState), reinterpret_cast<void**>(&s.shift)},
      {m * m * sizeof(float), reinterpret_cast<void**>(&s.fft_in)},
      {spectrum * sizeof(float2), reinterpret_cast<void**>(&s.spectrum)},
      {spectrum * sizeof(float2), reinterpret_cast<void**>(&s.reference)},
      {spectrum * sizeof(float2), reinterpret_cast<void**>(&s.cross)},
      {m * m * sizeof(float), reinterpret_cast<void**>(&s.correlation)},
      {resample ? kWhitenShiftParts * sizeof(double) : 0, reinterpret_cast<void**>(&s.window_sums)},
      {resample ? kWhitenShiftParts * sizeof(long long) : 0,
       reinterpret_cast<void**>(&s.window_counts)},
      {resample ? kWhitenShiftParts * sizeof(float) : 0, reinterpret_cast<void**>(&s.peak_values)},
      {resample ? kWhitenShiftParts * sizeof(int) : 0, reinterpret_cast<void**>(&s.peak_indices)},
      {m * sizeof(float), reinterpret_cast<void**>(&s.hann)},
      {spectrum * sizeof(float), reinterpret_cast<void**>(&s.taper)},
      {objects ? plane * sizeof(float) : 0, reinterpret_cast<void**>(&s.rho)},
      {objects ? plane : 0, reinterpret_cast<void**>(&s.object_box)},
  };
  std::size_t total = 0;
  for (const Entry& e : table) total += round_up(e.bytes);
  check(cudaMalloc(&memory_, total), "whiten buffers (cudaMalloc)");
  bytes_ = total;
  auto* base = static_cast<std::byte*>(memory_);
  for (const Entry& e : table) {
    *e.target = e.bytes == 0 ? nullptr : base;
    base += round_up(e.bytes);
  }
  state_ = s;
  // Only shift: resample's kernels write shift_rejected: it reads false otherwise.
  check(cudaMemset(s.stats, 0, sizeof(WhitenStats)), "whiten stats (cudaMemset)");
  check(cudaMemset(s.despiked_count, 0, sizeof(unsigned long long)),
        "whiten despike count (cudaMemset)");
  if (!resample) return;

  try {
    // The analysis window's constants, as the CPU correlator computes them.
    std::vector<float> hann(m);
    for (std::size_t i = 0; i < m; ++i) hann[i] = hann_weight(static_cast<int>(i), s.window);
    std::vector<float> taper(spectrum);
    const std::size_t half = m / 2 + 1;
    for (std::size_t ky = 0; ky < m; ++ky)
      for (std::size_t kx = 0; kx < half; ++kx)
        taper[ky * half + kx] = phase_taper(static_cast<int>(kx), static_cast<int>(ky), s.window);
    double scale = 0.0;
    for (std::size_t ky = 0; ky < m; ++ky)
      for (std::size_t kx = 0; kx < m; ++kx)
        scale += phase_taper(static_cast<int>(kx), static_cast<int>(ky), s.window);
    state_.peak_scale = scale;
    check(cudaMemcpy(state_.hann, hann.data(), m * sizeof(float), cudaMemcpyHostToDevice),
          "whiten window (cudaMemcpy)");
    check(cudaMemcpy(state_.taper, taper.data(), spectrum * sizeof(float), cudaMemcpyHostToDevice),
          "whiten taper (cudaMemcpy)");
    const CufftLibrary& fft = cufft();
    cufftHandle forward = 0, inverse = 0;
    if (fft.plan_2d(&forward, s.window, s.window, CUFFT_R2C) != CUFFT_SUCCESS) {
      throw Error("whiten: cuFFT could not plan a " + std::to_string(m) + "x" + std::to_string(m) +
                  " R2C transform");
    }
    if (fft.plan_2d(&inverse, s.window, s.window, CUFFT_C2R) != CUFFT_SUCCESS) {
      fft.destroy(forward);
      throw Error("whiten: cuFFT could not plan a " + std::to_string(m) + "x" + std::to_string(m) +
                  " C2R transform");
    }
    state_.fft_forward = forward;
    state_.fft_inverse = inverse;
    plans_ = true;
  } catch (...) {
    release();
    throw;
  }
}

void WhitenDeviceBuffers::release() noexcept {
  if (plans_) {
    // Plans exist only once cufft() loaded the library.
    cufft().destroy(state_.fft_forward);
    cufft().destroy(state_.fft_inverse);
    plans_ = false;
  }
  if (memory_) cudaFree(memory_);
  memory_ = nullptr;
  bytes_ = 0;
  state_ = WhitenDeviceState{};
}

}  // namespace starsift::cuda
