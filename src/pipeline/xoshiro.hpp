// SPDX-License-Identifier: LGPL-2.1-or-later
// A small, portable random generator: xoshiro256** (Blackman and Vigna), seeded through
// splitmix64. Synthetic data drawn from it is the same on every standard library, which
// std::mt19937's distributions (std::normal_distribution and friends) are not. The synthetic
// sky (sky/sky_random.hpp) and the command line's synthetic data (app/rng.hpp) build their
// streams and normal variates on it.
#pragma once

#include <cstdint>

namespace starsift {

// One splitmix64 step: advances `x` and returns the next output.
inline std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

class Xoshiro256 {
 public:
  explicit Xoshiro256(std::uint64_t seed) {
    for (auto& s : state_) s = splitmix64(seed);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, 1), 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform in (0, 1]: safe for log().
  double uniform_open() { return (static_cast<double>(next() >> 11) + 1.0) * 0x1.0p-53; }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

  std::uint64_t state_[4];
};

}  // namespace starsift
