// SPDX-License-Identifier: LGPL-2.1-or-later
// The matched filter: correlate a residual with the PSF and divide by the noise of that sum,
// so the output is a signal-to-noise ratio. With independent pixels of variance v(p), the sum
// (K * rho)(p) = sum_q K(q) rho(p + q) has variance (K^2 * v)(p) = sum_q K(q)^2 v(p + q);
// with one sigma for the frame, sigma^2 sum K^2. A point source of flux F on a pixel centre,
// on noise of sigma, gives F * sqrt(sum K^2) / sigma at its pixel: the ideal single-frame SNR.
// Outside the frame the residual and the variance count as 0.
#pragma once

#include "pipeline/detect/psf_kernel.hpp"
#include "pipeline/plane.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

// out(p) = sum over the stamp of taps(q) in(p + q), zero outside `in`; `radius` as PsfKernel.
// `in` and `out` of one size, distinct.
void correlate(const Plane& in, const std::vector<float>& taps, int radius, Plane& out,
               ThreadPool& pool);

class MatchedFilter {
 public:
  MatchedFilter(const PsfKernel& kernel, int width, int height);

  const PsfKernel& kernel() const noexcept { return kernel_; }

  // snr = (K * residual) / sqrt(K^2 * variance), 0 where no pixel of the stamp has a variance.
  void snr_with_variance(const Plane& residual, const Plane& variance, Plane& snr,
                         ThreadPool& pool);
  // snr = (K * residual) / (sigma sqrt(sum K^2)); sigma > 0.
  void snr_with_sigma(const Plane& residual, double sigma, Plane& snr, ThreadPool& pool);

 private:
  PsfKernel kernel_;
  std::vector<float> squared_;  // K^2
  Plane variance_sum_;
};

}  // namespace starsift
