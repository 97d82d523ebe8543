// The arithmetic of shift estimation that does not depend on the FFT library: the analysis
// window, the spectral taper and the sub-pixel peak. Host/device code, so cuFFT-based and
// FFTW-based estimators weight and refine identically.
//
// Why a taper: the normalised cross-power spectrum of two shifted frames is a pure phase ramp,
// whose inverse transform is a sampled sinc (Dirichlet) peak. Sinc samples beside the peak can
// be negative and are badly fitted by a parabola (biased towards whole pixels). Multiplying
// the spectrum by a Gaussian exp(-2 pi^2 s^2 |f|^2) turns the peak into a sampled Gaussian of
// width s pixels, whose logarithm is exactly a parabola: a three-point fit on the log per axis
// is then unbiased (up to the Gaussian's tail cut at Nyquist, exp(-2 pi^2 s^2 / 4) = 5e-5 at
// s = 1.4). The taper also down-weights the high frequencies, where a star field's phase is
// mostly noise.
#pragma once

#include <cmath>

#include "pipeline/hd.hpp"

namespace starsift {

// Width (px) of the Gaussian the correlation peak is shaped into. Measured on star fields
// (tests/whiten, docs/whitening.md): 1.4 px keeps the bias below 0.01 px.
inline constexpr double kPhaseTaperSigma = 1.4;

// Periodic Hann weight of sample i of an n-sample window.
STARSIFT_HD float hann_weight(int i, int n) {
  return static_cast<float>(0.5 - 0.5 * cos(6.283185307179586 * i / n));
}

// The taper at frequency index (kx, ky) of an n x n transform, indices taken as signed
// (k > n / 2 stands for k - n).
STARSIFT_HD float phase_taper(int kx, int ky, int n) {
  const double fx = (kx > n / 2 ? kx - n : kx) / static_cast<double>(n);
  const double fy = (ky > n / 2 ? ky - n : ky) / static_cast<double>(n);
  const double s = kPhaseTaperSigma;
  return static_cast<float>(exp(-2.0 * 9.869604401089358 * s * s * (fx * fx + fy * fy)));
}

// The sub-pixel offset (-0.5..0.5) of a peak from its samples at -1, 0, +1: the vertex of the
// parabola through their logarithms (exact for a Gaussian). When a neighbour is not positive
// (no Gaussian there) the vertex of the parabola through the values themselves is used.
STARSIFT_HD double refine_peak(double minus, double centre, double plus) {
  double a = minus, b = centre, c = plus;
  if (minus > 0.0 && centre > 0.0 && plus > 0.0) {
    a = log(minus);
    b = log(centre);
    c = log(plus);
  }
  const double curvature = a - 2.0 * b + c;
  if (!(curvature < 0.0)) return 0.0;  // not a maximum (flat or NaN): stay on the sample
  const double offset = 0.5 * (a - c) / curvature;
  return offset < -0.5 ? -0.5 : (offset > 0.5 ? 0.5 : offset);
}

}  // namespace starsift
