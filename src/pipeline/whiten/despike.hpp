// SPDX-License-Identifier: LGPL-2.1-or-later
// The spike test of one sample against its 3 x 3 neighbourhood: the rule behind the shift
// window's filter (window_despike(), phase_peak.hpp) and whitening's input despike
// (`despike`, reference.hpp). Host/device code: both backends decide with the same float
// operations.
#pragma once

#include <cmath>

#include "pipeline/hd.hpp"

namespace starsift {

// How far a sample must stick out of its neighbourhood to be a spike: beyond the second
// brightest (faintest) neighbour by this many times the spread of the rest. A Gaussian star's
// core exceeds its second brightest neighbour by at most ~2 times that spread from FWHM 2 px
// up (3.3 times at FWHM 1.5 px); a hot pixel on the sky by its level over a few sigma of
// noise.
inline constexpr float kDespikeRatio = 4.0f;

// What despike_sample() found: whether the sample is a spike, and the value it falls to (its
// second brightest neighbour above, its second faintest below; the sample itself otherwise).
struct DespikedSample {
  float value = 0.0f;
  bool spike = false;
};

// The decision of despike_sample() from the sample and its neighbours' two brightest (hi1 >=
// hi2) and two faintest (lo1 <= lo2).
STARSIFT_HD DespikedSample despike_decide(float self, float hi1, float hi2, float lo1, float lo2) {
  if (self - hi2 > kDespikeRatio * (hi2 - lo1)) return {hi2, true};
  if (lo2 - self > kDespikeRatio * (hi1 - lo2)) return {lo2, true};
  return {self, false};
}

// Sample (c, r) of a w x h plane, `read(cc, rr)` giving any sample inside it. A spike sticks
// out above its second brightest neighbour by more than kDespikeRatio times (second brightest
// - faintest), or below its second faintest neighbour by more than kDespikeRatio times
// (brightest - second faintest). Neighbours: the finite samples of the 3 x 3 box inside the
// plane; with fewer than 3, or where the sample itself is not finite, it is no spike. Taking
// the second brightest (faintest) makes both of two hot pixels side by side spikes. Gaussian
// noise alone is a spike at ~1.1e-4 of the samples with 8 neighbours, ~1 % with 3 or 5.
template <class Read>
STARSIFT_HD DespikedSample despike_sample(const Read& read, int c, int r, int w, int h) {
  const float self = read(c, r);
  if (!(self - self == 0.0f)) return {self, false};  // not finite
  float hi1 = -INFINITY, hi2 = -INFINITY, lo1 = INFINITY, lo2 = INFINITY;
  int count = 0;
  for (int dy = -1; dy <= 1; ++dy) {
    const int rr = r + dy;
    if (rr < 0 || rr >= h) continue;
    for (int dx = -1; dx <= 1; ++dx) {
      const int cc = c + dx;
      if ((dx == 0 && dy == 0) || cc < 0 || cc >= w) continue;
      const float s = read(cc, rr);
      if (!(s - s == 0.0f)) continue;
      ++count;
      // The two largest and two smallest so far, without branches on the data (selections
      // only: the same values as a sort).
      const float below_hi1 = s < hi1 ? s : hi1;
      hi2 = below_hi1 > hi2 ? below_hi1 : hi2;
      hi1 = s > hi1 ? s : hi1;
      const float above_lo1 = s > lo1 ? s : lo1;
      lo2 = above_lo1 < lo2 ? above_lo1 : lo2;
      lo1 = s < lo1 ? s : lo1;
    }
  }
  if (count < 3) return {self, false};
  return despike_decide(self, hi1, hi2, lo1, lo2);
}

// The two largest (hi1 >= hi2) and two smallest (lo1 <= lo2) of eight samples, by `larger`
// and `smaller` (max and min; the order of the eight does not matter).
struct EightExtremes {
  float hi1, hi2, lo1, lo2;
};
template <class Larger, class Smaller>
STARSIFT_HD EightExtremes extremes_of_eight(const float (&n)[8], Larger larger, Smaller smaller) {
  EightExtremes e;
  e.hi1 = n[0] > n[1] ? n[0] : n[1];
  e.hi2 = n[0] > n[1] ? n[1] : n[0];
  e.lo1 = e.hi2;
  e.lo2 = e.hi1;
#if !defined(__CUDACC__)
#pragma GCC unroll 8  // unrolled, so that a row loop around it vectorises
#endif
  for (int i = 2; i < 8; ++i) {
    const float s = n[i];
    e.hi2 = larger(e.hi2, smaller(s, e.hi1));
    e.hi1 = larger(e.hi1, s);
    e.lo2 = smaller(e.lo2, larger(s, e.lo1));
    e.lo1 = smaller(e.lo1, s);
  }
  return e;
}

struct FloatMax {
  STARSIFT_HD float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct FloatMin {
  STARSIFT_HD float operator()(float a, float b) const { return fminf(a, b); }
};

// despike_sample() for a sample whose eight neighbours all lie inside the plane and are finite
// (an interior sample of an integer frame): the same two brightest and two faintest, found
// with min/max only (`n` holds the neighbours; their order does not matter), so the same
// result.
STARSIFT_HD DespikedSample despike_inner(float self, const float (&n)[8]) {
  const EightExtremes e = extremes_of_eight(n, FloatMax{}, FloatMin{});
  return despike_decide(self, e.hi1, e.hi2, e.lo1, e.lo2);
}

}  // namespace starsift
