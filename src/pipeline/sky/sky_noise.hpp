// SPDX-License-Identifier: LGPL-2.1-or-later
// Photon (shot) noise: Poisson samples of a pixel's expected electrons.
#pragma once

#include "pipeline/sky/sky_random.hpp"

namespace starsift::sky {

// Above this mean the Poisson distribution is replaced by a Gaussian of the same mean and
// variance (not rounded to whole electrons): its skewness, 1/sqrt(mean), is below 3 % there
// and the read noise and ADU rounding that follow hide the difference.
inline constexpr double kGaussianPoissonMean = 1.0e3;

// One sample of Poisson(mean), in electrons; 0 for mean <= 0. Exact below
// kGaussianPoissonMean: inversion below 10, Hormann's transformed rejection (PTRS, 1993)
// from 10 on; the number of random numbers drawn depends on the values, not on the caller.
double poisson(double mean, SkyRng& rng);

}  // namespace starsift::sky
