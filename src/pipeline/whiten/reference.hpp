// SPDX-License-Identifier: LGPL-2.1-or-later
// The CPU reference of temporal whitening: the algorithm as both backends must compute it
// (docs/whitening.md gives the design; the per-pixel rules live in pixel_rules.hpp, the
// resampler in resample.hpp, the solve in weights.hpp, all shared with the CUDA code).
//
// Per frame t, in this order:
//  1. x = the input as float (ADU). despike: a sample that sticks out of its 3 x 3
//     neighbourhood of input samples (despike_sample(), despike.hpp) takes the value
//     despike_sample() gives it (its neighbours' level) and is flagged: no measurement there
//     (residual 0, no noise update).
//     A pixel is invalid where x is saturated (at or above 2^bit_depth - 1) or not finite
//     (shift: resample: where any of its 16 taps is). The mask is stored with the frame.
//  2. shift: resample: the displacement d of x against the reference by phase correlation;
//     s_t = reference offset + d. The first frame is the reference (s = 0); when |d| >
//     shift-max, x becomes the reference and s_t its offset. A highest peak more than 2 px from
//     the previous frame's displacement is taken only when it stands out from the surface
//     near that displacement or the previous frame found it too; otherwise the peak near the
//     previous displacement is d (phase_peak.hpp). y = x resampled onto the first
//     frame's grid, y(q) = x(q + s_t). shift: none: y = x, s_t = 0.
//  3. n = history frames used: current: min(stored, N); past: min(stored - 1, N).
//  4. Weights, when due (every refit-interval frames, and whenever n changed): solve
//     (R + gamma I) a = r, R the Gram matrix of history lags 1..n, gamma = gamma_rel tr(R)/n.
//     Every sum is in double over the rows with row % fit-subsample == 0 and over one common
//     set of pixels: those invalid in the current frame or in any stored frame are left out
//     (their products subtracted from the sums over all pixels), so R stays a Gram matrix
//     (positive semidefinite) and a clipped star pulls on nothing.
//     current: r_k = sum y h_k; past: the target is the stored frame of lag 1 and the history
//     lags 2..n+1, r and R both read from the Gram matrix (the previous frame's pass computed
//     them).
//  5. b = sum_k a_k h_k (aligned grid; float, lags in order). n = 0: b = 0.
//  6. rho = x - b (shift: none) or x - B with B(p) = b(p - s_t) (resample: the residual stays
//     on the camera's grid, the input's own pixels, with only the prediction interpolated).
//     n = 0, or x despiked, saturated or not finite: rho = 0 (pixel_residual()).
//  7. Per camera pixel: update_pixel_noise() (sigma, the outlier test); the output.
//     reject: objects: the output first; then, with every residual of the frame known, the box
//     test per camera pixel (pixel_box_significant(): the 3 x 3 sums of rho and of
//     sigma_{t-1}^2), and a pixel with a significant box in its 3 x 3 neighbourhood is rejected
//     as an outlier is (update_pixel_noise(), `object`).
//  8. Stored frame (aligned): y, or b where the nearest camera pixel was rejected or the
//     sample point lies outside the camera's view (n >= 1), or y is not finite; with
//     history-format: half rounded by half_history_value(); written over the oldest slot with
//     its invalid mask. Its Gram row (dots with the kept frames and itself) from the stored
//     values, over every pixel of the fit rows.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"
#include "pipeline/thread_pool.hpp"
#include "pipeline/whiten/history.hpp"
#include "pipeline/whiten/params.hpp"
#include "pipeline/whiten/phase_correlation.hpp"
#include "pipeline/whiten/pixel_rules.hpp"
#include "pipeline/whiten/resample.hpp"
#include "pipeline/whiten/stats.hpp"
#include "pipeline/whiten/weights.hpp"

namespace starsift {

// A frame's sigma is trusted for the outlier test once it averages this many residuals.
inline constexpr int kWhitenRejectAfterFrames = 4;

// The per-frame rules that follow from how many frames came before (the steps 3, 4 and 7 of
// process()), shared with the CUDA stage, which works them out on the host for each frame.
// The history frames frame t's prediction uses, `stored` frames being kept before it.
int whiten_history_in_use(const WhitenParams& params, int stored) noexcept;
// Whether frame t solves for new weights: it uses some history (n >= 1) and either the
// history in use changed since the weights in force (solved for `last_n` frames; 0: none) or
// `frames_since_fit` frames have passed since they were solved.
bool whiten_weights_due(const WhitenParams& params, int n, int last_n,
                        int frames_since_fit) noexcept;
// The noise and outlier constants of frame t, whose prediction uses n frames, after
// `noise_updates` frames have updated sigma.
// The chi-square degrees of freedom of sigma^2 after `noise_updates` updates of time constant
// `noise_frames` (a plain mean while 1/k > 1/noise_frames, then the exponential average's
// 2 noise-frames - 1 in the limit); 0 before the first update.
double whiten_sigma_dof(std::uint64_t noise_updates, double noise_frames) noexcept;

WhitenNoiseConstants whiten_noise_constants(const WhitenParams& params, std::uint64_t noise_updates,
                                            int n) noexcept;

class WhitenState {
 public:
  // Validates `params` for `shape` (throws Error) and allocates every buffer.
  WhitenState(const WhitenParams& params, const FrameShape& shape);
  ~WhitenState();
  WhitenState(const WhitenState&) = delete;
  WhitenState& operator=(const WhitenState&) = delete;

  const WhitenParams& params() const noexcept { return params_; }
  const FrameShape& shape() const noexcept { return shape_; }
  FrameShape output_shape() const noexcept { return whiten_output_shape(params_, shape_); }

  // True when `params` differs from the current ones only in what applies from the next frame
  // on (gamma, refit-interval, shift-max, shift-noise, reject-sigma, reject-object-sigma, warmup,
  // offset, gain, despike) and can be taken without restarting the history.
  bool can_update(const WhitenParams& params) const noexcept;
  // Takes such parameters (validated; throws Error otherwise).
  void update(const WhitenParams& params);

  // Forgets every frame: the next one starts a new history (and shift reference).
  void reset() noexcept;

  // Whitens one frame: `in` of shape(), `out` of output_shape(), any strides, distinct memory.
  void process(ConstImageView in, ImageView out, ThreadPool& pool);

  const WhitenStats& last_stats() const noexcept { return stats_; }
  // Frames whitened since the history started: the next frame's WhitenStats::frame.
  std::uint64_t frames() const noexcept { return frame_; }
  // The weights of the last frame, a_k for history lag k + 1 (n entries).
  const std::vector<double>& weights() const noexcept { return weights_; }
  // The per-pixel noise variance (camera grid) after the last frame, GRAY32F.
  ConstImageView noise_variance() const noexcept;
  // The history (aligned grid): stored frames and their Gram matrix.
  const WhitenHistory& history() const noexcept { return history_; }

 private:
  struct Buffers;

  void load_input(ConstImageView in, ThreadPool& pool);
  void estimate_shift();
  void align(ThreadPool& pool);
  void fit(int n, ThreadPool& pool);
  void current_products(int n, ThreadPool& pool);
  void leave_out_excluded(int n);
  const float* aligned_plane() const noexcept;
  void predict(int n, ThreadPool& pool);
  void residual_and_output(int n, ConstImageView in, ImageView out, ThreadPool& pool);
  void reject_objects(const WhitenNoiseConstants& c, ThreadPool& pool);
  void store(int n, ThreadPool& pool);

  WhitenParams params_;
  FrameShape shape_;
  float saturation_ = 0.0f;
  float history_scale_ = 0.0f;  // history-format: half: whiten_history_scale(); float: 0

  WhitenHistory history_;
  std::unique_ptr<Buffers> buf_;
  std::unique_ptr<PhaseCorrelator> correlator_;  // shift: resample only

  // State across frames.
  std::uint64_t frame_ = 0;          // frames since the history started
  std::uint64_t noise_updates_ = 0;  // frames whose residual updated sigma
  int frames_since_fit_ = 0;
  double reference_x_ = 0.0, reference_y_ = 0.0;  // the shift reference's own shift
  double previous_x_ = 0.0, previous_y_ = 0.0;    // the last frame's shift
  // The far correlation peak the last frame set aside (its shift on the first frame's grid):
  // taken if this frame finds it again.
  bool candidate_ = false;
  double candidate_x_ = 0.0, candidate_y_ = 0.0;
  std::vector<double> weights_;
  WhitenWeights solve_{};
  ShiftKernel to_grid_;    // camera -> aligned grid for this frame
  ShiftKernel to_camera_;  // aligned -> camera grid
  WhitenStats stats_;
};

}  // namespace starsift
