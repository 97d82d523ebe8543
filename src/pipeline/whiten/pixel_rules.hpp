// SPDX-License-Identifier: LGPL-2.1-or-later
// The per-pixel arithmetic of whitening after the prediction: the noise estimate, the outlier
// test, what is stored in the history, and the output mapping. Host/device code: the CPU
// reference and the CUDA kernels apply these very functions, in float.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "pipeline/hd.hpp"

namespace starsift {

// True for a finite float (not NaN, not +-inf), without <cmath>'s host-only overloads. On the
// host a test of the exponent's bits: the same answer for every float, and loops of it
// vectorise, where GCC keeps a loop with a float comparison (which might trap) scalar.
STARSIFT_HD bool finite_float(float v) {
#if defined(__CUDA_ARCH__)
  return v - v == 0.0f;
#else
  return (std::bit_cast<std::uint32_t>(v) & 0x7f800000u) != 0x7f800000u;
#endif
}

// A sample that carries no usable value: saturated (clipped) or not finite.
STARSIFT_HD bool unusable(float value, float saturation) {
  return !(finite_float(value) && value < saturation);
}

// Whether a camera sample is a measurement: not despiked (its value in x is then its
// neighbours' level, for the shift, the alignment and the history only) and usable.
STARSIFT_HD bool measured(float value, bool despiked, float saturation) {
  return !despiked && !unusable(value, saturation);
}

// A target value as the fit's sums read it: a non-finite sample (always an invalid pixel,
// whose products the fit subtracts again with the excluded pixels') counts as 0, so it cannot
// turn the dense sums into NaN.
STARSIFT_HD double fit_value(float value) {
  return finite_float(value) ? value : 0.0;
}

// What one frame's per-pixel noise rules need, set once per frame (whiten_frame_constants()).
struct WhitenNoiseConstants {
  float alpha = 0.0f;          // weight of this frame's rho^2 in sigma^2; 0: no update
  bool have_sigma = false;     // sigma_{t-1} exists (snr and sigma outputs, the outlier test)
  bool reject_active = false;  // reject: mask or objects, and sigma is trusted (enough frames)
  float reject_k2 = 16.0f;     // reject-sigma squared
  bool objects = false;        // reject: objects (and reject_active): the object test applies
  float object_k2 = 16.0f;     // reject-object-sigma squared
  int reject_run_limit = 0;    // a pixel is not rejected more than this many frames in a row
  // The degrees of freedom of sigma_{t-1} (whiten_sigma_dof()): rho / sigma_{t-1} is Student-t
  // with this many, and the significance outputs write its Gaussian equivalent. 0: no sigma.
  float sigma_dof = 0.0f;
  // wallace_factor(sigma_dof): gaussian_significance()'s factor, the same for every pixel of a
  // frame, worked out once (a division a pixel otherwise).
  float significance_factor = 1.0f;
  // shift-noise squared (px^2) where the frames are aligned (shift: resample), else 0: the
  // significance outputs add registration_variance() to sigma^2.
  float shift_noise2 = 0.0f;
};

// The residual of one camera pixel: the input less the prediction, or 0 where there is no
// prediction yet (`predicted` false) or the input sample carries no measurement (`usable`
// false: saturated or not finite), so clipped stars do not show as residuals.
STARSIFT_HD float pixel_residual(float input, float prediction, bool predicted, bool usable) {
  return predicted && usable ? input - prediction : 0.0f;
}

// The outlier test and the noise update of one camera pixel, given its residual `rho`.
// Returns true when the pixel is rejected (|rho| > k sigma_{t-1}): its sigma is then kept, so
// a mover's own residual does not raise the noise it is measured against, and its run of
// rejections grows. After `reject_run_limit` rejections in a row the change is taken as
// lasting (a new hot pixel, a brightened star) and accepted, so it enters the history and
// sigma rather than staying in the residual for ever. Otherwise sigma^2 moves towards rho^2:
// var += alpha (rho^2 - var). A pixel whose input is not `usable` changes nothing.
// `object`: the pixel lies on an object (reject: objects: a pixel_box_significant() box in its
// 3 x 3 neighbourhood), which rejects it from the history under the same run limit, but not
// from sigma: sigma still takes rho^2 there unless the per-pixel test rejects it. Kept out of
// sigma too, the residuals of bright stars under jitter (significant boxes that come back in
// most frames, each time interrupting the run) were never learnt, and sigma at the stars stayed
// too low (false alarms there set the detection threshold: docs/quality.md).
STARSIFT_HD bool update_pixel_noise(float rho, bool usable, const WhitenNoiseConstants& c,
                                    float& var, unsigned char& run, bool object = false) {
  if (!usable) return false;
  const bool finite = finite_float(rho);
  const float rho2 = rho * rho;
  const bool testing = c.reject_active && finite && run < c.reject_run_limit;
  const bool outlier = testing && rho2 > c.reject_k2 * var;
  if (outlier) {
    ++run;
    return true;
  }
  const bool rejected = testing && object;
  run = rejected ? run + 1 : 0;
  if (finite && c.alpha > 0.0f) var += c.alpha * (rho2 - var);
  return rejected;
}

// The object test of reject: objects at one camera pixel, from the sums over its 3 x 3 box
// (the neighbours inside the frame) of this frame's residuals, `rho_sum`, and of sigma_{t-1}^2,
// `var_sum`: the box sum is significant when rho_sum^2 > k_o^2 var_sum, either sign. The box
// is close to the matched filter of a PSF of FWHM ~3 px, so a blob whose pixels each lie well
// under the per-pixel test (a mover of peak SNR 5 reaches ~10 sigma in the box) is found;
// either sign, like the per-pixel test, so a dip (a mover's ghost) is kept out of the history
// too.
STARSIFT_HD bool pixel_box_significant(float rho_sum, float var_sum,
                                       const WhitenNoiseConstants& c) {
  return c.objects && finite_float(rho_sum) && rho_sum * rho_sum > c.object_k2 * var_sum;
}

// sigma_{t-1} as the outputs use it: 0 until a noise estimate exists.
STARSIFT_HD float pixel_sigma(float var_before, const WhitenNoiseConstants& c) {
  return c.have_sigma ? sqrtf(var_before) : 0.0f;
}

// The variance alignment leaves at a pixel for a registration error of shift-noise px:
// shift_noise2 (|grad b|^2 + (lap b)^2 / 4). The gradient term is ZOGY's astrometric noise (a
// frame aligned delta off leaves delta . grad); the Laplacian's is the resampling's: the
// bicubic rule misses a sampled star's core by an amount that follows its curvature, which a
// gradient, 0 at the peak, does not see. Derivatives by central differences of the prediction b
// on the aligned grid around the pixel's place there (`centre` and its left, right, up and
// down neighbours, clamped at the frame's edges; a neighbour that is not finite reads as the
// centre): b is the scene without the frame's own noise or movers, so the clear sky keeps its
// sigma and a mover does not raise its own. 0 where shift_noise2 is 0 or the centre is not
// finite. Each float operation rounds on its own, alike on every backend.
STARSIFT_HD float registration_variance(float centre, float left, float right, float up, float down,
                                        float shift_noise2) {
  if (!(shift_noise2 > 0.0f) || !finite_float(centre)) return 0.0f;
  const float l = finite_float(left) ? left : centre;
  const float r = finite_float(right) ? right : centre;
  const float u = finite_float(up) ? up : centre;
  const float d = finite_float(down) ? down : centre;
  const float gx = 0.5f * (r - l);
  const float gy = 0.5f * (d - u);
  const float gx2 = gx * gx;
  const float gy2 = gy * gy;
  const float lap = (l + r) + (u + d) - 4.0f * centre;
  const float g2 = gx2 + gy2 + 0.25f * lap * lap;
  return shift_noise2 * g2;
}

// sigma for the significance outputs: sqrt(sigma_{t-1}^2 + the registration's variance); 0
// while there is no sigma, as pixel_sigma().
STARSIFT_HD float significance_sigma(float var_before, float registration_var,
                                     const WhitenNoiseConstants& c) {
  if (!c.have_sigma) return 0.0f;
  const float v = var_before + registration_var;
  return sqrtf(v);
}

// rho / sigma_{t-1}; 0 where sigma is 0 or unknown.
STARSIFT_HD float pixel_snr(float rho, float sigma) {
  return sigma > 0.0f ? rho / sigma : 0.0f;
}

// The Gaussian equivalent of t = rho / sigma_{t-1}, a Student-t variate with `dof` degrees of
// freedom (sigma_{t-1}^2 is an average of earlier rho^2, independent of this frame's rho): the
// z with the same tail probability, by Wallace's (1959) approximation
//   z = sign(t) (8 dof + 1) / (8 dof + 3) sqrt(dof ln(1 + t^2 / dof)),
// whose Gaussian tail probability is within 8 % of t's from 5 degrees of freedom up to |t| = 6,
// within 1 % at |t| = 4.5 from 20 up (tests/whiten/test_whiten_math.cpp). So a threshold in these
// sigmas passes noise as often whether sigma has averaged 10 frames or 1000: after a start, and at
// steady state, where the tails of t would otherwise set the false-detection rate
// (docs/whitening.md, "Noise, outliers, ghosts"). dof 0 (no sigma) or t 0: t unchanged.
// Wallace's factor (8 dof + 1) / (8 dof + 3).
STARSIFT_HD float wallace_factor(float dof) {
  return (8.0f * dof + 1.0f) / (8.0f * dof + 3.0f);
}
// `factor`: wallace_factor(dof), worked out once for many t.
STARSIFT_HD float gaussian_significance(float t, float dof, float factor) {
  if (!(dof > 0.0f) || t == 0.0f) return t;
  const float z = factor * sqrtf(dof * log1pf(t * t / dof));
  return t < 0.0f ? -z : z;
}
STARSIFT_HD float gaussian_significance(float t, float dof) {
  return gaussian_significance(t, dof, wallace_factor(dof));
}

// What output: significance and snr write: gaussian_significance(rho / sigma_{t-1}).
STARSIFT_HD float pixel_significance(float rho, float sigma, const WhitenNoiseConstants& c) {
  return gaussian_significance(pixel_snr(rho, sigma), c.sigma_dof, c.significance_factor);
}

// The value stored in the history for an aligned pixel: the aligned frame, or the prediction
// where the pixel was rejected or the frame holds no finite value (the history stays finite).
STARSIFT_HD float stored_value(float aligned, float prediction, bool rejected) {
  return (rejected || !finite_float(aligned)) ? prediction : aligned;
}

// The value a history sample keeps with history-format: half. v * scale (scale a power of two
// that brings the input format's range into binary16's, whiten_history_scale()) rounded to 11
// significant bits by Veltkamp's split (c = 8193 s, then c - (c - s), in float: the same
// operations on every backend), clamped to +-65504 and flushed to 0 below binary16's
// smallest normal 2^-14, so that v * scale is exactly a binary16 value: a GPU's half store
// keeps it without another rounding. Returned unscaled (exact: scale is a power of two).
STARSIFT_HD float half_history_value(float v, float scale) {
  float s = v * scale;
  const float magnitude = s < 0.0f ? -s : s;
  if (!(magnitude >= 6.103515625e-05f)) return 0.0f;
  if (magnitude > 65504.0f) s = s < 0.0f ? -65504.0f : 65504.0f;
  const float c = s * 8193.0f;
  const float rounded = c - (c - s);
  return rounded * (1.0f / scale);
}

// An integer output sample: offset + gain * rho, clamped to 0..max, rounded half to even.
STARSIFT_HD float integer_output(float rho, float offset, float gain, float max) {
  float v = offset + gain * rho;
  v = v > 0.0f ? v : 0.0f;  // NaN becomes 0 here
  v = v < max ? v : max;
  return rintf(v);
}

}  // namespace starsift
