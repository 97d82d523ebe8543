// The per-pixel arithmetic of whitening after the prediction: the noise estimate, the outlier
// test, what is stored in the history, and the output mapping. Host/device code: the CPU
// reference and the CUDA kernels apply these very functions, in float.
#pragma once

#include <cmath>

#include "pipeline/hd.hpp"

namespace starsift {

// True for a finite float (not NaN, not +-inf), without <cmath>'s host-only overloads.
STARSIFT_HD bool finite_float(float v) {
  return v - v == 0.0f;
}

// What one frame's per-pixel noise rules need, set once per frame (whiten_frame_constants()).
struct WhitenNoiseConstants {
  float alpha = 0.0f;          // weight of this frame's rho^2 in sigma^2; 0: no update
  bool have_sigma = false;     // sigma_{t-1} exists (snr and sigma outputs, the outlier test)
  bool reject_active = false;  // reject: mask, and sigma has seen enough frames to be trusted
  float reject_k2 = 16.0f;     // reject-sigma squared
  int reject_run_limit = 0;    // a pixel is not rejected more than this many frames in a row
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
STARSIFT_HD bool update_pixel_noise(float rho, bool usable, const WhitenNoiseConstants& c,
                                    float& var, unsigned char& run) {
  if (!usable) return false;
  const bool finite = finite_float(rho);
  const float rho2 = rho * rho;
  if (c.reject_active && finite && run < c.reject_run_limit && rho2 > c.reject_k2 * var) {
    ++run;
    return true;
  }
  run = 0;
  if (finite && c.alpha > 0.0f) var += c.alpha * (rho2 - var);
  return false;
}

// sigma_{t-1} as the outputs use it: 0 until a noise estimate exists.
STARSIFT_HD float pixel_sigma(float var_before, const WhitenNoiseConstants& c) {
  return c.have_sigma ? sqrtf(var_before) : 0.0f;
}

// rho / sigma_{t-1}; 0 where sigma is 0 or unknown.
STARSIFT_HD float pixel_snr(float rho, float sigma) {
  return sigma > 0.0f ? rho / sigma : 0.0f;
}

// The value stored in the history for an aligned pixel: the aligned frame, or the prediction
// where the pixel was rejected or the frame holds no finite value (the history stays finite).
STARSIFT_HD float stored_value(float aligned, float prediction, bool rejected) {
  return (rejected || !finite_float(aligned)) ? prediction : aligned;
}

// An integer output sample: offset + gain * rho, clamped to 0..max, rounded half to even.
STARSIFT_HD float integer_output(float rho, float offset, float gain, float max) {
  float v = offset + gain * rho;
  v = v > 0.0f ? v : 0.0f;  // NaN becomes 0 here
  v = v < max ? v : max;
  return rintf(v);
}

}  // namespace starsift
