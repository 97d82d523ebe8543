// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/sky/sky_noise.hpp"

#include <cmath>

namespace starsift::sky {

namespace {

// log(k!) exactly from a table for small k, else Stirling's series (error < 1e-12 from
// k = 7 on). std::lgamma would do, but glibc's writes the global `signgam`, a data race when
// rows are rendered on several threads.
double log_factorial(double k) {
  static constexpr double kTable[] = {
      0.0,                 // 0!
      0.0,                 // 1!
      0.6931471805599453,  // 2!
      1.791759469228055,   // 3!
      3.1780538303479458,  // 4!
      4.787491742782046,   // 5!
      6.579251212010101,   // 6!
  };
  if (k < 7.0) return kTable[static_cast<int>(k)];
  const double x = k + 1.0;  // log(k!) = lgamma(k + 1)
  const double x2 = x * x;
  return (x - 0.5) * std::log(x) - x + 0.9189385332046728 +
         (1.0 / 12.0 - (1.0 / 360.0 - 1.0 / (1260.0 * x2)) / x2) / x;
}

// Sequential inversion: cheap while the mean is small (about mean + 1 steps).
double poisson_inversion(double mean, SkyRng& rng) {
  const double u = rng.uniform();
  double p = std::exp(-mean);
  double cumulative = p;
  double k = 0.0;
  while (u > cumulative && p > 0.0) {
    k += 1.0;
    p *= mean / k;
    cumulative += p;
  }
  return k;
}

// W. Hormann, "The transformed rejection method for generating Poisson random variables",
// Insurance: Mathematics and Economics 12 (1993), algorithm PTRS; valid for mean >= 10.
double poisson_ptrs(double mean, SkyRng& rng) {
  const double slam = std::sqrt(mean);
  const double b = 0.931 + 2.53 * slam;
  const double a = -0.059 + 0.02483 * b;
  const double invalpha = 1.1239 + 1.1328 / (b - 3.4);
  const double vr = 0.9277 - 3.6224 / (b - 2.0);
  for (;;) {
    const double u = rng.uniform() - 0.5;
    const double v = rng.uniform();
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2.0 * a / us + b) * u + mean + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0.0 || (us < 0.013 && v > us)) continue;
    // The slow test (about one draw in ten): its logarithms only here.
    if (std::log(v) + std::log(invalpha) - std::log(a / (us * us) + b) <=
        -mean + k * std::log(mean) - log_factorial(k)) {
      return k;
    }
  }
}

}  // namespace

double poisson(double mean, SkyRng& rng) {
  if (!(mean > 0.0)) return 0.0;
  if (mean < 10.0) return poisson_inversion(mean, rng);
  if (mean < kGaussianPoissonMean) return poisson_ptrs(mean, rng);
  return mean + std::sqrt(mean) * rng.normal();
}

}  // namespace starsift::sky
