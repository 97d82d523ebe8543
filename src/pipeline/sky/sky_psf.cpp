// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/sky/sky_psf.hpp"

#include <algorithm>
#include <cmath>

namespace starsift::sky {

namespace {

constexpr double kPi = 3.141592653589793;
constexpr double kFwhmPerSigma = 2.3548200450309493;  // 2 sqrt(2 ln 2)
// A stamp is at most this many pixels across; sized for the stack arrays below.
constexpr int kMaxStampSide = 2 * Psf::kMaxStampRadius + 2;

// Moffat pixels whose centre lies within this many FWHM (plus a pixel) of the source are
// integrated by an n x n midpoint rule. Further out the profile is smooth across a pixel
// and a 2 x 2 Gauss-Legendre rule (exact for cubics) is good to a small fraction of a per
// cent of each pixel's signal.
constexpr double kMoffatSampledFwhm = 2.0;
constexpr double kGaussLegendre2 = 0.28867513459481287;  // 1 / (2 sqrt(3))

// Sub-pixel samples per axis for the Moffat core: more for a narrow PSF, which changes a lot
// across one pixel.
int moffat_samples(double fwhm) {
  return std::clamp(static_cast<int>(std::ceil(12.0 / fwhm)), 5, 25);
}

}  // namespace

Psf::Psf(PsfKind kind, double fwhm, double moffat_beta) : kind_(kind), fwhm_(fwhm) {
  if (kind_ == PsfKind::Gaussian) {
    sigma_ = fwhm_ / kFwhmPerSigma;
    peak_density_ = 1.0 / (2.0 * kPi * sigma_ * sigma_);
    const double edge = std::erf(0.5 / (sigma_ * std::sqrt(2.0)));
    peak_fraction_ = edge * edge;
    return;
  }
  beta_ = moffat_beta;
  alpha_ = fwhm_ / (2.0 * std::sqrt(std::pow(2.0, 1.0 / beta_) - 1.0));
  moffat_norm_ = (beta_ - 1.0) / (kPi * alpha_ * alpha_);
  peak_density_ = moffat_norm_;
  // The central pixel's share by a fine midpoint rule (once, at construction).
  constexpr int kSamples = 64;
  double sum = 0.0;
  for (int j = 0; j < kSamples; ++j) {
    const double dy = (j + 0.5) / kSamples - 0.5;
    for (int i = 0; i < kSamples; ++i) {
      const double dx = (i + 0.5) / kSamples - 0.5;
      sum += moffat_density(dx * dx + dy * dy);
    }
  }
  peak_fraction_ = sum / (kSamples * kSamples);
}

double Psf::moffat_density(double r2) const noexcept {
  return moffat_norm_ * std::exp(-beta_ * std::log1p(r2 / (alpha_ * alpha_)));
}

int Psf::stamp_radius(double flux) const noexcept {
  const double ratio = flux * peak_density_ / kStampCutoff;
  double r = 0.0;
  if (ratio > 1.0) {
    r = kind_ == PsfKind::Gaussian ? sigma_ * std::sqrt(2.0 * std::log(ratio))
                                   : alpha_ * std::sqrt(std::pow(ratio, 1.0 / beta_) - 1.0);
  }
  const int radius = static_cast<int>(std::ceil(std::max(r, fwhm_))) + 1;
  return std::min(radius, kMaxStampRadius);
}

void Psf::add(Plane plane, RowBand band, double cx, double cy, double flux, int radius) const {
  const int x0 = std::max(0, static_cast<int>(std::ceil(cx - radius)));
  const int x1 = std::min(plane.width - 1, static_cast<int>(std::floor(cx + radius)));
  const int y0 = std::max(band.begin, static_cast<int>(std::ceil(cy - radius)));
  const int y1 = std::min(band.end - 1, static_cast<int>(std::floor(cy + radius)));
  if (x0 > x1 || y0 > y1) return;
  if (kind_ == PsfKind::Gaussian) {
    add_gaussian(plane, x0, x1, y0, y1, cx, cy, flux);
  } else {
    add_moffat(plane, x0, x1, y0, y1, cx, cy, flux);
  }
}

// The Gaussian is separable, and its integral over a pixel is a difference of error
// functions per axis: exact, and only (side + 1) erf calls per axis.
void Psf::add_gaussian(Plane plane, int x0, int x1, int y0, int y1, double cx, double cy,
                       double flux) const {
  const double scale = 1.0 / (sigma_ * std::sqrt(2.0));
  double gx[kMaxStampSide];
  double previous = std::erf((x0 - 0.5 - cx) * scale);
  for (int x = x0; x <= x1; ++x) {
    const double next = std::erf((x + 0.5 - cx) * scale);
    gx[x - x0] = 0.5 * (next - previous);
    previous = next;
  }
  previous = std::erf((y0 - 0.5 - cy) * scale);
  for (int y = y0; y <= y1; ++y) {
    const double next = std::erf((y + 0.5 - cy) * scale);
    const double row_flux = flux * 0.5 * (next - previous);
    previous = next;
    float* row = plane.row(y);
    for (int x = x0; x <= x1; ++x) row[x] += static_cast<float>(row_flux * gx[x - x0]);
  }
}

void Psf::add_moffat(Plane plane, int x0, int x1, int y0, int y1, double cx, double cy,
                     double flux) const {
  const int n = moffat_samples(fwhm_);
  const double step = 1.0 / n;
  const double sampled_radius = kMoffatSampledFwhm * fwhm_ + 1.0;
  const double sampled_r2 = sampled_radius * sampled_radius;
  for (int y = y0; y <= y1; ++y) {
    const double dy = y - cy;
    float* row = plane.row(y);
    for (int x = x0; x <= x1; ++x) {
      const double dx = x - cx;
      const double r2 = dx * dx + dy * dy;
      double density;
      if (r2 > sampled_r2) {
        const double ax = dx - kGaussLegendre2, bx = dx + kGaussLegendre2;
        const double ay = dy - kGaussLegendre2, by = dy + kGaussLegendre2;
        density = 0.25 * (moffat_density(ax * ax + ay * ay) + moffat_density(bx * bx + ay * ay) +
                          moffat_density(ax * ax + by * by) + moffat_density(bx * bx + by * by));
      } else {
        double sum = 0.0;
        for (int j = 0; j < n; ++j) {
          const double sy = dy + (j + 0.5) * step - 0.5;
          for (int i = 0; i < n; ++i) {
            const double sx = dx + (i + 0.5) * step - 0.5;
            sum += moffat_density(sx * sx + sy * sy);
          }
        }
        density = sum / (n * n);
      }
      row[x] += static_cast<float>(flux * density);
    }
  }
}

}  // namespace starsift::sky
