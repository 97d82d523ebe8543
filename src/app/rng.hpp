// SPDX-License-Identifier: LGPL-2.1-or-later
// A small, portable random generator (xoshiro256**, seeded through splitmix64), so
// synthetic data is identical on every standard library (std::normal_distribution is not).
#pragma once

#include <cmath>
#include <cstdint>

namespace starsift::app {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& s : state_) s = splitmix64(seed);
  }

  // A seed for an independent stream derived from (seed, a, b): e.g. (frame, row).
  static std::uint64_t derive(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0) {
    std::uint64_t x = seed ^ 0x243f6a8885a308d3ull;
    x = splitmix64(x) ^ a;
    x = splitmix64(x) ^ b;
    return splitmix64(x);
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

  // Standard normal (Box-Muller; the second value is kept for the next call).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double r = std::sqrt(-2.0 * std::log(uniform_open()));
    const double phi = 6.283185307179586 * uniform();
    spare_ = r * std::sin(phi);
    has_spare_ = true;
    return r * std::cos(phi);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  std::uint64_t state_[4];
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace starsift::app
