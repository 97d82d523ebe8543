// SPDX-License-Identifier: LGPL-2.1-or-later
// CUDA temporal whitening: the launchers of one frame's work (docs/whitening.md gives the
// algorithm; src/pipeline/whiten/reference.hpp is its definition).
//
// Limitations
// | what        | supported                                                              |
// |-------------|------------------------------------------------------------------------|
// | formats     | GRAY8, GRAY16_LE (any bit depth), GRAY32F in; outputs as output_shape() |
// | history     | 1..64 frames (WhitenParams::kMaxHistory), float or half, aligned grid   |
// | image size  | width * height < 2^31; strides free (device views)                      |
// | in-place    | no: `in` and `out` must not overlap                                     |
// | memory      | device memory: the frame views and every buffer of WhitenDeviceState    |
//
// Everything a frame needs that depends on the data (the shift, the weights, the statistics)
// stays in device memory between the kernels; everything that depends only on how many frames
// came before (how many history frames are used, which slots, whether the weights are due)
// is worked out on the host and passed by value (WhitenFramePlan). So a frame needs no host
// round trip. The launchers allocate nothing, never synchronise, and return the first
// failing launch's status.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "pipeline/image.hpp"
#include "pipeline/whiten/params.hpp"
#include "pipeline/whiten/pixel_rules.hpp"
#include "pipeline/whiten/resample.hpp"
#include "pipeline/whiten/stats.hpp"
#include "pipeline/whiten/weights.hpp"

namespace starsift::cuda {

inline constexpr int kWhitenMaxLags = WhitenParams::kMaxHistory + 1;
// Blocks of the first stage of the shift estimate's reductions (window mean, peak).
inline constexpr int kWhitenShiftParts = 256;
// Entries of one fit's normal equations: the lower triangle of R and r.
inline constexpr int kWhitenMaxEntries =
    WhitenParams::kMaxHistory * (WhitenParams::kMaxHistory + 1) / 2 + WhitenParams::kMaxHistory;

// The shift of the current frame and the reference's, kept on the device.
struct WhitenShiftState {
  ShiftKernel to_grid;    // camera -> aligned grid
  ShiftKernel to_camera;  // aligned -> camera grid
  double shift_x = 0.0, shift_y = 0.0;
  double reference_x = 0.0, reference_y = 0.0;
  double peak = 0.0;
  float window_mean = 0.0f;
  int adopt = 0;     // this frame becomes the reference
  int rejected = 0;  // the highest peak was far and did not stand out (phase_peak.hpp)
  // The far peak this frame set aside (its shift on the first frame's grid), taken if the
  // next frame finds it again.
  int candidate = 0;
  double candidate_x = 0.0, candidate_y = 0.0;
};

// What the last solve left (the weights are reused until the next one).
struct WhitenSolveState {
  WhitenWeights weights;
  std::uint64_t excluded = 0;
};

// Device buffers of one stage (owned by WhitenDeviceBuffers, seen here as plain pointers).
struct WhitenDeviceState {
  int width = 0, height = 0;
  std::size_t plane = 0;                  // pixels per plane
  int words = 0;                          // 32-bit mask words per plane
  int capacity = 0;                       // history slots, N + 1
  void* history = nullptr;                // capacity planes, aligned grid: float, or half
  bool half_history = false;              // history-format: half (__half samples)
  std::size_t slot_stride = 0;            // samples from one history slot to the next: plane
                                          // rounded up to 64 (aligned pairs of half samples)
  float history_scale = 1.0f;             // half: a sample holds value * history_scale
  float history_inv_scale = 1.0f;         // 1 / history_scale (a power of two)
  std::uint32_t* slot_bits = nullptr;     // capacity invalid masks, one bit per pixel
  std::uint32_t* frame_bits = nullptr;    // this frame's invalid mask (aligned grid)
  std::uint32_t* spike_bits = nullptr;    // this frame's despiked samples (camera grid)
  unsigned char* window_count = nullptr;  // stored frames invalid at each pixel
  float* x = nullptr;                     // the input as float (camera grid)
  float* y = nullptr;                     // the aligned frame (resample)
  float* b = nullptr;                     // the prediction (aligned grid; resample)
  unsigned char* rejected = nullptr;      // this frame's outlier test (camera grid; resample)
  float* var = nullptr;                   // sigma^2 (camera grid)
  unsigned char* run = nullptr;           // consecutive rejections (camera grid)
  double* gram = nullptr;                 // capacity x capacity
  double* dot_partials = nullptr;         // pixel_blocks x kWhitenMaxLags: r of this frame
  double* gram_partials = nullptr;        // pixel_blocks x kWhitenMaxLags: the new Gram row
  double* store_partials = nullptr;       // pixel_blocks x kWhitenMaxLags: resample, the
                                          // Gram row's corrections where the stored frame is
                                          // not the aligned frame
  double* excluded_partials = nullptr;    // kWhitenMaxEntries x excluded_blocks: entry-major,
                                          // a warp reads one entry's blocks coalesced
  unsigned* excluded_counts = nullptr;    // excluded_blocks: excluded pixels found by each
  double* system = nullptr;               // kWhitenMaxLags^2: R of one fit (n x n), excluded
                                          // pixels left out
  double* work = nullptr;                 // kWhitenMaxLags^2: the factor
  double* rhs = nullptr;                  // kWhitenMaxLags: r of one fit, the same
  double* weights = nullptr;              // kWhitenMaxLags: a_k, lag k + 1
  float* weights_f = nullptr;             // the same as float, as the prediction uses them
  WhitenSolveState* solve = nullptr;
  WhitenStats* stats = nullptr;  // this frame's numbers
  unsigned long long* rejected_count = nullptr;
  // This frame's despiked input samples: the load kernel counts, the finish kernel reports
  // and clears.
  unsigned long long* despiked_count = nullptr;
  WhitenShiftState* shift = nullptr;
  // Phase correlation (resample): an M x M window, its M x (M/2 + 1) spectrum.
  int window = 0;
  float* fft_in = nullptr;
  float2* spectrum = nullptr;
  float2* reference = nullptr;
  float2* cross = nullptr;
  float* correlation = nullptr;
  // The shift's two reductions over the window, per block of the first stage
  // (kWhitenShiftParts blocks): the mean's sums and counts, the peak's values and indices.
  double* window_sums = nullptr;
  long long* window_counts = nullptr;
  float* peak_values = nullptr;
  int* peak_indices = nullptr;
  float* hann = nullptr;   // M weights
  float* taper = nullptr;  // M x (M/2 + 1) weights
  double peak_scale = 1.0;
  int fft_forward = 0;  // cufftHandle: R2C, M x M
  int fft_inverse = 0;  // cufftHandle: C2R, M x M
  // reject: objects (shift: resample): this frame's residuals and the box test's results
  // (camera grid), for the objects pass, which decides after every residual is known.
  float* rho = nullptr;
  unsigned char* object_box = nullptr;
};

// Everything about a frame that follows from the frames before it, not from their pixels.
struct WhitenFramePlan {
  std::uint64_t frame = 0;  // since the history started
  bool resample = false;
  bool past = false;
  int n = 0;              // history frames in the prediction (lags 1..n)
  bool due = false;       // solve for new weights (n >= 1)
  int kept = 0;           // frames the stored frame's Gram row pairs with (lags 1..kept)
  int lags_read = 0;      // max(n, kept)
  int new_slot = 0;       // where this frame is stored
  bool evicting = false;  // new_slot holds the oldest frame, which leaves now
  // resample: the new Gram row's products of the aligned frame are the fit's dot products
  // (fit: current, solved now, n == kept); otherwise the predict pass adds them up.
  bool row_from_dots = false;
  int lag_slots[kWhitenMaxLags] = {};  // slot of lag k + 1
  int fit_slots[kWhitenMaxLags] = {};  // fit: slot of history frame k (current: lag k + 1,
                                       // past: lag k + 2)
  int target_slot = 0;                 // past: the fitted frame's slot (lag 1)
  double gamma = 0.0;                  // relative regularisation
  double shift_max = 0.0;
  int fit_subsample = 1;
  WhitenNoiseConstants noise;
  bool warm = false;  // n < N
  WhitenWarmup warmup = WhitenWarmup::Partial;
  WhitenOutput output = WhitenOutput::Residual;
  float offset = 0.0f, gain = 1.0f;
  float saturation = 0.0f;  // also the largest integer output sample
  bool despike = true;      // input spikes are no measurement (despike_sample())
};

// A frame in device memory (input or output).
struct WhitenFrameView {
  std::byte* data = nullptr;
  std::ptrdiff_t stride = 0;
  PixelFormat format = PixelFormat::Gray16;
};

// The pieces of one frame, in the order launch_whiten_frame() queues them.
// Forgets the state: sigma, rejection runs, invalid counts, shift and weights.
cudaError_t launch_whiten_reset(const WhitenDeviceState& state, cudaStream_t stream);
// The input as float, its spikes at their neighbours' level, flagged and counted (despike);
// shift: none also its invalid mask.
cudaError_t launch_whiten_load(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                               WhitenFrameView in, cudaStream_t stream);
// shift: resample: phase correlation (cuFFT) and the shift, all on the device.
cudaError_t launch_whiten_shift(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                cudaStream_t stream);
// shift: resample: the aligned frame and its invalid mask.
cudaError_t launch_whiten_align(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                cudaStream_t stream);
// When due: r (fit: current), the excluded pixels' products, and the solve; always: the
// frame's statistics begun.
cudaError_t launch_whiten_fit(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                              cudaStream_t stream);
// Prediction, residual, noise, outliers, output, the stored frame and its Gram row partials.
cudaError_t launch_whiten_apply(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                WhitenFrameView in, WhitenFrameView out, cudaStream_t stream);
// The Gram row into the matrix, the statistics completed.
cudaError_t launch_whiten_finish(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                 cudaStream_t stream);

// All of the above for one frame.
cudaError_t launch_whiten_frame(const WhitenDeviceState& state, const WhitenFramePlan& plan,
                                WhitenFrameView in, WhitenFrameView out, cudaStream_t stream);

}  // namespace starsift::cuda
