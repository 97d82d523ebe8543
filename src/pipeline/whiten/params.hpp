// SPDX-License-Identifier: LGPL-2.1-or-later
// The temporal whitening filter's parameters: one struct, shared by YAML, element properties,
// the CPU reference and the CUDA kernels. docs/whitening.md describes the algorithm.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pipeline/pixel_format.hpp"

namespace starsift {

// How frame-to-frame shifts (jitter, drift) are handled.
enum class WhitenShift {
  None,      // frames are used on the camera's grid as they come
  Resample,  // each frame is resampled onto the first frame's grid before it is fitted/stored
};

// Which frame the weights are fitted to.
enum class WhitenFit {
  Current,  // the frame being whitened (adapts at once; two passes over the history)
  Past,     // the previous frame, from its own history (one pass; movers never pull)
};

// What enters the history where the residual is an outlier.
enum class WhitenReject {
  None,  // the aligned frame as it is
  Mask,  // the prediction where |residual| > reject-sigma * sigma
  // mask, and also where the residual's 3 x 3 box sum is significant (> reject-object-sigma
  // times its noise from sigma) anywhere in the pixel's 3 x 3 neighbourhood: a faint blob,
  // each of whose pixels passes the per-pixel test, stays out of the history (sigma still
  // learns it: kept out of sigma, the residuals of stars under jitter were never learnt).
  // CPU only so far (the CUDA stage refuses it).
  Objects,
};

// How the history keeps its frames.
enum class WhitenHistoryFormat {
  Float,  // float, as computed
  Half,   // binary16: each stored value rounded to 11 significant bits (half_history_value(),
          // pixel_rules.hpp), half the bytes the prediction reads; integer input formats only
};

// What the first frames (fewer than `history` frames to fit with) output.
enum class WhitenWarmup {
  Passthrough,  // the input itself (residual, float); zero for snr and sigma
  Zeros,        // the output's zero level
  Partial,      // whitened with the frames available
};

// What the stage writes.
enum class WhitenOutput {
  Residual,  // offset + gain * residual, in the input's format (rounded and clamped)
  // offset + gain * z, z the Gaussian equivalent of residual / sigma (gaussian_significance(),
  // pixel_rules.hpp), in the input's format (rounded and clamped): whitening's
  // significance, which detection reads in sigmas through the frame's SignificanceScale
  // (a GStreamer buffer has no float grey format to carry snr between elements).
  Significance,
  Float,  // the residual as GRAY32F
  Snr,    // z (as significance) as GRAY32F
  Sigma,  // the per-pixel noise sigma as GRAY32F
};

struct WhitenParams {
  static constexpr int kDefaultHistory = 20;
  static constexpr int kMinHistory = 1;
  static constexpr int kMaxHistory = 64;
  // Relative Tikhonov term: gamma_abs = gamma * tr(R) / n. Chosen by measurement
  // (docs/whitening.md, "Defaults"): on static, cloudy and jittered star fields the residual
  // is within 1 % of its best from 1e-5 to 1e-3, except under jitter with shift: none, where
  // 1e-4 leaves a fifth less than 1e-3; from 1e-1 the weights shrink and the sky leaks.
  static constexpr double kDefaultGamma = 1e-4;
  static constexpr WhitenFit kDefaultFit = WhitenFit::Current;
  static constexpr int kDefaultRefitInterval = 1;
  static constexpr int kMaxRefitInterval = 1 << 16;
  // fit-subsample 0: automatic (effective_fit_subsample()): every row up to kAutoFitRows rows,
  // then every k-th row so that about kAutoFitRows are fitted. The fit solves for N weights
  // from every fit pixel: a thousand rows of a camera frame are millions of samples, whose
  // estimate differs from the full frame's by far less than the noise (docs/whitening.md,
  // "Fit rows"), while fit: current's dot products read the history once more for each.
  static constexpr int kAutoFitSubsample = 0;
  static constexpr int kDefaultFitSubsample = kAutoFitSubsample;
  static constexpr int kAutoFitRows = 1024;
  static constexpr int kMaxFitSubsample = 64;
  static constexpr WhitenShift kDefaultShift = WhitenShift::Resample;
  static constexpr int kDefaultShiftWindow = 512;
  static constexpr int kMinShiftWindow = 16;
  static constexpr int kMaxShiftWindow = 4096;
  static constexpr double kDefaultShiftMax = 8.0;
  // shift-noise: the registration's own error, px. A frame aligned a little off and resampled
  // leaves, at the bright stars, residuals of hundreds of sigma of the sky: that error times
  // the scene's gradient (ZOGY's astrometric noise: Zackay, Ofek & Gal-Yam 2016) and the
  // resampling's miss at a star's core, which follows its curvature. The significance outputs
  // divide by sqrt(sigma^2 + registration_variance()) (pixel_rules.hpp, from the prediction's
  // derivatives), so star residuals under jitter are judged against the error alignment leaves
  // there while the clear sky keeps its own sigma. 0: off. Applies with shift: resample only.
  // Chosen by measurement (docs/whitening.md, "Registration noise"; bench/results/whitening/
  // quality-shift-noise): with jitter, 0.2 px takes the shipped chain's false detections at 4.5
  // sigma from 0.447 to 0.030 per Mpix-frame (held out too) at the same completeness.
  static constexpr double kDefaultShiftNoise = 0.2;
  static constexpr double kMaxShiftNoise = 1.0;
  static constexpr WhitenReject kDefaultReject = WhitenReject::Objects;
  static constexpr double kDefaultRejectSigma = 4.0;
  // A noise box passes 4 sigma once in 16 000, like a pixel the per-pixel test; a mover of peak
  // SNR 5 (FWHM 3 px) reaches ~10 in its box. 3 kept as much of the movers' signal in the
  // quality benchmark but biased sigma lower (docs/quality.md).
  static constexpr double kDefaultRejectObjectSigma = 4.0;
  static constexpr double kAutoNoiseFrames = 0.0;  // noise-frames 0: kAutoNoiseHistories * history
  // Chosen by measurement (docs/whitening.md, "Defaults"): the significance divides by a sigma
  // averaged over ~2 noise-frames samples, whose scatter puts Student-t tails on it; at 2N the
  // clear sky made 4 times the false detections it makes at 4N, with no loss of completeness.
  static constexpr double kAutoNoiseHistories = 4.0;
  static constexpr WhitenWarmup kDefaultWarmup = WhitenWarmup::Partial;
  // Chosen by measurement (docs/quality.md, "The shipped chain"): detection thresholding
  // whitening's own per-pixel sigma makes a fifth of the false detections that a mesh over the
  // residual makes, at the same completeness.
  static constexpr WhitenOutput kDefaultOutput = WhitenOutput::Significance;
  // gain 0: automatic (effective_gain()).
  static constexpr double kAutoGain = 0.0;
  // output: significance writes this many steps per sigma in 2^bit_depth levels: +-32 sigma
  // around a mid-range offset, 1/1024 sigma a step in 16 bits, 1/4 in 8.
  static constexpr int kSignificanceRangeSigmas = 64;
  static constexpr bool kDefaultDespike = true;
  static constexpr WhitenHistoryFormat kDefaultHistoryFormat = WhitenHistoryFormat::Half;

  int history = kDefaultHistory;  // N: frames the prediction is made of, 1..64
  double gamma = kDefaultGamma;   // relative regularisation, >= 0
  WhitenFit fit = kDefaultFit;
  int refit_interval = kDefaultRefitInterval;  // solve for new weights every this many frames
  int fit_subsample = kDefaultFitSubsample;    // the fit sums read every this-many-th row; 0 auto
  WhitenShift shift = kDefaultShift;
  int shift_window = kDefaultShiftWindow;   // phase-correlation window side, a power of two
  double shift_max = kDefaultShiftMax;      // px from the reference before it is re-chosen
  double shift_noise = kDefaultShiftNoise;  // px: the registration's error in the significance
  WhitenReject reject = kDefaultReject;
  double reject_sigma = kDefaultRejectSigma;  // k in |residual| > k * sigma
  // reject: objects: k_o in |box sum of residuals| > k_o * sqrt(box sum of sigma^2).
  double reject_object_sigma = kDefaultRejectObjectSigma;
  double noise_frames = kAutoNoiseFrames;  // time constant of sigma's average, frames
  WhitenWarmup warmup = kDefaultWarmup;
  WhitenOutput output = kDefaultOutput;
  // The output level of a zero residual for output: residual and significance, in the
  // format's units. Unset: mid-range for integer formats (2^(bit_depth-1)), 0 for GRAY32F.
  std::optional<double> offset;
  // output: residual writes offset + gain * residual, significance offset + gain * snr.
  // 0: automatic, 1 for residual, 2^bit_depth / 64 for significance (1 for GRAY32F).
  double gain = kAutoGain;
  // An input sample that sticks out of its 3 x 3 neighbourhood (despike_sample(), despike.hpp:
  // a hot or dead pixel, single or paired) takes its neighbours' level before anything reads
  // it, and is no measurement (no residual, no noise update).
  bool despike = kDefaultDespike;
  WhitenHistoryFormat history_format = kDefaultHistoryFormat;

  // Throws Error naming the parameter (by its YAML key), the value and the allowed range.
  void validate() const;
  // Also checks the frame shape: a format the filter accepts, an offset that fits it, and a
  // frame large enough for shift estimation when shift: resample.
  void validate_for(const FrameShape& shape) const;
  // Throws Error naming what the CUDA stage does not implement (reject: objects with shift:
  // none) and what it allows instead.
  void validate_for_cuda() const;

  // noise-frames with 0 resolved to kAutoNoiseHistories * history.
  double effective_noise_frames() const noexcept;
  // The offset for frames of `shape` (the default when unset).
  double effective_offset(const FrameShape& shape) const noexcept;
  // The gain for frames of `shape` (gain 0 resolved for the output).
  double effective_gain(const FrameShape& shape) const noexcept;
  // fit-subsample for frames of `shape` (0 resolved: max(1, height / kAutoFitRows)).
  int effective_fit_subsample(const FrameShape& shape) const noexcept;
  // The phase-correlation window for frames of `shape`: shift-window clipped to the largest
  // power of two that fits the frame.
  int effective_shift_window(const FrameShape& shape) const noexcept;

  bool operator==(const WhitenParams&) const = default;
};

// True when `to` differs from `from` only in what applies from the next frame on (gamma,
// refit-interval, shift-max, shift-noise, reject-sigma, reject-object-sigma, warmup, offset, gain,
// despike): the history can be kept.
bool whiten_live_change(const WhitenParams& from, const WhitenParams& to) noexcept;

// The formats whitening accepts: GRAY8, GRAY16_LE (any bit depth), GRAY32F.
bool whiten_supports(PixelFormat format) noexcept;

// Frames of `in` produce frames of this shape: the input's format for output: residual and
// significance, GRAY32F otherwise; significance and snr carry their SignificanceScale.
FrameShape whiten_output_shape(const WhitenParams& params, const FrameShape& in) noexcept;

// Samples at or above this value are saturated (2^bit_depth - 1 for integer formats; +inf for
// GRAY32F, where only non-finite samples are left out).
float whiten_saturation(const FrameShape& shape) noexcept;

// Names as YAML and properties write them, parsers that throw Error listing the accepted
// names, and the lists for messages.
std::string_view to_string(WhitenShift value) noexcept;
std::string_view to_string(WhitenFit value) noexcept;
std::string_view to_string(WhitenReject value) noexcept;
std::string_view to_string(WhitenWarmup value) noexcept;
std::string_view to_string(WhitenOutput value) noexcept;
std::string_view to_string(WhitenHistoryFormat value) noexcept;
WhitenShift parse_whiten_shift(std::string_view name);
WhitenFit parse_whiten_fit(std::string_view name);
WhitenReject parse_whiten_reject(std::string_view name);
WhitenWarmup parse_whiten_warmup(std::string_view name);
WhitenOutput parse_whiten_output(std::string_view name);
WhitenHistoryFormat parse_whiten_history_format(std::string_view name);
std::string whiten_shift_names();
std::string whiten_fit_names();
std::string whiten_reject_names();
std::string whiten_warmup_names();
std::string whiten_output_names();
std::string whiten_history_format_names();

// The scale of half history samples for frames of `shape` (half_history_value()): 1/2 for 16
// bits, so the format's largest value fits binary16's 65504; 1 otherwise. 0: float history
// (history-format: float, and GRAY32F frames whatever it says).
float whiten_history_scale(const WhitenParams& params, const FrameShape& shape) noexcept;

}  // namespace starsift
