// SPDX-License-Identifier: LGPL-2.1-or-later
// The streak the detection tests draw (line channel on the CPU, and CUDA against the CPU): a
// segment of uniform amplitude blurred by a Gaussian PSF of sigma 0.85 px (FWHM 2).
#pragma once

#include <algorithm>
#include <cmath>

namespace starsift::test {

inline constexpr double kPsfSigma = 0.85;  // px: the PSF of the tests' streaks and points

struct Streak {
  double cx, cy, theta, length, amplitude;  // centre, angle from +x towards +y, px, amplitude
};

// The streak's value at pixel (x, y): its distance to the segment, along it beyond the half
// length and across it, through the PSF.
inline double streak_at(const Streak& s, double x, double y) {
  const double dx = x - s.cx, dy = y - s.cy;
  const double along = dx * std::cos(s.theta) + dy * std::sin(s.theta);
  const double across = -dx * std::sin(s.theta) + dy * std::cos(s.theta);
  const double beyond = std::max(0.0, std::abs(along) - s.length / 2);
  return s.amplitude * std::exp(-(across * across + beyond * beyond) / (2 * kPsfSigma * kPsfSigma));
}

}  // namespace starsift::test
