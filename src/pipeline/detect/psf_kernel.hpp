// SPDX-License-Identifier: LGPL-2.1-or-later
// The matched filter's template (matched_filter.hpp): a PSF integrated over pixels exactly as
// the synthetic sky renders a point source (the quality benchmark uses the truth's own PSF),
// for a source on a pixel centre, unit flux.
#pragma once

#include <vector>

#include "pipeline/sky/sky_psf.hpp"

namespace starsift {

struct PsfKernel {
  int radius = 0;            // the stamp is (2 radius + 1)^2 pixels, centre at (radius, radius)
  std::vector<float> taps;   // row-major; taps[(radius + dy) * side + radius + dx]
  double norm2 = 0.0;        // sum of taps^2 (the stamp)
  double full_norm2 = 0.0;   // sum of P^2 of the untruncated PSF (a stamp of 8 FWHM radius)
  double peak = 0.0;         // the centre tap: Psf::peak_fraction()
  std::vector<double> ring;  // ring[r]: the largest tap at distance in [r, r + 1), unit flux,
                             // of the untruncated PSF: how far a source of some flux reaches

  int side() const noexcept { return 2 * radius + 1; }
  float at(int dx, int dy) const noexcept { return taps[(radius + dy) * side() + radius + dx]; }
};

// The stamp is the square out to the last ring whose brightest pixel holds at least
// `relative_cutoff` of the peak: 0.01 gives radius 3 (7 x 7) for a Gaussian of FWHM 3,
// keeping all but 1.5e-4 of sum P^2 (the SNR loses 7e-5 of itself).
PsfKernel make_psf_kernel(const sky::Psf& psf, double relative_cutoff = 0.01);

// The smallest radius beyond which a source of `flux` puts less than `level` on any pixel
// (by the kernel's ring profile); 0 when even its peak is below `level`.
double reach_radius(const PsfKernel& kernel, double flux, double level);

}  // namespace starsift
