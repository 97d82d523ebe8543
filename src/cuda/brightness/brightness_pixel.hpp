// SPDX-License-Identifier: LGPL-2.1-or-later
// The brightness correction's arithmetic for one pixel, as the CUDA kernels compute it, on the
// host or the device: the luminance, the local correction and the blend (v), the stretch and
// the output samples. Host-callable so the CPU tests hold it against brightness_reference()
// without a GPU (tests/brightness/test_brightness_pixel.cpp). Steps as reference.hpp numbers
// them:
//  1. Y: bit for bit the reference's (its double quotient rounded to float): integer grey
//     samples by the float quotient (the quotient of two integers below 2^16 is never within
//     a double's rounding of a float rounding boundary, so float(double(a / b)) is the float
//     quotient), taken as a corrected product by the reciprocal (grey_luminance()); colour
//     from the integer 10000 x 255 Y, divided in float
//     (colour_luminance(): the same float for every colour).
//  2. C = Y^e, e = 2^(strength (2 B - 1)): in float, as 2^(e log2 Y) (the device's exp2 and
//     log2 units, local_power(); std::exp2 and std::log2 on the host); strength
//     0 gives C = Y exactly, as pow(Y, 1) does. Mode clahe: C = the mapped value over the
//     plane's maximum, a float quotient (launch_clahe's plane is clahe_reference()'s).
//  3. v = alpha max C + (1 - alpha) max Y, one fused multiply-add: for alpha 0 or strength 0
//     it is exactly the reference's v rounded to float, so the percentile's histogram is the
//     reference's.
//  4./5. (v - lo) scale, then rounded as gauss_round(); colour channels times Y_out / Y.
// On the device bytes become floats and rounded floats integers by float arithmetic on their
// bits (byte_float, round_sample), not by conversion instructions, which issue at an eighth
// of the rate of the arithmetic and were most of a colour pixel's cost.
// Against the reference's double arithmetic (the same B): v within 5e-7 of the full range
// at strength 1, 3e-6 at strength 4 (the power's float rounding), so an integer output sample
// differs by at most one count, where v lands that close to a rounding boundary. The device's
// exp2 and log2 units add local_power()'s 3.3e-7 at strength 1, 2.6e-6 at strength 4, and
// its colour ratio's 2 ulp (colour_out()) 6e-5 counts: still within 1e-5 of the range.
#pragma once

#include <cmath>
#include <cstdint>

#include "cuda/common/pixel_reader.hpp"
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
// The quotient sample / max is the product by the rounded reciprocal corrected by its fused
// residual, which is the correctly rounded quotient for every sample 0..max of every bit depth
// (the pixel test checks them all; for max 1 it is the sample itself): three instructions a
// pixel where the IEEE division takes some ten (the reciprocal, once a thread, is shared).
STARSIFT_HD float grey_luminance(float sample, float max) {
  if (!(sample > 0.0f)) return 0.0f;
  const float s = sample < max ? sample : max;
  const float inv = 1.0f / max;
#if defined(__CUDA_ARCH__)
  const float q = __fmul_rn(s, inv);
  return __fmaf_rn(__fmaf_rn(-q, max, s), inv, q);
#else
  const float q = s * inv;
  return std::fma(std::fma(-q, max, s), inv, q);
#endif
}

// Y of a colour pixel: BT.709 luma of R, G, B (0..255) over 255, the reference's float, from
// integers and float arithmetic only. S = 2126 R + 7152 G + 722 B is 10000 x 255 Y exactly
// (below 2^22, so a float holds it), and its float quotient by 2550000 is the reference's
// double luma rounded to float for every one of the 2^24 colours (the exact value is never a
// float's rounding midpoint, and the reference's double arithmetic never strays across one:
// tests/brightness/test_brightness_pixel.cpp checks them all). The quotient is a product by
// the rounded reciprocal corrected by its fused residual (the correctly rounded quotient for
// every S a colour reaches, as that test's check implies): five instructions on the device
// where the reference's double arithmetic took a dozen double-precision ones and a
// conversion.
inline constexpr std::uint32_t kLumaR10k = 2126;  // kLumaR, kLumaG, kLumaB times 10000
inline constexpr std::uint32_t kLumaG10k = 7152;
inline constexpr std::uint32_t kLumaB10k = 722;
inline constexpr float kLumaScale = 2550000.0f;  // 10000 x 255
inline constexpr float kInvLumaScale = 1.0f / 2550000.0f;
static_assert(kLumaR10k / 1e4 == kLumaR && kLumaG10k / 1e4 == kLumaG && kLumaB10k / 1e4 == kLumaB,
              "the integer luma weights are the reference's");

// Y from S = 10000 x 255 Y.
STARSIFT_HD float luma_of_scaled(std::uint32_t scaled) {
#if defined(__CUDA_ARCH__)
  // The integer as a float: placed in the mantissa of 2^23, 2^23 taken off (exact below 2^23).
  const float s = __uint_as_float(0x4b000000u | scaled) - 8388608.0f;
  const float q = __fmul_rn(s, kInvLumaScale);
  return __fmaf_rn(__fmaf_rn(-q, kLumaScale, s), kInvLumaScale, q);
#else
  const auto s = static_cast<float>(scaled);
  const float q = s * kInvLumaScale;
  return std::fma(std::fma(-q, kLumaScale, s), kInvLumaScale, q);
#endif
}

STARSIFT_HD float colour_luminance(std::uint32_t r, std::uint32_t g, std::uint32_t b) {
  return luma_of_scaled(kLumaR10k * r + kLumaG10k * g + kLumaB10k * b);
}

// Y of a pixel as a colour frame holds it (Bgr false: R in byte 0, else in byte 2; byte 3
// ignored). On the device S is two 16-by-8-bit dot products of the pixel's bytes with the
// weights (bytes 0 and 1, then 2 and 3, whose weight is 0): two instructions where the
// bytes' extraction and three multiply-adds took eight.
template <bool Bgr>
STARSIFT_HD float pixel_luminance(std::uint32_t px) {
  constexpr std::uint32_t kFirst = Bgr ? kLumaB10k : kLumaR10k;  // byte 0's weight
  constexpr std::uint32_t kThird = Bgr ? kLumaR10k : kLumaB10k;  // byte 2's
#if defined(__CUDA_ARCH__)
  return luma_of_scaled(__dp2a_lo(kLumaG10k << 16 | kFirst, px, __dp2a_hi(kThird, px, 0u)));
#else
  return luma_of_scaled(kFirst * (px & 0xffu) + kLumaG10k * ((px >> 8) & 0xffu) +
                        kThird * ((px >> 16) & 0xffu));
#endif
}

// gauss_round(value, max) as an integer, for an integer max below 2^23: on the device value
// clamped to 0..max (NaN: 0, as fmaxf drops it), plus 0.5 rounded to nearest as gauss_round
// adds it, then truncated by an addition of 2^23 rounded toward zero, whose low mantissa bits
// are the integer; no conversion instruction.
STARSIFT_HD std::uint32_t round_sample(float value, float max) {
#if defined(__CUDA_ARCH__)
  const float clamped = fminf(fmaxf(value, 0.0f), max);
  return __float_as_uint(__fadd_rz(__fadd_rn(clamped, 0.5f), 8388608.0f)) - 0x4b000000u;
#else
  return static_cast<std::uint32_t>(gauss_round(value, max));
#endif
}

STARSIFT_HD float fused(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return fmaf(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

// 2^x and log2 y on the device, one multi-function unit instruction each: ex2.approx.ftz
// (relative error 2 ulp, results below 2^-126 flushed to 0) and lg2.approx (__log2f: 2^-22
// absolute for y in 0.5..2, 2 ulp elsewhere), where exp2f adds a denormal range's scaling and
// log2f is a polynomial of some twenty instructions.
#if defined(__CUDA_ARCH__)
__device__ __forceinline__ float exp2_unit(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

// log2 y and 1 / y from the unit alone, denormal inputs flushed to 0: lg2.approx and
// __fdividef's reciprocal scale a denormal y up first, four instructions a call that change
// nothing where y is normal, as every Y of an integer or colour pixel is (at least 1/65535).
// A GRAY32F Y below 2^-126 gives C = 0 where the scaled log2 gave at most 2^-63.
__device__ __forceinline__ float log2_unit(float y) {
  float r;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
  return r;
}

__device__ __forceinline__ float reciprocal_unit(float y) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
  return r;
}
#endif

// C = Y^(2^(strength (2 B - 1))). On the device the units above: their log2's error, 2^-22
// max(1, |log2 Y|), moves C by ln 2 e C 2^-22 max(1, |log2 Y|), at most 8.8e-8 where
// |log2 Y| >= 1 (C |log2 Y| e = u 2^-u, u = e |log2 Y|, is at most 1 / (e ln 2)) and
// ln 2 e 2^-22 near Y = 1: 3.3e-7 at strength 1 (e <= 2), 2.6e-6 at strength 4 (e <= 16).
// Y = 0 needs no branch: log2 0 = -inf, e -inf = -inf (e is a finite power of two, B being in
// 0..1 and the strength bounded), 2^-inf = 0 = 0^e. Y is never negative or NaN (its functions
// above give 0 for those).
// On the device strength 0 is a selection after the power, not a branch before it: a branch a
// pixel cost more than the power it skips in the rare frame at strength 0.
STARSIFT_HD float local_power(float y, float blurred, float strength) {
#if defined(__CUDA_ARCH__)
  const float e = exp2_unit(strength * (2.0f * blurred - 1.0f));
  const float c = exp2_unit(e * log2_unit(y));
  return strength == 0.0f ? y : c;
#else
  if (strength == 0.0f) return y;
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
  return static_cast<int>(round_sample(v, max));
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
#if defined(__CUDA_ARCH__)
  // round_sample() on the bits: each rounded channel's float is 2^23 + its byte, so byte
  // permutations gather the three bytes and byte 3 without masks and shifts. The products
  // are >= 0 and finite (lum_out in 0..1, Y at least 722 / 2550000 where it is not 0), so
  // only the top needs clamping. The quotient comes from the reciprocal unit, within 2 ulp
  // (IEEE division takes some ten instructions): each product, at most 255, within 6e-5
  // counts.
  const auto rounded = [](float value) {
    return __float_as_uint(__fadd_rz(__fadd_rn(fminf(value, 255.0f), 0.5f), 8388608.0f));
  };
  // A black pixel (Y = 0: every colour byte 0) becomes the grey Y_out without a branch: each
  // channel is byte ratio + grey, a product rounded once either way (grey 0 where Y > 0, ratio
  // 0 and the bytes 0 where Y = 0). Branch-free, the selectors of the byte permutations stay
  // in registers; with a branch a pixel the compiler loaded them again in each.
  const bool lit = y > 0.0f;
  const float ratio = lit ? lum_out * reciprocal_unit(y) : 0.0f;
  const float grey = lit ? 0.0f : lum_out * 255.0f;
  const std::uint32_t c0 = rounded(fmaf(byte_float(pixel, 0), ratio, grey));
  const std::uint32_t c1 = rounded(fmaf(byte_float(pixel, 1), ratio, grey));
  const std::uint32_t c2 = rounded(fmaf(byte_float(pixel, 2), ratio, grey));
  // Bytes 0, 1 from c0, c1; then byte 2 from c2; then byte 3 the pixel's.
  return __byte_perm(__byte_perm(__byte_perm(c0, c1, 0x0040u), c2, 0x0410u), pixel, 0x7210u);
#else
  std::uint32_t out = pixel & 0xff000000u;
  if (!(y > 0.0f)) {
    const std::uint32_t grey = round_sample(lum_out * 255.0f, 255.0f);
    return out | grey | grey << 8 | grey << 16;
  }
  const float ratio = lum_out / y;
  for (int c = 0; c < 3; ++c) out |= round_sample(byte_float(pixel, c) * ratio, 255.0f) << (8 * c);
  return out;
#endif
}

}  // namespace starsift::cuda::brightness_pixel
