// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/detect/psf_kernel.hpp"

#include <algorithm>
#include <cmath>

namespace starsift {

namespace {

// A unit-flux source on the centre of a (2 r + 1)^2 stamp, rendered by the sky's own code.
std::vector<float> render_stamp(const sky::Psf& psf, int radius) {
  const int side = 2 * radius + 1;
  std::vector<float> stamp(static_cast<std::size_t>(side) * side, 0.0f);
  const sky::Plane plane{stamp.data(), side, side};
  psf.add(plane, sky::RowBand{0, side}, radius, radius, 1.0, radius);
  return stamp;
}

}  // namespace

PsfKernel make_psf_kernel(const sky::Psf& psf, double relative_cutoff) {
  // The reference: a stamp wide enough to hold all of P^2 (Moffat wings included).
  const int full_radius =
      std::min(sky::Psf::kMaxStampRadius, static_cast<int>(std::ceil(8.0 * psf.fwhm())) + 1);
  const std::vector<float> full = render_stamp(psf, full_radius);
  const int full_side = 2 * full_radius + 1;

  PsfKernel k;
  // Rings out to the stamp's corners, sqrt(2) full_radius away.
  const auto corner = static_cast<std::size_t>(std::hypot(full_radius, full_radius));
  k.ring.assign(corner + 2, 0.0);
  for (int y = 0; y < full_side; ++y) {
    for (int x = 0; x < full_side; ++x) {
      const double v = full[static_cast<std::size_t>(y) * full_side + x];
      k.full_norm2 += v * v;
      const auto r = static_cast<std::size_t>(std::hypot(x - full_radius, y - full_radius));
      k.ring[r] = std::max(k.ring[r], v);
    }
  }
  k.peak = full[static_cast<std::size_t>(full_radius) * full_side + full_radius];
  k.radius = 1;
  for (int r = 1; r <= full_radius; ++r) {
    if (k.ring[static_cast<std::size_t>(r)] >= relative_cutoff * k.peak) k.radius = r;
  }
  // Pixels out to the last ring kept: a square stamp of that half-side.
  const int side = k.side();
  k.taps.resize(static_cast<std::size_t>(side) * side);
  for (int y = 0; y < side; ++y) {
    for (int x = 0; x < side; ++x) {
      const float v = full[static_cast<std::size_t>(y + full_radius - k.radius) * full_side + x +
                           full_radius - k.radius];
      k.taps[static_cast<std::size_t>(y) * side + x] = v;
      k.norm2 += static_cast<double>(v) * v;
    }
  }
  return k;
}

double reach_radius(const PsfKernel& kernel, double flux, double level) {
  for (std::size_t r = kernel.ring.size(); r-- > 0;) {
    if (flux * kernel.ring[r] >= level) return static_cast<double>(r + 1);
  }
  return 0.0;
}

}  // namespace starsift
