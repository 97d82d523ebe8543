// SPDX-License-Identifier: LGPL-2.1-or-later
// Cholesky factorisation and solve of a small symmetric positive definite system, in double,
// callable from host and device code: the whitening weights are solved on the GPU (one thread)
// so a frame needs no host round trip, and on the CPU with the very same arithmetic.
#pragma once

#include <cmath>

#include "pipeline/hd.hpp"

namespace starsift {

// Threads sharing one small solve (the GPU runs it on a warp): `lane` of `count`, and `sync`
// orders their memory between steps. One lane with a no-op sync is the serial form; every
// element is computed by the same operations either way, so the results are the same.
struct NoSync {
  STARSIFT_HD void operator()() const {}
};

// Factors the n x n matrix `a` (row-major, `lda` doubles per row; only the lower triangle is
// read) in place into L with A = L L^T, L in the lower triangle. Returns false when a pivot is
// not positive (A is not positive definite to working precision); `a` is then partly
// overwritten. Lanes: each computes the pivot (reads only), the rows below it are shared out.
template <class Sync = NoSync>
STARSIFT_HD bool cholesky_factor(double* a, int n, int lda, int lane = 0, int lanes = 1,
                                 Sync sync = {}) {
  for (int j = 0; j < n; ++j) {
    double d = a[j * lda + j];
    for (int k = 0; k < j; ++k) d -= a[j * lda + k] * a[j * lda + k];
    if (!(d > 0.0)) return false;  // also refuses NaN
    const double ljj = sqrt(d);
    sync();  // every lane has read the pivot's row before it changes
    if (lane == 0) a[j * lda + j] = ljj;
    for (int i = j + 1 + lane; i < n; i += lanes) {
      double s = a[i * lda + j];
      for (int k = 0; k < j; ++k) s -= a[i * lda + k] * a[j * lda + k];
      a[i * lda + j] = s / ljj;
    }
    sync();
  }
  return true;
}

// Solves L L^T x = b with L from cholesky_factor(); `b` becomes x.
STARSIFT_HD void cholesky_substitute(const double* l, int n, int lda, double* b) {
  for (int i = 0; i < n; ++i) {  // L y = b
    double s = b[i];
    for (int k = 0; k < i; ++k) s -= l[i * lda + k] * b[k];
    b[i] = s / l[i * lda + i];
  }
  for (int i = n - 1; i >= 0; --i) {  // L^T x = y
    double s = b[i];
    for (int k = i + 1; k < n; ++k) s -= l[k * lda + i] * b[k];
    b[i] = s / l[i * lda + i];
  }
}

// A x = b in place (`a` becomes L, `b` becomes x). False when A is not positive definite.
STARSIFT_HD bool cholesky_solve(double* a, int n, int lda, double* b) {
  if (!cholesky_factor(a, n, lda)) return false;
  cholesky_substitute(a, n, lda, b);
  return true;
}

}  // namespace starsift
