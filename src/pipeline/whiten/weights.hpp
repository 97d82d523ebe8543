// SPDX-License-Identifier: LGPL-2.1-or-later
// The whitening weights from the Gram matrix of the history: (R + gamma I) a = r, solved by
// Cholesky in double. Host and device code call the same function, so both backends pick the
// same weights from the same sums.
#pragma once

#include "pipeline/hd.hpp"
#include "pipeline/whiten/cholesky.hpp"

namespace starsift {

struct WhitenWeights {
  int n = 0;                      // weights solved for (0: no history, every weight 0)
  double gamma = 0.0;             // the absolute regularisation used (after any retries)
  double sum_sq = 0.0;            // sum of a_k^2: the noise floor is sqrt(1 + sum_sq)
  bool regularised_more = false;  // gamma had to grow beyond gamma_rel * tr(R) / n to factor
};

// When R + gamma I does not factor (frames identical to working precision and gamma 0, say),
// gamma grows tenfold from at least kWeightsGammaFloor * tr(R) / n, up to this many times,
// before the weights are given up (all 0).
inline constexpr int kWeightsRetries = 8;
inline constexpr double kWeightsGammaFloor = 1e-12;

// gram: the circular Gram matrix, `gram_ld` doubles per row, symmetric. slots[k] is the Gram
// slot of history frame k (k = 0 the most recent), k < n. rhs[k] = r_k (the target frame's
// dot product with history frame k). gamma_rel >= 0. work: n * n doubles. a: n doubles out.
// The system is assembled in history order, so the result does not depend on where in the
// ring the frames sit. Lanes (cholesky.hpp): `lanes` threads may share the solve, each
// calling with its `lane`; all get the same result.
template <class Sync = NoSync>
STARSIFT_HD WhitenWeights solve_whiten_weights(const double* gram, int gram_ld, const int* slots,
                                               int n, const double* rhs, double gamma_rel,
                                               double* work, double* a, int lane = 0, int lanes = 1,
                                               Sync sync = {}) {
  WhitenWeights result{n, 0.0, 0.0, false};
  double trace = 0.0;
  for (int k = 0; k < n; ++k) trace += gram[slots[k] * gram_ld + slots[k]];
  for (int k = lane; k < n; k += lanes) a[k] = 0.0;
  sync();
  if (n == 0 || !(trace > 0.0)) return result;  // an empty or all-zero history predicts 0
  const double scale = trace / n;
  double gamma = gamma_rel * scale;
  for (int attempt = 0; attempt <= kWeightsRetries; ++attempt) {
    for (int i = lane; i < n; i += lanes) {
      for (int j = 0; j <= i; ++j) work[i * n + j] = gram[slots[i] * gram_ld + slots[j]];
      work[i * n + i] += gamma;
      a[i] = rhs[i];
    }
    sync();
    if (cholesky_factor(work, n, n, lane, lanes, sync)) {
      if (lane == 0) cholesky_substitute(work, n, n, a);
      sync();
      result.gamma = gamma;
      for (int k = 0; k < n; ++k) result.sum_sq += a[k] * a[k];
      return result;
    }
    sync();  // every lane has seen the failed pivot before the next attempt rewrites `work`
    result.regularised_more = true;
    const double floor = kWeightsGammaFloor * scale;
    gamma = gamma * 10.0 > floor ? gamma * 10.0 : floor;
  }
  for (int k = lane; k < n; k += lanes) a[k] = 0.0;
  sync();
  result.gamma = gamma;
  return result;
}

}  // namespace starsift
