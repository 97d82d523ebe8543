// SPDX-License-Identifier: LGPL-2.1-or-later
// The power of the brightness correction's fast CPU path, Y^e = 2^(e log2 Y), in float with
// no library call and no branch, so a loop over a row of samples vectorises (std::pow and
// std::exp2 are library calls per sample). Measured against double precision
// (tests/brightness/test_brightness_math.cpp):
//   exp2_approx(x), -126 <= x <= 126: relative error below 3e-7 (a degree-5 polynomial of
//     the fraction, fitted for relative error: 1.6e-7, plus float rounding);
//   log2_approx(y), y a normal float > 0: log2 of the mantissa folded onto [sqrt(1/2),
//     sqrt(2)), by the series of atanh to t^9: within 6e-7 for y >= 2^-16 (the float holding
//     a result up to 16 is itself that coarse), within 1e-7 of |log2 y| below;
// so 2^(e log2 Y) for Y in (0, 1] and 1/16 <= e <= 16 (strength up to 4) lands within 2e-6
// of Y^e, relative, wherever Y^e is at least 2^-16, and within 0.03 counts of 16 bits
// anywhere.
#pragma once

#include <bit>
#include <cstdint>

namespace starsift::brightness_math {

// The log2 used for Y = 0: far enough below that 2^(e L) clamps to 2^-126 (0 after any
// rounding) for every exponent e >= 2^-kMaxStrength.
inline constexpr float kLog2OfZero = -1.0e4f;

// 2^x. x is clamped to -126..126 (the normal floats), so the result is never 0 or inf.
inline float exp2_approx(float x) noexcept {
  x = x < -126.0f ? -126.0f : x;
  x = x > 126.0f ? 126.0f : x;
  // floor(x) by truncation of a positive number (SSE2 has no floor); x - n is exact.
  const auto biased = static_cast<std::int32_t>(x + 127.0f);
  const float f = x - static_cast<float>(biased - 127);  // 0 <= f < 1, or a hair below 0
  float p = 0.0018762343f;
  p = p * f + 0.0089925947f;
  p = p * f + 0.055823583f;
  p = p * f + 0.24015455f;
  p = p * f + 0.69315296f;
  p = p * f + 0.99999994f;
  return p * std::bit_cast<float>(biased << 23);  // 2^(biased - 127)
}

// log2(y) for y > 0 (a normal float); kLog2OfZero for y <= 0.
inline float log2_approx(float y) noexcept {
  const auto bits = std::bit_cast<std::int32_t>(y);
  auto exponent = static_cast<float>((bits >> 23) - 127);
  float m = std::bit_cast<float>((bits & 0x007fffff) | 0x3f800000);  // 1 <= m < 2
  // Fold onto [sqrt(1/2), sqrt(2)): the series below converges fast there.
  const bool high = m > 1.41421356f;
  m = high ? m * 0.5f : m;
  exponent = high ? exponent + 1.0f : exponent;
  const float t = (m - 1.0f) / (m + 1.0f);  // |t| <= 0.1716
  const float t2 = t * t;
  // ln m = 2 atanh t = 2 (t + t^3/3 + t^5/5 + t^7/7 + t^9/9)
  float s = 1.0f / 9.0f;
  s = s * t2 + 1.0f / 7.0f;
  s = s * t2 + 1.0f / 5.0f;
  s = s * t2 + 1.0f / 3.0f;
  s = s * t2 + 1.0f;
  const float log2_m = 2.0f * 1.44269504f * t * s;
  return y > 0.0f ? exponent + log2_m : kLog2OfZero;
}

}  // namespace starsift::brightness_math
