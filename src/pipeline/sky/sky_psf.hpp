// SPDX-License-Identifier: LGPL-2.1-or-later
// The point spread function of the synthetic sky and how a point source lands on pixels:
// the PSF integrated over each pixel's area (exactly with erf for the Gaussian, by 5x5
// sub-pixel sampling near the core of a Moffat), within a square stamp around the source.
#pragma once

#include "pipeline/sky/sky_params.hpp"

namespace starsift::sky {

// A full frame of expected electrons, one float per pixel, rows `width` apart.
struct Plane {
  float* data = nullptr;
  int width = 0;
  int height = 0;

  float* row(int y) const { return data + static_cast<std::ptrdiff_t>(y) * width; }
};

// Rows [begin, end) of a plane: the part one thread renders.
struct RowBand {
  int begin = 0;
  int end = 0;
};

class Psf {
 public:
  // Contributions below this many electrons per pixel fall outside the stamp.
  static constexpr double kStampCutoff = 0.01;
  // The largest stamp half-side in pixels; beyond it even the brightest wings are dropped.
  static constexpr int kMaxStampRadius = 64;

  Psf(PsfKind kind, double fwhm, double moffat_beta);

  PsfKind kind() const noexcept { return kind_; }
  double fwhm() const noexcept { return fwhm_; }

  // The fraction of a source's flux that falls in its brightest pixel when the source sits
  // on that pixel's centre: peak pixel signal = flux * peak_fraction().
  double peak_fraction() const noexcept { return peak_fraction_; }

  // Half-side of the square stamp that holds a source of `flux` e- down to kStampCutoff.
  int stamp_radius(double flux) const noexcept;

  // Adds a source of `flux` e- centred at (cx, cy) to the rows of `band` in `plane`, within
  // `radius` pixels (clipped to the frame). Thread-safe on disjoint bands; allocates nothing.
  void add(Plane plane, RowBand band, double cx, double cy, double flux, int radius) const;

 private:
  double moffat_density(double r2) const noexcept;  // per unit flux and pixel area
  void add_gaussian(Plane plane, int x0, int x1, int y0, int y1, double cx, double cy,
                    double flux) const;
  void add_moffat(Plane plane, int x0, int x1, int y0, int y1, double cx, double cy,
                  double flux) const;

  PsfKind kind_;
  double fwhm_;
  double sigma_ = 0.0;         // Gaussian
  double alpha_ = 0.0;         // Moffat core width
  double beta_ = 0.0;          // Moffat wing exponent
  double moffat_norm_ = 0.0;   // (beta - 1) / (pi alpha^2): unit flux
  double peak_density_ = 0.0;  // the PSF at r = 0 per unit flux and pixel area
  double peak_fraction_ = 0.0;
};

}  // namespace starsift::sky
