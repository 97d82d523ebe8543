// SPDX-License-Identifier: LGPL-2.1-or-later
// A Gaussian blur whose cost does not grow with sigma: the recursive (IIR) filter of Young,
// van Vliet and van Ginkel (2002), third order, run forward then backward along each axis.
// Per sample and axis: 8 multiply-adds whatever sigma. Each line is first padded through the
// border mode by kPadSigmas sigma on each side (so every border mode is honoured, and the
// recursion starts far enough away that its start-up error has died out), the forward pass
// starts in the steady state of the first padded sample and the backward pass in that of the
// last.
//
// It approximates the Gaussian, by a few per cent: against the exact one (gauss_reference,
// tests/gauss/test_gauss_iir.cpp), the worst error on a point source is 5.0 % of the peak at
// sigma 3, 3.3 % at 10, 1.8 % at 25 and 4.3 % at 50; on noise 1.2-1.6 % at sigma 3 and
// 0.3-0.5 % from 10 up. Not yet the accuracy a user can forget about: a higher-order
// recursion (Deriche's fourth order, or better-fitted coefficients) is the next step. For
// small sigma (below kMinSigma) the direct sums of GaussCpu are both exact and cheap.
#pragma once

#include <vector>

#include "pipeline/gauss/params.hpp"
#include "pipeline/image.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

// The recursion's coefficients for one sigma: w[n] = B x[n] + (b1 w[n-1] + b2 w[n-2] +
// b3 w[n-3]) / b0, and the same backward.
struct YvvCoefficients {
  double b0 = 1, b1 = 0, b2 = 0, b3 = 0, B = 1;
};
YvvCoefficients yvv_coefficients(double sigma);

class GaussIir {
 public:
  static constexpr double kMinSigma = 3.0;  // below: use GaussCpu
  static constexpr double kPadSigmas = 6.0;

  // Blurs `in` into `out` along both axes with the recursive filter (sigma 0 on an axis:
  // that axis untouched). The radii of `params` are not used: the recursion has none.
  void run(const GaussParams& params, ConstImageView in, ImageView out, ThreadPool& pool);

 private:
  std::vector<float> rows_;  // the frame as float after the pass along x
};

}  // namespace starsift
