// SPDX-License-Identifier: LGPL-2.1-or-later
// Robust noise estimates and the intervals the report quotes.
#pragma once

#include <cstdint>
#include <vector>

namespace starsift::quality {

// 1.4826 x the median absolute deviation from the median: the sigma of a Gaussian, unmoved by
// a few per cent of outliers (star residuals, movers). Reorders `values`; 0 when empty.
double mad_sigma(std::vector<float>& values);

// mad_sigma() for samples of integer ADU, or of half-integers (a difference of integer
// frames, a median of an even count): MAD of such data moves in steps (+-5 % at sigma ~ 10).
// Each sample first gets a uniform in [-0.5, 0.5) added (fixed `seed`), which makes the
// distribution continuous, and that uniform's variance 1/12 is taken off again. Harmless for
// continuous data. Reorders and changes `values`.
double dithered_mad_sigma(std::vector<float>& values, std::uint64_t seed);

// The q-quantile (0..1) by linear interpolation between order statistics. Reorders
// `values`; NaN when empty.
double quantile(std::vector<float>& values, double q);

struct Interval {
  double low = 0.0;
  double high = 0.0;
};

// Wilson score interval of a binomial proportion, `z` standard errors (1.96: 95 %).
Interval wilson_interval(long long successes, long long trials, double z = 1.96);

// Exact (Garwood) central interval of a Poisson mean given `count` events, confidence 1 - alpha.
Interval poisson_interval(long long count, double alpha = 0.05);

// A completeness as the report quotes it: successes / trials and the Wilson 95 % interval.
struct Proportion {
  double value = 0.0;
  Interval interval;
};

// successes / trials with its Wilson 95 % interval. Without trials (a cell no mover crossed):
// 0 and [0, 0], as the report has always printed such a cell, not wilson_interval()'s
// [0, 1]. The harness's cells and the chain's both use it so that their completeness
// columns cannot drift apart.
Proportion proportion(long long successes, long long trials);

// count / exposure's exact Poisson 95 % interval: the interval of `count` scaled by the
// exposure it was counted over (Mpix-frames for false detections, hours for false tracks).
// The caller guards against an empty exposure, as it does for the rate itself.
Interval poisson_rate_interval(long long count, double exposure);

}  // namespace starsift::quality
