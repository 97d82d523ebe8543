// SPDX-License-Identifier: LGPL-2.1-or-later
// Frame-to-frame shift by phase correlation on the CPU (FFTW, single precision): the central
// n x n window of each frame, less its mean, times a Hann window, is transformed; the
// normalised cross-power spectrum with the reference's transform, times the taper of
// phase_peak.hpp, is transformed back, and the peak is located to a pixel and refined with
// refine_peak(); estimate_near() reads the same surface near a given displacement. Plans and
// buffers are made once, in the constructor: estimate() allocates
// nothing.
#pragma once

#include <memory>
#include <optional>

#include "pipeline/image.hpp"

namespace starsift {

struct ShiftEstimate {
  // The displacement d of the frame's content from the reference's: frame(p) ~ reference(p - d)
  // (a star at x in the reference is at x + dx in the frame).
  double dx = 0.0;
  double dy = 0.0;
  // The height of the correlation peak, 1 for two identical windows (near 0: no match).
  double peak = 0.0;
};

class PhaseCorrelator {
 public:
  // `window`: the side of the analysed window, a power of two, at most the frame's sides.
  explicit PhaseCorrelator(int window);
  ~PhaseCorrelator();
  PhaseCorrelator(const PhaseCorrelator&) = delete;
  PhaseCorrelator& operator=(const PhaseCorrelator&) = delete;

  int window() const noexcept;

  // Takes the central window of `frame` (GRAY32F, at least window x window) as the reference.
  void set_reference(ConstImageView frame);
  // The shift of `frame`'s central window against the reference (set_reference() first).
  ShiftEstimate estimate(ConstImageView frame);
  // The highest local maximum of the last estimate()'s surface within kShiftNearRadius px of
  // displacement (px, py) (phase_peak.hpp's shift_near_peak()), refined; nullopt when there is
  // none.
  std::optional<ShiftEstimate> estimate_near(double px, double py) const;
  // Whether the last estimate()'s peak lies outside that box (shift_peak_far()).
  bool last_peak_far(double px, double py) const;
  // Makes the frame of the last estimate() the reference, reusing its transform.
  void adopt_last_as_reference();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace starsift
