// SPDX-License-Identifier: LGPL-2.1-or-later
// The coefficients of Deriche's fourth-order recursive Gaussian (R. Deriche, "Recursively
// implementing the Gaussian and its derivatives", 1993), shared by the CPU recursion
// (GaussIir) and the CUDA one (src/cuda/gauss): the causal and anticausal recursions for one
// sigma, their steady-state gains, and the scale that makes the whole pass a constant
// unchanged.
#pragma once

namespace starsift {

// Deriche's fourth-order causal and anticausal recursions for one sigma, and the gains.
struct DericheCoefficients {
  double n0 = 1, n1 = 0, n2 = 0, n3 = 0;  // causal numerator
  double m1 = 0, m2 = 0, m3 = 0, m4 = 0;  // anticausal numerator
  double d1 = 0, d2 = 0, d3 = 0, d4 = 0;  // the common denominator
  double causal_gain = 1, anticausal_gain = 0, scale = 1;
};
// sigma > 0; for sigma <= 0 the identity (n0 = 1, nothing else).
DericheCoefficients deriche_coefficients(double sigma);

}  // namespace starsift
