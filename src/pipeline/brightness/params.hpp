// SPDX-License-Identifier: LGPL-2.1-or-later
// Adaptive brightness correction: one parameter struct, shared by YAML, element properties,
// the CPU reference and the CUDA kernels. The maths is in docs/brightness.md.
//
// mode local (Moroney's non-linear masking, generalised by a strength):
//   Y  = the pixel's luminance scaled to 0..1 (the value / (2^bit_depth - 1); BT.709 luma for
//        colour; GRAY32F is taken as 0..1 already, clamped for the power below)
//   B  = Y blurred by a Gaussian of `sigma` px
//   Y' = Y ^ (2 ^ (strength * (2 B - 1)))   dark surroundings (B < 0.5) lift, bright ones hold
//   out = alpha * Y' + (1 - alpha) * Y
// mode clahe: contrast-limited adaptive histogram equalisation of Y on tiles_x x tiles_y
//   tiles with 2^bit_depth bins (OpenCV's definition: clip at clip_limit times the mean bin,
//   excess spread evenly, bilinear between the four nearest tiles' maps), then the same
//   alpha blend.
// Then, in both modes, the optional stretch: none; fixed (stretch_min..stretch_max onto the
// full range); percentile (the frame's own low_percentile..high_percentile of the corrected
// values, from a histogram with one bin per sensor value).
// Colour: the corrected luminance Y_out scales R, G and B by Y_out / Y (clamped), so chroma
// follows the luminance and dark areas keep their colour; alpha and padding pass through.
#pragma once

#include <cstddef>
#include <string>

#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift {

enum class BrightnessMode { Local, Clahe };
enum class BrightnessStretch { None, Fixed, Percentile };

struct BrightnessParams {
  static constexpr double kMaxSigma = 1000.0;  // px, as the Gaussian's
  static constexpr double kMaxStrength = 4.0;
  static constexpr int kMaxTiles = 64;

  BrightnessMode mode = BrightnessMode::Local;

  // local
  double sigma = 40.0;    // px, >0..kMaxSigma: the size of a "region"
  double strength = 1.0;  // 0..kMaxStrength; 0 is the identity, 1 Moroney's correction

  // clahe
  int tiles_x = 8;          // 1..kMaxTiles
  int tiles_y = 8;          // 1..kMaxTiles
  double clip_limit = 2.0;  // 0 (no limit) or >= 1: a bin holds at most this many mean bins

  // both modes
  double alpha = 1.0;  // 0..1: 1 the correction alone, 0 the original

  BrightnessStretch stretch = BrightnessStretch::None;
  double stretch_min = 0.0;  // fixed: in the format's units, stretch_min < stretch_max
  double stretch_max = 0.0;
  double low_percentile = 0.5;  // percentile: 0 <= low < high <= 100
  double high_percentile = 99.5;

  // Throws Error naming the parameter, the value and the allowed range.
  void validate() const;
  // Also checks the fixed stretch against the sample range of `shape` (format, bit depth).
  void validate_for(const FrameShape& shape) const;
  // validate_for(shape), and `in` and `out` of the size and format of `shape`: what every
  // path of the correction checks before a frame.
  void validate_frames(const FrameShape& shape, ConstImageView in, ImageView out) const;

  bool operator==(const BrightnessParams&) const = default;
};

std::string_view to_string(BrightnessMode mode) noexcept;
std::string_view to_string(BrightnessStretch stretch) noexcept;
// "local", "clahe" / "none", "fixed", "percentile"; Error listing the names otherwise.
BrightnessMode parse_brightness_mode(std::string_view name);
BrightnessStretch parse_brightness_stretch(std::string_view name);
std::string brightness_mode_names();
std::string brightness_stretch_names();

// GRAY8, GRAY16_LE (any bit depth), GRAY32F (mode local only) and the 4-channel 8-bit formats.
bool brightness_supports(PixelFormat format) noexcept;

// BT.709 luma weights: Y = kLumaR R + kLumaG G + kLumaB B (they sum to 1, so a grey pixel's
// luminance is its value).
inline constexpr double kLumaR = 0.2126;
inline constexpr double kLumaG = 0.7152;
inline constexpr double kLumaB = 0.0722;

// The largest sample value of `shape`, the one Y = 1 stands for: 2^bit_depth - 1 for
// GRAY16_LE, 255 for the 8-bit formats, 1 for GRAY32F (taken as 0..1).
double brightness_sample_max(const FrameShape& shape) noexcept;

// The percentile stretch's rank: lo (hi) is the smallest value v of the frame with at least
// brightness_percentile_rank(low (high), N) of its N values <= v, i.e. the rank-th smallest
// value (1-based): ceil(percentile N / 100), at least 1 and at most N (a product within 1e-6
// above a whole number counts as that number). Percentile 0 gives the
// frame's minimum, 100 its maximum. One function, so every path picks the same rank.
std::size_t brightness_percentile_rank(double percentile, std::size_t count) noexcept;

}  // namespace starsift
