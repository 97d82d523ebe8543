// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "app/rng.hpp"

namespace starsift::quality {

namespace {

constexpr double kMadToSigma = 1.482602218505602;  // 1 / Phi^-1(3/4)

double median_of(std::vector<float>& v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  double m = *mid;
  if (v.size() % 2 == 0) m = 0.5 * (m + *std::max_element(v.begin(), mid));
  return m;
}

// P(X <= k) for X ~ Poisson(mean), summed in log space (k may be large).
double poisson_cdf(long long k, double mean) {
  if (mean <= 0.0) return 1.0;
  double sum = 0.0;
  for (long long i = 0; i <= k; ++i) {
    sum += std::exp(-mean + i * std::log(mean) - std::lgamma(static_cast<double>(i) + 1.0));
  }
  return std::min(sum, 1.0);
}

// The mean at which `f(mean)` (monotone decreasing in mean) crosses `target`, by bisection.
template <class F>
double solve_mean(F f, double target, double high) {
  double low = 0.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (low + high);
    (f(mid) > target ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

}  // namespace

double mad_sigma(std::vector<float>& values) {
  if (values.empty()) return 0.0;
  const double m = median_of(values);
  for (float& v : values) v = static_cast<float>(std::fabs(v - m));
  return kMadToSigma * median_of(values);
}

double dithered_mad_sigma(std::vector<float>& values, std::uint64_t seed) {
  app::Rng rng(seed);
  for (float& v : values) v += static_cast<float>(rng.uniform() - 0.5);
  const double s = mad_sigma(values);
  return std::sqrt(std::max(0.0, s * s - 1.0 / 12.0));
}

double quantile(std::vector<float>& values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto i = static_cast<std::size_t>(std::floor(pos));
  const std::size_t j = std::min(i + 1, values.size() - 1);
  return values[i] + (pos - static_cast<double>(i)) * (values[j] - values[i]);
}

Interval wilson_interval(long long successes, long long trials, double z) {
  if (trials <= 0) return {0.0, 1.0};
  const double n = static_cast<double>(trials);
  const double p = static_cast<double>(successes) / n;
  const double z2 = z * z;
  const double centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
  const double half = z * std::sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n)) / (1.0 + z2 / n);
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

Interval poisson_interval(long long count, double alpha) {
  const double k = static_cast<double>(count);
  const double high_bound = 10.0 * (k + 10.0);
  Interval i;
  // Upper: the mean at which seeing <= count events has probability alpha / 2.
  i.high = solve_mean([&](double m) { return poisson_cdf(count, m); }, 0.5 * alpha, high_bound);
  // Lower: the mean at which seeing >= count events has probability alpha / 2.
  i.low = count == 0 ? 0.0
                     : solve_mean([&](double m) { return poisson_cdf(count - 1, m); },
                                  1.0 - 0.5 * alpha, high_bound);
  return i;
}

Proportion proportion(long long successes, long long trials) {
  if (trials <= 0) return {};
  return {static_cast<double>(successes) / static_cast<double>(trials),
          wilson_interval(successes, trials)};
}

Interval poisson_rate_interval(long long count, double exposure) {
  const Interval i = poisson_interval(count);
  return {i.low / exposure, i.high / exposure};
}

}  // namespace starsift::quality
