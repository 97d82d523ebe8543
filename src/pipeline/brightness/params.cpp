// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/brightness/params.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "pipeline/error.hpp"
#include "pipeline/named_values.hpp"
#include "pipeline/param_checks.hpp"

namespace starsift {

namespace {

constexpr Named<BrightnessMode> kModeNames[] = {{"local", BrightnessMode::Local},
                                                {"clahe", BrightnessMode::Clahe}};
constexpr Named<BrightnessStretch> kStretchNames[] = {
    {"none", BrightnessStretch::None},
    {"fixed", BrightnessStretch::Fixed},
    {"percentile", BrightnessStretch::Percentile}};

constexpr ParamChecks kChecks{"brightness"};

// The widest range of a sample in the format's units (GRAY16_LE at 16 bits): stretch-min and
// stretch-max lie in it whatever the frames; validate_for() narrows it to the frame's.
constexpr double kMaxStretchValue = 65535.0;

}  // namespace

void BrightnessParams::validate() const {
  kChecks.check_number("sigma", sigma, 0.0, /*min_open=*/true, kMaxSigma, "px");
  kChecks.check_number("strength", strength, 0.0, false, kMaxStrength, "");
  kChecks.check_int("tiles-x", tiles_x, 1, kMaxTiles);
  kChecks.check_int("tiles-y", tiles_y, 1, kMaxTiles);
  if (!std::isfinite(clip_limit) || (clip_limit != 0.0 && clip_limit < 1.0)) {
    kChecks.refuse("clip-limit", number_text(clip_limit),
                   "0 (no limit) or a finite number from 1 up (times the mean bin)");
  }
  kChecks.check_number("alpha", alpha, 0.0, false, 1.0, "");
  kChecks.check_number("stretch-min", stretch_min, 0.0, false, kMaxStretchValue,
                       "(the format's units)");
  kChecks.check_number("stretch-max", stretch_max, 0.0, false, kMaxStretchValue,
                       "(the format's units)");
  kChecks.check_number("low-percentile", low_percentile, 0.0, false, 100.0, "%");
  kChecks.check_number("high-percentile", high_percentile, 0.0, false, 100.0, "%");
  if (!(low_percentile < high_percentile)) {
    kChecks.refuse("low-percentile", number_text(low_percentile),
                   "below high-percentile (" + number_text(high_percentile) + ")");
  }
  if (stretch == BrightnessStretch::Fixed && !(stretch_min < stretch_max)) {
    kChecks.refuse("stretch-min", number_text(stretch_min),
                   "below stretch-max (" + number_text(stretch_max) +
                       ") when stretch is fixed: the values mapped onto 0 and the maximum");
  }
}

void BrightnessParams::validate_for(const FrameShape& shape) const {
  validate();
  shape.validate();
  if (!brightness_supports(shape.format)) {
    throw Error("brightness: format " + std::string(to_string(shape.format)) + " is not supported",
                "GRAY8, GRAY16_LE, GRAY32F and the 4-channel 8-bit formats");
  }
  if (mode == BrightnessMode::Clahe && shape.format == PixelFormat::Gray32F) {
    throw Error(
        "brightness mode clahe does not take GRAY32F frames (its histograms have one bin "
        "per sensor value)",
        "GRAY8, GRAY16_LE and the 4-channel 8-bit formats; mode local takes GRAY32F too");
  }
  if (stretch == BrightnessStretch::Fixed) {
    const double max = brightness_sample_max(shape);
    const std::string range =
        "0.." + number_text(max) + " for " + std::string(to_string(shape.format)) +
        (shape.format == PixelFormat::Gray16 ? " at bit depth " + std::to_string(shape.bit_depth)
                                             : std::string());
    if (stretch_max > max) {
      throw Error("brightness stretch-max " + number_text(stretch_max) + " does not fit the frames",
                  range);
    }
  }
}

void BrightnessParams::validate_frames(const FrameShape& shape, ConstImageView in,
                                       ImageView out) const {
  validate_for(shape);
  const auto check = [&](const char* which, int width, int height, PixelFormat format) {
    if (width == shape.width && height == shape.height && format == shape.format) return;
    throw Error("brightness: the " + std::string(which) + " frame is " + std::to_string(width) +
                    "x" + std::to_string(height) + " " + std::string(to_string(format)) +
                    ", configured for " + std::to_string(shape.width) + "x" +
                    std::to_string(shape.height) + " " + std::string(to_string(shape.format)),
                "input and output frames of the configured size and format");
  };
  check("input", in.width, in.height, in.format);
  check("output", out.width, out.height, out.format);
}

std::string_view to_string(BrightnessMode mode) noexcept {
  return name_of<BrightnessMode>(kModeNames, mode);
}

std::string_view to_string(BrightnessStretch stretch) noexcept {
  return name_of<BrightnessStretch>(kStretchNames, stretch);
}

BrightnessMode parse_brightness_mode(std::string_view name) {
  return parse_named<BrightnessMode>(kModeNames, "brightness mode", name);
}

BrightnessStretch parse_brightness_stretch(std::string_view name) {
  return parse_named<BrightnessStretch>(kStretchNames, "brightness stretch", name);
}

std::string brightness_mode_names() {
  return names_of<BrightnessMode>(kModeNames);
}

std::string brightness_stretch_names() {
  return names_of<BrightnessStretch>(kStretchNames);
}

bool brightness_supports(PixelFormat format) noexcept {
  return format_info(format).color_channels >= 1;
}

double brightness_sample_max(const FrameShape& shape) noexcept {
  const FormatInfo& info = format_info(shape.format);
  if (info.is_float) return 1.0;
  if (info.bytes_per_sample == 2) return static_cast<double>((1 << shape.bit_depth) - 1);
  return 255.0;
}

std::size_t brightness_percentile_rank(double percentile, std::size_t count) noexcept {
  // p N / 100 within 1e-6 above a whole number counts as that number: 7 % of 100 is rank 7,
  // though 7 / 100 has no exact binary form.
  const double wanted = std::ceil(percentile * static_cast<double>(count) / 100.0 - 1e-6);
  if (!(wanted >= 1.0)) return 1;
  return std::min(count, static_cast<std::size_t>(wanted));
}

}  // namespace starsift
