// SPDX-License-Identifier: LGPL-2.1-or-later
// Random numbers for the synthetic sky: a small portable generator (xoshiro256**, seeded
// through splitmix64) and independent streams derived from (seed, what, a, b), so every
// frame, row and mover draws from its own stream. That is what makes a frame depend only on
// the seed and its index, never on the thread that rendered it or the frames before it.
// std::normal_distribution and friends differ between standard libraries; these do not.
#pragma once

#include <cmath>
#include <cstdint>

namespace starsift::sky {

// What a stream is for; a tag keeps, say, stars and noise rows from sharing numbers.
enum class Stream : std::uint64_t {
  Stars = 1,
  HotPixels = 2,
  Jitter = 3,
  Mover = 4,
  NoiseRow = 5,
};

class SkyRng {
 public:
  explicit SkyRng(std::uint64_t seed) {
    for (auto& s : state_) s = splitmix64(seed);
  }

  // The generator of stream (seed, what, a, b): e.g. (seed, NoiseRow, frame, row).
  static SkyRng stream(std::uint64_t seed, Stream what, std::uint64_t a = 0, std::uint64_t b = 0) {
    std::uint64_t x = seed ^ 0x243f6a8885a308d3ull;
    x = splitmix64(x) ^ static_cast<std::uint64_t>(what);
    x = splitmix64(x) ^ a;
    x = splitmix64(x) ^ b;
    return SkyRng(splitmix64(x));
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

}  // namespace starsift::sky
