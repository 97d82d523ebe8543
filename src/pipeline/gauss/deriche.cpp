// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/gauss/deriche.hpp"

#include <cmath>

namespace starsift {

DericheCoefficients deriche_coefficients(double sigma) {
  if (!(sigma > 0.0)) return {};
  // Deriche (1993): h(x) = sum over k of (a_k cos(w_k x / s) + b_k sin(w_k x / s))
  // exp(-g_k x / s), for x >= 0, mirrored for x < 0.
  const double a[2] = {1.680, -0.6803}, b[2] = {3.735, -0.2598};
  const double g[2] = {1.783, 1.723}, w[2] = {0.6318, 1.997};
  double p[2], q[2], c[2];
  for (int i = 0; i < 2; ++i) {
    const double e = std::exp(-g[i] / sigma);
    const double cw = std::cos(w[i] / sigma), sw = std::sin(w[i] / sigma);
    p[i] = -2.0 * e * cw;
    q[i] = e * e;
    c[i] = e * (b[i] * sw - a[i] * cw);
  }
  DericheCoefficients k;
  k.d1 = p[0] + p[1];
  k.d2 = q[0] + q[1] + p[0] * p[1];
  k.d3 = p[0] * q[1] + p[1] * q[0];
  k.d4 = q[0] * q[1];
  k.n0 = a[0] + a[1];
  k.n1 = c[0] + a[0] * p[1] + c[1] + a[1] * p[0];
  k.n2 = c[0] * p[1] + a[0] * q[1] + c[1] * p[0] + a[1] * q[0];
  k.n3 = c[0] * q[1] + c[1] * q[0];
  k.m1 = k.n1 - k.d1 * k.n0;
  k.m2 = k.n2 - k.d2 * k.n0;
  k.m3 = k.n3 - k.d3 * k.n0;
  k.m4 = -k.d4 * k.n0;
  const double den = 1.0 + k.d1 + k.d2 + k.d3 + k.d4;
  k.causal_gain = (k.n0 + k.n1 + k.n2 + k.n3) / den;
  k.anticausal_gain = (k.m1 + k.m2 + k.m3 + k.m4) / den;
  k.scale = 1.0 / (k.causal_gain + k.anticausal_gain);
  return k;
}

}  // namespace starsift
