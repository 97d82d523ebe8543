// SPDX-License-Identifier: LGPL-2.1-or-later
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
#include "pipeline/whiten/despike.hpp"

namespace starsift {

// Width (px) of the Gaussian the correlation peak is shaped into. Measured on star fields
// (tests/whiten, docs/whitening.md): 1.4 px keeps the bias below 0.01 px.
inline constexpr double kPhaseTaperSigma = 1.4;

// Sample (c, r) of an m x m window (`origin` its first sample, `stride` samples per row), or
// the value it falls to where it is a spike (despike_sample(), despike.hpp: its second
// brightest neighbour where it sticks out above it by more than kDespikeRatio times (second
// brightest - faintest), its second faintest where it sticks out below likewise). The shift window
// is filtered with it before its mean and the Hann window are taken: a hot pixel (one bright sample
// fixed on the sensor, broadband in the spectrum and never moving), or two side by side, fall to
// the sky around them, while stars and noise are left as they are. Without it the correlation peak
// of a frame with a few dozen hot pixels stays near the sensor's own position, 0, while the stars
// move (measured: 5 % of a 1.5 px shift). A 3 x 3 median removes hot pixels as well, and clamping
// every sample to its neighbours' range too, but both reshape the stars: their shifts were off by
// up to 0.68 and 0.41 px on sparse 512^2 fields where the unfiltered window's were off by 0.38 px,
// and by up to 0.1 px on the test fields of 128^2. The same float operations on both backends.
STARSIFT_HD float window_despike(const float* origin, long long stride, int c, int r, int m) {
  auto read = [origin, stride](int cc, int rr) { return origin[rr * stride + cc]; };
  return despike_sample(read, c, r, m, m).value;
}

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

// Which correlation peak is the shift. The highest peak of a sparse field's surface can be
// noise: on 512^2 fields of ~50 faint stars the true peak is 0.04-0.08 high and the rest of
// the surface reaches 0.03, so a noise peak now and then wins, tens of pixels away, and would
// become the shift reference (every later frame misregistered). The field moves little from
// one frame to the next, so a peak outside the box of kShiftNearRadius px around the previous
// frame's displacement is taken only when it stands out, kShiftStandOut times the highest
// local maximum inside the box, or when the frame before found it too (within kShiftConfirm
// px: a real jump repeats, a noise peak does not). Otherwise that local maximum is the shift,
// and the frame says so (WhitenStats::shift_rejected). Only local maxima count inside the box:
// the flank of a far peak just outside it is no peak of its own. Real jumps on fields with
// stars stand out by far: a surface peak of 0.3-1 against local maxima of a few hundredths.
inline constexpr int kShiftNearRadius = 2;     // px: the box around the previous shift
inline constexpr double kShiftStandOut = 1.5;  // a far peak's height over the near one's
inline constexpr double kShiftConfirm = 1.0;   // px: two frames' far peaks agree

// The whole pixel nearest to a displacement.
STARSIFT_HD int shift_pixel(double d) {
  return static_cast<int>(floor(d + 0.5));
}

// True when the peak's sample (ox, oy) (signed) lies outside the box around the previous
// frame's displacement (px, py), both against the same reference.
STARSIFT_HD bool shift_peak_far(int ox, int oy, double px, double py) {
  const int ex = ox - shift_pixel(px), ey = oy - shift_pixel(py);
  return ex > kShiftNearRadius || ex < -kShiftNearRadius || ey > kShiftNearRadius ||
         ey < -kShiftNearRadius;
}

// Whether a far peak of height `far` is taken: it stands out from the highest local maximum
// `near` in the box around the previous displacement (0 when there is none), or `confirmed`
// (the previous frame found it too).
STARSIFT_HD bool shift_far_peak_taken(double far, double near, bool confirmed) {
  return confirmed || far >= kShiftStandOut * near;
}

// True when the far peak's shift (sx, sy) (on the first frame's grid) agrees with the one the
// previous frame set aside (cx, cy), `candidate` telling whether it set one aside.
STARSIFT_HD bool shift_far_peak_confirmed(bool candidate, double sx, double sy, double cx,
                                          double cy) {
  return candidate && hypot(sx - cx, sy - cy) <= kShiftConfirm;
}

// The highest local maximum (a sample >= its 8 neighbours) of the (2 kShiftNearRadius + 1)^2
// box around the whole pixel nearest to (px, py) on a periodic correlation surface (`at(x, y)`
// takes any integer x, y within one period of the window), the first in row order among
// equals; its signed position in (ix, iy). False when the box holds none.
template <class At>
STARSIFT_HD bool shift_near_peak(const At& at, double px, double py, int& ix, int& iy) {
  const int cx = shift_pixel(px);
  const int cy = shift_pixel(py);
  bool found = false;
  float best = 0.0f;
  for (int y = cy - kShiftNearRadius; y <= cy + kShiftNearRadius; ++y) {
    for (int x = cx - kShiftNearRadius; x <= cx + kShiftNearRadius; ++x) {
      const float v = at(x, y);
      if (found && !(v > best)) continue;
      bool local = true;
      for (int dy = -1; dy <= 1 && local; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          if ((dx != 0 || dy != 0) && at(x + dx, y + dy) > v) {
            local = false;
            break;
          }
      if (!local) continue;
      found = true;
      best = v;
      ix = x;
      iy = y;
    }
  }
  return found;
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
