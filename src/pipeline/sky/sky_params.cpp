// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/sky/sky_params.hpp"

#include <cmath>
#include <cstdio>

#include "pipeline/error.hpp"

namespace starsift {

namespace {

// Numbers as a person would write them: 300, 0.05, 1e+06.
std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

void check_range(const char* name, double value, double min, double max) {
  if (!std::isfinite(value)) {
    throw Error(std::string("sky parameter ") + name + " is not a finite number",
                number(min) + ".." + number(max));
  }
  if (value < min || value > max) {
    throw Error(std::string("sky parameter ") + name + " " + number(value) + " is out of range",
                number(min) + ".." + number(max));
  }
}

void check_range(const char* name, int value, int min, int max) {
  if (value < min || value > max) {
    throw Error(
        std::string("sky parameter ") + name + " " + std::to_string(value) + " is out of range",
        std::to_string(min) + ".." + std::to_string(max));
  }
}

void check_order(const char* min_name, double min, const char* max_name, double max) {
  if (min > max) {
    throw Error(std::string("sky parameter ") + min_name + " " + number(min) + " exceeds " +
                    max_name + " " + number(max),
                std::string(min_name) + " <= " + max_name);
  }
}

// The bias must leave room for signal below the saturation of `format`.
void check_bias(const SkyParams& params, PixelFormat format);

}  // namespace

std::string_view to_string(PsfKind kind) noexcept {
  return kind == PsfKind::Moffat ? "moffat" : "gaussian";
}

PsfKind parse_psf_kind(std::string_view name) {
  if (name == "gaussian") return PsfKind::Gaussian;
  if (name == "moffat") return PsfKind::Moffat;
  throw Error("unknown psf '" + shown_value(name) + "'", "gaussian, moffat");
}

void SkyParams::validate_fields() const {
  check_range("width", width, 1, kMaxSide);
  check_range("height", height, 1, kMaxSide);

  check_range("star-density", star_density, 0.0, kMaxStarDensity);
  check_range("star-flux-min", star_flux_min, kMinStarFlux, kMaxStarFlux);
  check_range("star-flux-max", star_flux_max, kMinStarFlux, kMaxStarFlux);
  check_range("star-flux-slope", star_flux_slope, kMinStarFluxSlope, kMaxStarFluxSlope);

  if (psf != PsfKind::Gaussian && psf != PsfKind::Moffat) {
    throw Error("sky parameter psf " + std::to_string(static_cast<int>(psf)) + " is unknown",
                "gaussian, moffat");
  }
  check_range("fwhm", fwhm, kMinFwhm, kMaxFwhm);
  check_range("moffat-beta", moffat_beta, kMinMoffatBeta, kMaxMoffatBeta);

  check_range("sky-level", sky_level, 0.0, kMaxSkyLevel);
  check_range("sky-gradient", sky_gradient, 0.0, kMaxSkyGradient);
  check_range("sky-gradient-angle", sky_gradient_angle, 0.0, kMaxAngle);

  check_range("read-noise", read_noise, 0.0, kMaxReadNoise);
  check_range("gain", gain, kMinGain, kMaxGain);
  check_range("bias", bias, 0.0, kMaxBias);
  check_range("bit-depth", bit_depth, kMinBitDepth, kMaxBitDepth);

  check_range("hot-pixel-fraction", hot_pixel_fraction, 0.0, kMaxHotPixelFraction);
  check_range("hot-pixel-level", hot_pixel_level, 0.0, kMaxHotPixelLevel);

  check_range("jitter", jitter, 0.0, kMaxJitter);
  check_range("jitter-reversion", jitter_reversion, 0.0, 1.0);
  check_range("drift-x", drift_x, -kMaxDrift, kMaxDrift);
  check_range("drift-y", drift_y, -kMaxDrift, kMaxDrift);

  check_range("movers", movers, 0, kMaxMovers);
  check_range("mover-snr-min", mover_snr_min, 0.0, kMaxMoverSnr);
  check_range("mover-snr-max", mover_snr_max, 0.0, kMaxMoverSnr);
  check_range("mover-speed-min", mover_speed_min, 0.0, kMaxMoverSpeed);
  check_range("mover-speed-max", mover_speed_max, 0.0, kMaxMoverSpeed);
  // Any negative direction means "random"; the property's range starts at kRandomDirection.
  if (!std::isfinite(mover_direction) || mover_direction > kMaxAngle) {
    throw Error("sky parameter mover-direction " + number(mover_direction) + " is out of range",
                "0..360 degrees, or a negative value for a random direction per mover");
  }
}

void SkyParams::validate() const {
  validate_fields();
  check_order("star-flux-min", star_flux_min, "star-flux-max", star_flux_max);
  check_order("mover-snr-min", mover_snr_min, "mover-snr-max", mover_snr_max);
  check_order("mover-speed-min", mover_speed_min, "mover-speed-max", mover_speed_max);
  check_bias(*this, PixelFormat::Gray16);
}

void SkyParams::validate_for(PixelFormat format) const {
  validate();
  if (!sky_supports(format)) {
    throw Error("the sky does not render " + std::string(to_string(format)),
                "GRAY8, GRAY16_LE, GRAY32F");
  }
  check_bias(*this, format);
}

namespace {

void check_bias(const SkyParams& params, PixelFormat format) {
  if (format == PixelFormat::Gray32F) return;  // electrons: no ADU range
  const int saturation = params.max_adu(format);
  const double bias = params.bias;
  if (bias >= saturation) {
    throw Error(
        "sky parameter bias " + number(bias) + " ADU is not below the saturation of " +
            std::string(to_string(format)) +
            (format == PixelFormat::Gray16 ? " at bit-depth " + std::to_string(params.bit_depth)
                                           : std::string()) +
            " (" + std::to_string(saturation) + " ADU)",
        "0.." + std::to_string(saturation - 1));
  }
}

}  // namespace

int SkyParams::max_adu(PixelFormat format) const noexcept {
  if (format == PixelFormat::Gray8) return 255;
  return (1 << bit_depth) - 1;
}

bool sky_supports(PixelFormat format) noexcept {
  return format == PixelFormat::Gray8 || format == PixelFormat::Gray16 ||
         format == PixelFormat::Gray32F;
}

}  // namespace starsift
