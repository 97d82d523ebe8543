// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/whiten/params.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "pipeline/error.hpp"
#include "pipeline/named_values.hpp"
#include "pipeline/param_checks.hpp"

namespace starsift {

namespace {

// One table per enum: the names in the order messages list them.
constexpr Named<WhitenShift> kShiftNames[] = {{"none", WhitenShift::None},
                                              {"resample", WhitenShift::Resample}};
constexpr Named<WhitenFit> kFitNames[] = {{"current", WhitenFit::Current},
                                          {"past", WhitenFit::Past}};
constexpr Named<WhitenReject> kRejectNames[] = {
    {"none", WhitenReject::None}, {"mask", WhitenReject::Mask}, {"objects", WhitenReject::Objects}};
constexpr Named<WhitenWarmup> kWarmupNames[] = {{"passthrough", WhitenWarmup::Passthrough},
                                                {"zeros", WhitenWarmup::Zeros},
                                                {"partial", WhitenWarmup::Partial}};
constexpr Named<WhitenHistoryFormat> kHistoryFormatNames[] = {{"float", WhitenHistoryFormat::Float},
                                                              {"half", WhitenHistoryFormat::Half}};
constexpr Named<WhitenOutput> kOutputNames[] = {{"residual", WhitenOutput::Residual},
                                                {"significance", WhitenOutput::Significance},
                                                {"float", WhitenOutput::Float},
                                                {"snr", WhitenOutput::Snr},
                                                {"sigma", WhitenOutput::Sigma}};

constexpr ParamChecks kChecks{"whiten"};

// A finite number in [min, max] (max may be +inf for "no upper bound").
void check_number(std::string_view key, double value, double min, bool min_open,
                  const std::string& allowed) {
  const bool below = min_open ? !(value > min) : !(value >= min);
  if (!std::isfinite(value) || below) kChecks.refuse(key, number_text(value), allowed);
}

bool is_power_of_two(int value) {
  return value > 0 && (value & (value - 1)) == 0;
}

int integer_max(const FrameShape& shape) {
  return shape.format == PixelFormat::Gray8 ? 255 : (1 << shape.bit_depth) - 1;
}

}  // namespace

std::string_view to_string(WhitenShift value) noexcept {
  return name_of<WhitenShift>(kShiftNames, value);
}
std::string_view to_string(WhitenFit value) noexcept {
  return name_of<WhitenFit>(kFitNames, value);
}
std::string_view to_string(WhitenReject value) noexcept {
  return name_of<WhitenReject>(kRejectNames, value);
}
std::string_view to_string(WhitenWarmup value) noexcept {
  return name_of<WhitenWarmup>(kWarmupNames, value);
}
std::string_view to_string(WhitenOutput value) noexcept {
  return name_of<WhitenOutput>(kOutputNames, value);
}

std::string_view to_string(WhitenHistoryFormat value) noexcept {
  return name_of<WhitenHistoryFormat>(kHistoryFormatNames, value);
}

WhitenShift parse_whiten_shift(std::string_view name) {
  return parse_named<WhitenShift>(kShiftNames, "whiten shift", name);
}
WhitenFit parse_whiten_fit(std::string_view name) {
  return parse_named<WhitenFit>(kFitNames, "whiten fit", name);
}
WhitenReject parse_whiten_reject(std::string_view name) {
  return parse_named<WhitenReject>(kRejectNames, "whiten reject", name);
}
WhitenWarmup parse_whiten_warmup(std::string_view name) {
  return parse_named<WhitenWarmup>(kWarmupNames, "whiten warmup", name);
}
WhitenOutput parse_whiten_output(std::string_view name) {
  return parse_named<WhitenOutput>(kOutputNames, "whiten output", name);
}

WhitenHistoryFormat parse_whiten_history_format(std::string_view name) {
  return parse_named<WhitenHistoryFormat>(kHistoryFormatNames, "whiten history-format", name);
}

std::string whiten_shift_names() {
  return names_of<WhitenShift>(kShiftNames);
}
std::string whiten_fit_names() {
  return names_of<WhitenFit>(kFitNames);
}
std::string whiten_reject_names() {
  return names_of<WhitenReject>(kRejectNames);
}
std::string whiten_warmup_names() {
  return names_of<WhitenWarmup>(kWarmupNames);
}
std::string whiten_output_names() {
  return names_of<WhitenOutput>(kOutputNames);
}
std::string whiten_history_format_names() {
  return names_of<WhitenHistoryFormat>(kHistoryFormatNames);
}

void WhitenParams::validate() const {
  kChecks.check_int("history", history, kMinHistory, kMaxHistory);
  check_number("gamma", gamma, 0.0, false, "a finite number >= 0");
  kChecks.check_int("refit-interval", refit_interval, 1, kMaxRefitInterval);
  kChecks.check_int("fit-subsample", fit_subsample, kAutoFitSubsample, kMaxFitSubsample);
  if (!is_power_of_two(shift_window) || shift_window < kMinShiftWindow ||
      shift_window > kMaxShiftWindow) {
    kChecks.refuse("shift-window", std::to_string(shift_window),
                   "powers of two " + std::to_string(kMinShiftWindow) + ".." +
                       std::to_string(kMaxShiftWindow));
  }
  check_number("shift-max", shift_max, 0.0, true, "a finite number > 0 (pixels)");
  check_number("reject-sigma", reject_sigma, 0.0, true, "a finite number > 0");
  check_number("reject-object-sigma", reject_object_sigma, 0.0, true, "a finite number > 0");
  if (!std::isfinite(shift_noise) || shift_noise < 0.0 || shift_noise > kMaxShiftNoise) {
    kChecks.refuse("shift-noise", number_text(shift_noise),
                   "0.." + number_text(kMaxShiftNoise) + " (px; 0: off)");
  }
  if (!std::isfinite(noise_frames) || (noise_frames != kAutoNoiseFrames && noise_frames < 1.0)) {
    kChecks.refuse("noise-frames", number_text(noise_frames),
                   "0 (four times the history) or a finite number >= 1 (frames)");
  }
  if (offset && !std::isfinite(*offset)) {
    kChecks.refuse("offset", number_text(*offset), "a finite number");
  }
  if (!std::isfinite(gain)) {
    kChecks.refuse("gain", number_text(gain),
                   "a finite number (0: automatic, 1 for residual, 2^bit-depth / 64 for "
                   "significance)");
  }
}

void WhitenParams::validate_for(const FrameShape& shape) const {
  validate();
  shape.validate();
  if (!whiten_supports(shape.format)) {
    throw Error("whiten cannot process " + std::string(to_string(shape.format)) + " frames",
                "GRAY8, GRAY16_LE, GRAY32F");
  }
  if (offset && shape.format != PixelFormat::Gray32F &&
      (output == WhitenOutput::Residual || output == WhitenOutput::Significance)) {
    const int max = integer_max(shape);
    if (*offset < 0.0 || *offset > max) {
      throw Error("whiten offset " + number_text(*offset) + " does not fit " +
                      std::string(to_string(shape.format)) + " of " +
                      std::to_string(shape.bit_depth) + " bits",
                  "0.." + std::to_string(max));
    }
  }
  if (shift == WhitenShift::Resample && std::min(shape.width, shape.height) < kMinShiftWindow) {
    throw Error("whiten shift: resample on " + std::to_string(shape.width) + "x" +
                    std::to_string(shape.height) + " frames (too small to estimate a shift)",
                "frames of at least " + std::to_string(kMinShiftWindow) + "x" +
                    std::to_string(kMinShiftWindow) + ", or shift: none");
  }
}

void WhitenParams::validate_for_cuda() const {
  // The object test reads a 5 x 5 neighbourhood of this frame's residuals and sigma before
  // sigma is updated. shift: resample has a pass of its own for it after the camera pass; the
  // single fused pass of shift: none decides each pixel, and updates its sigma, before its
  // neighbours' residuals are known.
  if (reject == WhitenReject::Objects && shift == WhitenShift::None) {
    throw Error(
        "whiten reject objects with shift none is not implemented on the CUDA backend "
        "(its single fused pass cannot decide a pixel's rejection from its neighbours' "
        "residuals)",
        "reject: objects with shift: resample, or reject: none or mask with shift: "
        "none, on CUDA; objects with shift: none on the CPU");
  }
}

double WhitenParams::effective_noise_frames() const noexcept {
  return noise_frames == kAutoNoiseFrames ? kAutoNoiseHistories * history : noise_frames;
}

double WhitenParams::effective_offset(const FrameShape& shape) const noexcept {
  if (offset) return *offset;
  if (shape.format == PixelFormat::Gray32F) return 0.0;
  return static_cast<double>(1 << (shape.bit_depth - 1));
}

double WhitenParams::effective_gain(const FrameShape& shape) const noexcept {
  if (gain != kAutoGain) return gain;
  if (output != WhitenOutput::Significance || shape.format == PixelFormat::Gray32F) return 1.0;
  return static_cast<double>(1 << shape.bit_depth) / kSignificanceRangeSigmas;
}

int WhitenParams::effective_fit_subsample(const FrameShape& shape) const noexcept {
  if (fit_subsample != kAutoFitSubsample) return fit_subsample;
  return std::clamp(shape.height / kAutoFitRows, 1, kMaxFitSubsample);
}

int WhitenParams::effective_shift_window(const FrameShape& shape) const noexcept {
  int window = shift_window;
  while (window > shape.width || window > shape.height) window /= 2;
  return window;
}

float whiten_history_scale(const WhitenParams& params, const FrameShape& shape) noexcept {
  // Float samples need not fit binary16's range: GRAY32F frames keep a float history.
  if (params.history_format == WhitenHistoryFormat::Float || shape.format == PixelFormat::Gray32F) {
    return 0.0f;
  }
  return shape.bit_depth > 15 ? 0.5f : 1.0f;
}

bool whiten_supports(PixelFormat format) noexcept {
  return format == PixelFormat::Gray8 || format == PixelFormat::Gray16 ||
         format == PixelFormat::Gray32F;
}

FrameShape whiten_output_shape(const WhitenParams& params, const FrameShape& in) noexcept {
  FrameShape out = in;
  out.significance = {};
  switch (params.output) {
    case WhitenOutput::Residual:
      break;
    case WhitenOutput::Significance:
      out.significance = {params.effective_offset(in), params.effective_gain(in)};
      break;
    case WhitenOutput::Snr:
      out = {in.width, in.height, PixelFormat::Gray32F, 32, {0.0, 1.0}};
      break;
    case WhitenOutput::Float:
    case WhitenOutput::Sigma:
      out = {in.width, in.height, PixelFormat::Gray32F, 32};
      break;
  }
  return out;
}

float whiten_saturation(const FrameShape& shape) noexcept {
  if (shape.format == PixelFormat::Gray32F) return std::numeric_limits<float>::infinity();
  return static_cast<float>(integer_max(shape));
}

bool whiten_live_change(const WhitenParams& from, const WhitenParams& to) noexcept {
  WhitenParams live = to;
  live.gamma = from.gamma;
  live.refit_interval = from.refit_interval;
  live.shift_max = from.shift_max;
  live.shift_noise = from.shift_noise;
  live.reject_sigma = from.reject_sigma;
  live.reject_object_sigma = from.reject_object_sigma;
  live.warmup = from.warmup;
  live.offset = from.offset;
  live.gain = from.gain;
  live.despike = from.despike;
  return live == from;
}

}  // namespace starsift
