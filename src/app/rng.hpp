// SPDX-License-Identifier: LGPL-2.1-or-later
// The command line's random numbers for synthetic data (xoshiro256**, pipeline/xoshiro.hpp), so
// that data is identical on every standard library (std::normal_distribution is not).
#pragma once

#include <cmath>
#include <cstdint>

#include "pipeline/xoshiro.hpp"

namespace starsift::app {

// xoshiro256** (pipeline/xoshiro.hpp) with derived streams and Box-Muller normal variates.
class Rng : public Xoshiro256 {
 public:
  using Xoshiro256::Xoshiro256;

  // A seed for an independent stream derived from (seed, a, b): e.g. (frame, row).
  static std::uint64_t derive(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0) {
    std::uint64_t x = seed ^ 0x243f6a8885a308d3ull;
    x = splitmix64(x) ^ a;
    x = splitmix64(x) ^ b;
    return splitmix64(x);
  }

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
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace starsift::app
