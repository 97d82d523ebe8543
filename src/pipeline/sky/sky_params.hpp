// SPDX-License-Identifier: LGPL-2.1-or-later
// The synthetic sky's parameters: one struct, shared by the siftskysrc element, the
// `starsift sky` command and the tests. Signal is counted in electrons (e-) up to the
// sensor's output stage, then converted to ADU with `gain` and `bias`. Coordinates are
// 0-based pixel centres, x the fast axis, y down the frame; angles in degrees from +x
// towards +y. docs/sky.md describes the model.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pipeline/pixel_format.hpp"

namespace starsift {

enum class PsfKind {
  Gaussian,  // exp(-r^2 / 2 sigma^2), sigma = fwhm / 2.3548
  Moffat,    // (1 + r^2 / alpha^2)^-beta, alpha from fwhm and beta
};

std::string_view to_string(PsfKind kind) noexcept;
// Accepts "gaussian" and "moffat"; throws Error otherwise.
PsfKind parse_psf_kind(std::string_view name);

struct SkyParams {
  // Frame: the size of the generated frames (the element takes it from its caps) and the seed
  // every random number derives from.
  static constexpr int kDefaultWidth = 1024;
  static constexpr int kDefaultHeight = 1024;
  static constexpr int kMaxSide = 65536;
  static constexpr std::uint64_t kDefaultSeed = 1;

  // Stars: a power law in flux, N(>F) ~ F^-slope between flux_min and flux_max.
  static constexpr double kDefaultStarDensity = 300.0;  // per megapixel
  static constexpr double kMaxStarDensity = 1.0e5;
  static constexpr double kDefaultStarFluxMin = 300.0;  // e-
  static constexpr double kDefaultStarFluxMax = 1.0e6;  // e-
  static constexpr double kMinStarFlux = 1.0;
  static constexpr double kMaxStarFlux = 1.0e10;
  static constexpr double kDefaultStarFluxSlope = 1.0;
  static constexpr double kMinStarFluxSlope = 0.1;
  static constexpr double kMaxStarFluxSlope = 3.0;

  // Point spread function, the same for stars and movers.
  static constexpr PsfKind kDefaultPsf = PsfKind::Gaussian;
  static constexpr double kDefaultFwhm = 3.0;  // px
  static constexpr double kMinFwhm = 0.5;
  static constexpr double kMaxFwhm = 20.0;
  static constexpr double kDefaultMoffatBeta = 3.0;
  static constexpr double kMinMoffatBeta = 1.5;  // below, the wings hold most of the flux
  static constexpr double kMaxMoffatBeta = 20.0;

  // Sky background: sky_level e-/px at the frame's centre, changing linearly by the fraction
  // sky_gradient of sky_level from one side of the frame to the other along
  // sky_gradient_angle (so it spans sky_level * (1 -+ sky_gradient / 2)).
  static constexpr double kDefaultSkyLevel = 400.0;  // e-/px
  static constexpr double kMaxSkyLevel = 1.0e7;
  static constexpr double kDefaultSkyGradient = 0.1;
  static constexpr double kMaxSkyGradient = 1.0;
  static constexpr double kDefaultSkyGradientAngle = 30.0;  // degrees
  static constexpr double kMaxAngle = 360.0;

  // Sensor: read noise, conversion to ADU and its range. ADU = round(e / gain + bias),
  // clipped to 0..2^bit_depth - 1 (GRAY16; GRAY8 always has 8 bits).
  static constexpr double kDefaultReadNoise = 5.0;  // e- rms
  static constexpr double kMaxReadNoise = 1.0e4;
  static constexpr double kDefaultGain = 2.0;  // e-/ADU
  static constexpr double kMinGain = 0.01;
  static constexpr double kMaxGain = 1.0e4;
  static constexpr double kDefaultBias = 100.0;  // ADU
  static constexpr double kMaxBias = 65535.0;
  static constexpr int kDefaultBitDepth = 12;
  static constexpr int kMinBitDepth = 8;
  static constexpr int kMaxBitDepth = 16;

  // Hot pixels: this fraction of pixels, at positions fixed by the seed, collect
  // hot_pixel_level e- more in every frame (with its photon noise, like dark current).
  static constexpr double kDefaultHotPixelFraction = 1.0e-4;
  static constexpr double kMaxHotPixelFraction = 0.1;
  static constexpr double kDefaultHotPixelLevel = 5000.0;  // e-
  static constexpr double kMaxHotPixelLevel = 1.0e9;

  // Pointing: the whole field (stars and movers) moves between frames by a mean-reverting
  // random walk, j[k] = (1 - jitter_reversion) j[k-1] + N(0, jitter^2) per axis with
  // j[0] = 0, plus a constant drift per frame.
  static constexpr double kDefaultJitter = 0.1;  // px per frame (step sigma)
  static constexpr double kMaxJitter = 10.0;
  static constexpr double kDefaultJitterReversion = 0.05;
  static constexpr double kDefaultDrift = 0.0;  // px per frame
  static constexpr double kMaxDrift = 100.0;

  // Movers: `movers` objects at a time, each with a nominal peak SNR drawn uniformly from
  // [mover_snr_min, mover_snr_max] (see nominal_peak_snr in sky_truth.hpp), a speed from
  // [mover_speed_min, mover_speed_max] px/frame and a direction (degrees, or
  // kRandomDirection for a uniform one per mover).
  static constexpr int kDefaultMovers = 8;
  static constexpr int kMaxMovers = 10000;
  static constexpr double kDefaultMoverSnrMin = 5.0;
  static constexpr double kDefaultMoverSnrMax = 10.0;
  static constexpr double kMaxMoverSnr = 1.0e6;
  static constexpr double kDefaultMoverSpeedMin = 0.5;  // px/frame
  static constexpr double kDefaultMoverSpeedMax = 5.0;
  static constexpr double kMaxMoverSpeed = 1000.0;
  static constexpr double kRandomDirection = -1.0;
  static constexpr double kDefaultMoverDirection = kRandomDirection;

  int width = kDefaultWidth;
  int height = kDefaultHeight;
  std::uint64_t seed = kDefaultSeed;

  double star_density = kDefaultStarDensity;
  double star_flux_min = kDefaultStarFluxMin;
  double star_flux_max = kDefaultStarFluxMax;
  double star_flux_slope = kDefaultStarFluxSlope;

  PsfKind psf = kDefaultPsf;
  double fwhm = kDefaultFwhm;
  double moffat_beta = kDefaultMoffatBeta;

  double sky_level = kDefaultSkyLevel;
  double sky_gradient = kDefaultSkyGradient;
  double sky_gradient_angle = kDefaultSkyGradientAngle;

  double read_noise = kDefaultReadNoise;
  double gain = kDefaultGain;
  double bias = kDefaultBias;
  int bit_depth = kDefaultBitDepth;

  double hot_pixel_fraction = kDefaultHotPixelFraction;
  double hot_pixel_level = kDefaultHotPixelLevel;

  double jitter = kDefaultJitter;
  double jitter_reversion = kDefaultJitterReversion;
  double drift_x = kDefaultDrift;
  double drift_y = kDefaultDrift;

  int movers = kDefaultMovers;
  double mover_snr_min = kDefaultMoverSnrMin;
  double mover_snr_max = kDefaultMoverSnrMax;
  double mover_speed_min = kDefaultMoverSpeedMin;
  double mover_speed_max = kDefaultMoverSpeedMax;
  double mover_direction = kDefaultMoverDirection;

  // Each field on its own: range and finiteness. Throws Error naming the parameter (as the
  // element's property is named: star-flux-min), the value and the allowed range.
  void validate_fields() const;
  // validate_fields() and the relations between fields (min <= max pairs, the bias below
  // saturation at bit_depth).
  void validate() const;
  // validate(), and the bias below the saturation of `format` (GRAY8 saturates at 255).
  // Formats other than GRAY8, GRAY16 and GRAY32F are refused.
  void validate_for(PixelFormat format) const;

  // The largest ADU of `format`: 255 for GRAY8, 2^bit_depth - 1 for GRAY16.
  int max_adu(PixelFormat format) const noexcept;

  bool operator==(const SkyParams&) const = default;
};

// The formats the sky renders: GRAY8, GRAY16 (bit_depth bits, in the low bits) and GRAY32F
// (electrons, neither gain, bias nor quantisation).
bool sky_supports(PixelFormat format) noexcept;

}  // namespace starsift
