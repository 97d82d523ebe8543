// SPDX-License-Identifier: LGPL-2.1-or-later
// Per-object sums over the pixels of one detected object, and the record they make. One
// definition for the CPU reference and the CUDA kernels: the CPU adds pixels in raster order,
// the GPU in its own order, so records agree to the rounding of the sums (doubles).
#pragma once

#include <cmath>
#include <cstdint>

#include "pipeline/detect/catalogue.hpp"
#include "pipeline/hd.hpp"

namespace starsift {

struct ObjectSums {
  std::uint32_t npix = 0;
  std::int32_t xmin = 0x7fffffff, xmax = -1, ymin = 0x7fffffff, ymax = -1;
  // r: the value above the background; v: the pixel's noise variance.
  double flux = 0, var = 0;
  double rx = 0, ry = 0, rxx = 0, ryy = 0, rxy = 0;  // sum r x, r y, r x^2, r y^2, r x y
  double vx = 0, vy = 0, vxx = 0, vyy = 0;           // the same weighted by v
  double ux = 0, uy = 0, uxx = 0, uyy = 0, uxy = 0;  // unweighted (flux <= 0)
  float peak = -HUGE_VALF;
  std::int32_t xpeak = 0, ypeak = 0;
};

// Adds the pixel (x, y) of value above background r and variance v. A pixel equal to the peak
// becomes the peak only when it comes first in raster order, so the order of adding does not
// matter.
STARSIFT_HD void add_pixel(ObjectSums& s, int x, int y, float r, float v) {
  ++s.npix;
  s.xmin = x < s.xmin ? x : s.xmin;
  s.xmax = x > s.xmax ? x : s.xmax;
  s.ymin = y < s.ymin ? y : s.ymin;
  s.ymax = y > s.ymax ? y : s.ymax;
  const double dx = x, dy = y, dr = r, dv = v;
  s.flux += dr;
  s.var += dv;
  s.rx += dr * dx;
  s.ry += dr * dy;
  s.rxx += dr * dx * dx;
  s.ryy += dr * dy * dy;
  s.rxy += dr * dx * dy;
  s.vx += dv * dx;
  s.vy += dv * dy;
  s.vxx += dv * dx * dx;
  s.vyy += dv * dy * dy;
  s.ux += dx;
  s.uy += dy;
  s.uxx += dx * dx;
  s.uyy += dy * dy;
  s.uxy += dx * dy;
  if (r > s.peak || (r == s.peak && (y < s.ypeak || (y == s.ypeak && x < s.xpeak)))) {
    s.peak = r;
    s.xpeak = x;
    s.ypeak = y;
  }
}

// The record of an object of sums `s` with dense id `id`, in a frame of width x height.
STARSIFT_HD DetectedObject finalize_object(const ObjectSums& s, std::uint32_t id, int width,
                                           int height) {
  DetectedObject o;
  o.id = id;
  o.npix = s.npix;
  o.xmin = s.xmin;
  o.xmax = s.xmax;
  o.ymin = s.ymin;
  o.ymax = s.ymax;
  o.flux = static_cast<float>(s.flux);
  o.flux_err = static_cast<float>(sqrt(s.var));
  o.peak = s.peak;
  o.xpeak = s.xpeak;
  o.ypeak = s.ypeak;
  std::uint32_t flags = 0;
  if (s.xmin == 0 || s.ymin == 0 || s.xmax == width - 1 || s.ymax == height - 1) {
    flags |= kObjectTouchesEdge;
  }
  // Flux-weighted moments, or unweighted ones when the flux is not positive, or when pixels of
  // both signs (the line channel's, near the background) make the weighted ones no centroid
  // within the box or no variance (a negative one, whose ellipse would be NaN).
  double w = s.flux, xc = s.rx / w, yc = s.ry / w;
  double x2 = s.rxx / w - xc * xc, y2 = s.ryy / w - yc * yc, xy = s.rxy / w - xc * yc;
  if (!(s.flux > 0.0) || !(xc >= s.xmin && xc <= s.xmax && yc >= s.ymin && yc <= s.ymax) ||
      !(x2 >= 0.0 && y2 >= 0.0)) {
    flags |= kObjectNoFlux;
    w = s.npix;
    xc = s.ux / w;
    yc = s.uy / w;
    x2 = s.uxx / w - xc * xc;
    y2 = s.uyy / w - yc * yc;
    xy = s.uxy / w - xc * yc;
  }
  // Source Extractor's guard: a line or a single pixel has (nearly) singular moments; the
  // 1/12 of a uniform pixel keeps a and b meaningful.
  if (x2 * y2 - xy * xy < 1.0 / 144.0) {
    x2 += 1.0 / 12.0;
    y2 += 1.0 / 12.0;
    flags |= kObjectSingular;
  }
  o.x = static_cast<float>(xc);
  o.y = static_cast<float>(yc);
  if (w != 0.0) {
    // sum v (x - xc)^2 = vxx - 2 xc vx + xc^2 var
    const double ex = s.vxx - 2.0 * xc * s.vx + xc * xc * s.var;
    const double ey = s.vyy - 2.0 * yc * s.vy + yc * yc * s.var;
    o.x_err = static_cast<float>(sqrt(ex > 0.0 ? ex : 0.0) / fabs(w));
    o.y_err = static_cast<float>(sqrt(ey > 0.0 ? ey : 0.0) / fabs(w));
  }
  o.x2 = static_cast<float>(x2);
  o.y2 = static_cast<float>(y2);
  o.xy = static_cast<float>(xy);
  const double half_diff = 0.5 * (x2 - y2);
  const double root = sqrt(half_diff * half_diff + xy * xy);
  const double mean = 0.5 * (x2 + y2);
  const double a = sqrt(mean + root);
  const double b2 = mean - root;
  const double b = sqrt(b2 > 0.0 ? b2 : 0.0);
  double theta = 0.5 * atan2(2.0 * xy, x2 - y2);  // in (-pi/2, pi/2]
  o.a = static_cast<float>(a);
  o.b = static_cast<float>(b);
  o.theta = static_cast<float>(theta);
  o.elongation = b > 0.0 ? static_cast<float>(a / b) : 0.0f;
  const double l2 = 12.0 * (a * a - b * b);
  const double length = sqrt(l2 > 0.0 ? l2 : 0.0);
  o.length = static_cast<float>(length);
  const double hx = 0.5 * length * cos(theta), hy = 0.5 * length * sin(theta);
  o.x_start = static_cast<float>(xc - hx);
  o.y_start = static_cast<float>(yc - hy);
  o.x_end = static_cast<float>(xc + hx);
  o.y_end = static_cast<float>(yc + hy);
  o.flags = flags;
  o.track = -1;
  return o;
}

}  // namespace starsift
