// SPDX-License-Identifier: LGPL-2.1-or-later
// Random numbers for the synthetic sky: a small portable generator (xoshiro256**, seeded
// through splitmix64) and independent streams derived from (seed, what, a, b), so every
// frame, row and mover draws from its own stream. That is what makes a frame depend only on
// the seed and its index, never on the thread that rendered it or the frames before it.
// std::normal_distribution and friends differ between standard libraries; these do not.
#pragma once

#include <cmath>
#include <cstdint>

#include "pipeline/xoshiro.hpp"

namespace starsift::sky {

// What a stream is for; a tag keeps, say, stars and noise rows from sharing numbers.
enum class Stream : std::uint64_t {
  Stars = 1,
  HotPixels = 2,
  Jitter = 3,
  Mover = 4,
  NoiseRow = 5,
};

// xoshiro256** (pipeline/xoshiro.hpp) with tagged streams and normal variates by Marsaglia's
// polar method.
class SkyRng : public Xoshiro256 {
 public:
  using Xoshiro256::Xoshiro256;

  // The generator of stream (seed, what, a, b): e.g. (seed, NoiseRow, frame, row).
  static SkyRng stream(std::uint64_t seed, Stream what, std::uint64_t a = 0, std::uint64_t b = 0) {
    std::uint64_t x = seed ^ 0x243f6a8885a308d3ull;
    x = splitmix64(x) ^ static_cast<std::uint64_t>(what);
    x = splitmix64(x) ^ a;
    x = splitmix64(x) ^ b;
    return SkyRng(splitmix64(x));
  }

  // Standard normal (Marsaglia's polar method: no trigonometry; the second value is kept for
  // the next call).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u, v, s;
    do {
      u = 2.0 * uniform() - 1.0;
      v = 2.0 * uniform() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double scale = std::sqrt(-2.0 * std::log(s) / s);
    spare_ = v * scale;
    has_spare_ = true;
    return u * scale;
  }

 private:
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace starsift::sky
