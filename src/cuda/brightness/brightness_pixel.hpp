// SPDX-License-Identifier: LGPL-2.1-or-later
// The brightness correction's arithmetic for one pixel, as the CUDA kernels compute it, on the
// host or the device: the luminance, the local correction and the blend (v), the stretch and
// the output samples. Host-callable so the CPU tests hold it against brightness_reference()
// without a GPU (tests/brightness/test_brightness_pixel.cpp). Steps as reference.hpp numbers
// them:
//  1. Y: bit for bit the reference's (its double quotient rounded to float): integer grey
//     samples by a float division (the quotient of two integers below 2^16 is never within a
//     double's rounding of a float rounding boundary, so float(double(a / b)) is the float
//     quotient); colour in double, each product and sum rounded on its own as the reference's
//     host code rounds them (no fused multiply-add).
//  2. C = Y^e, e = 2^(strength (2 B - 1)): in float, as 2^(e log2 Y) (exp2f, log2f); strength
//     0 gives C = Y exactly, as pow(Y, 1) does. Mode clahe: C = the mapped value over the
//     plane's maximum, a float quotient (launch_clahe's plane is clahe_reference()'s).
//  3. v = alpha max C + (1 - alpha) max Y, one fused multiply-add: for alpha 0 or strength 0
//     it is exactly the reference's v rounded to float, so the percentile's histogram is the
//     reference's.
//  4./5. (v - lo) scale, then rounded as gauss_round(); colour channels times Y_out / Y.
// Against the reference's double arithmetic (the same B): v within 5e-7 of the full range
// at strength 1, 3e-6 at strength 4 (the power's float rounding), so an integer output sample
// differs by at most one count, where v lands that close to a rounding boundary.
#pragma once

#include <cmath>
#include <cstdint>

#include "pipeline/brightness/params.hpp"
#include "pipeline/gauss/params.hpp"
#include "pipeline/hd.hpp"

namespace starsift::cuda::brightness_pixel {

// What every pixel of a frame shares.
struct Correction {
  float max = 255.0f;  // the sample value Y = 1 stands for (brightness_sample_max)
  float inv_max = 1.0f / 255.0f;
  float strength = 1.0f;     // 0: C = Y
  float alpha_max = 255.0f;  // alpha * max
  float rest_max = 0.0f;     // (1 - alpha) * max
};

inline Correction correction_of(const BrightnessParams& params, const FrameShape& shape) {
  const double max = brightness_sample_max(shape);
  Correction k;
  k.max = static_cast<float>(max);
  k.inv_max = static_cast<float>(1.0 / max);
  k.strength = static_cast<float>(params.strength);
  k.alpha_max = static_cast<float>(params.alpha * max);
  k.rest_max = static_cast<float>((1.0 - params.alpha) * max);
  return k;
}

// Y of an integer grey sample (any value; above `max` counts as `max`) or of a GRAY32F one
// (`max` 1: clamped to 0..1, NaN as 0).
STARSIFT_HD float grey_luminance(float sample, float max) {
  if (!(sample > 0.0f)) return 0.0f;
  return (sample < max ? sample : max) / max;
}

// Y of a colour pixel: BT.709 luma of R, G, B (0..255) over 255.
STARSIFT_HD float colour_luminance(std::uint32_t r, std::uint32_t g, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  const double sum = __dadd_rn(__dadd_rn(__dmul_rn(kLumaR, static_cast<double>(r)),
                                         __dmul_rn(kLumaG, static_cast<double>(g))),
                               __dmul_rn(kLumaB, static_cast<double>(b)));
  return __double2float_rn(__ddiv_rn(sum, 255.0));
#else
  const double sum = kLumaR * static_cast<double>(r) + kLumaG * static_cast<double>(g) +
                     kLumaB * static_cast<double>(b);
  return static_cast<float>(sum / 255.0);
#endif
}

STARSIFT_HD float fused(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return fmaf(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// C = Y^(2^(strength (2 B - 1))).
STARSIFT_HD float local_power(float y, float blurred, float strength) {
  if (strength == 0.0f) return y;
  if (!(y > 0.0f)) return 0.0f;  // 0^e = 0: e > 0
#if defined(__CUDA_ARCH__)
  const float e = exp2f(strength * (2.0f * blurred - 1.0f));
  return exp2f(e * log2f(y));
#else
  const float e = std::exp2(strength * (2.0f * blurred - 1.0f));
  return std::exp2(e * std::log2(y));
#endif
}

// v, the corrected value in the format's units, from C and Y.
STARSIFT_HD float blend(float corrected, float y, const Correction& k) {
  return fused(k.alpha_max, corrected, k.rest_max * y);
}

// v of mode local.
STARSIFT_HD float local_value(float y, float blurred, const Correction& k) {
  return blend(local_power(y, blurred, k.strength), y, k);
}

// Mode clahe on colour frames: Y rounded to the 8-bit value CLAHE equalises, as the reference
// rounds it (double(Y) 255 is exact, so a fused multiply-add rounds alike).
STARSIFT_HD std::uint32_t luma_byte(float y) {
  return static_cast<std::uint32_t>(std::floor(static_cast<double>(y) * 255.0 + 0.5));
}

// v of mode clahe: C = the mapped value over the plane's maximum (the sensor's; 255 for the
// colour formats' 8-bit luma).
STARSIFT_HD float clahe_value(float y, float mapped, float plane_max, const Correction& k) {
  return blend(mapped / plane_max, y, k);
}

// The percentile's histogram bin of v (integer formats): v rounded to a sensor value.
STARSIFT_HD int value_bin(float v, float max) {
  return static_cast<int>(gauss_round(v, max));
}

// The stretched value as an integer grey sample, or a GRAY32F one (max 1: clamped to 0..1).
STARSIFT_HD float grey_out(float stretched, float max, bool is_float) {
  if (is_float) return stretched > 0.0f ? (stretched < 1.0f ? stretched : 1.0f) : 0.0f;
  return gauss_round(stretched, max);
}

// A colour pixel (bytes 0..2 colour, in any order, byte 3 alpha or padding) with luminance
// `y`, scaled to the stretched value: each colour byte times Y_out / Y (Y_out = stretched /
// max clamped to 0..1), a black pixel becoming the grey Y_out; byte 3 kept.
STARSIFT_HD std::uint32_t colour_out(std::uint32_t pixel, float y, float stretched,
                                     const Correction& k) {
  float lum_out = stretched * k.inv_max;
  lum_out = lum_out > 0.0f ? (lum_out < 1.0f ? lum_out : 1.0f) : 0.0f;
  std::uint32_t out = pixel & 0xff000000u;
  if (!(y > 0.0f)) {
    const auto grey = static_cast<std::uint32_t>(gauss_round(lum_out * 255.0f, 255.0f));
    return out | grey | grey << 8 | grey << 16;
  }
  const float ratio = lum_out / y;
  for (int c = 0; c < 3; ++c) {
    const auto sample = static_cast<float>((pixel >> (8 * c)) & 0xffu);
    out |= static_cast<std::uint32_t>(gauss_round(sample * ratio, 255.0f)) << (8 * c);
  }
  return out;
}

}  // namespace starsift::cuda::brightness_pixel
