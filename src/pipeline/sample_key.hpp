// SPDX-License-Identifier: LGPL-2.1-or-later
// Order-preserving integer keys for samples, so every comparison-based filter (median)
// uses integer min/max on every type, bit-exactly on CPU and GPU.
//
// Floats are ordered by their bit patterns in IEEE-754 totalOrder:
//   -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN
// so NaNs never break a sorting network (fminf would drop them) and -0.0 and +0.0 are
// distinct, ordered values.
#pragma once

#include <cstdint>
#include <cstring>

#include "pipeline/hd.hpp"

namespace starsift {

STARSIFT_HD std::uint32_t float_bits_to_key(std::uint32_t bits) {
  // Negative: flip all bits (reverses their order); positive: flip the sign bit.
  const std::uint32_t mask = (bits & 0x80000000u) ? 0xffffffffu : 0x80000000u;
  return bits ^ mask;
}

STARSIFT_HD std::uint32_t key_to_float_bits(std::uint32_t key) {
  const std::uint32_t mask = (key & 0x80000000u) ? 0x80000000u : 0xffffffffu;
  return key ^ mask;
}

inline std::uint32_t float_to_key(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return float_bits_to_key(bits);
}

inline float key_to_float(std::uint32_t key) {
  const std::uint32_t bits = key_to_float_bits(key);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace starsift
