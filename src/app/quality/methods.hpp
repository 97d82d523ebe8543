// SPDX-License-Identifier: LGPL-2.1-or-later
// The background subtractions under test, behind one interface: each turns frame t into a
// residual (ADU) and says how its noise is to be estimated. Whitening (shift: none and
// shift: resample) is the shipped stage (make_whiten_stage()) on the configured backend, with
// its defaults otherwise; the baselines are baselines.hpp's.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "pipeline/backend.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"
#include "pipeline/plane.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift::quality {

class ResidualMethod {
 public:
  virtual ~ResidualMethod() = default;

  // Short name, as the report writes it: whiten-none, whiten-resample, difference,
  // running-median.
  virtual std::string_view name() const = 0;

  // Takes frame t, both as it came (GRAY16) and as float ADU. Returns true when residual()
  // holds frame t's residual (false while the method still fills its history).
  virtual bool process(ConstImageView frame, const Plane& frame_adu, ThreadPool& pool) = 0;

  const Plane& residual() const noexcept { return residual_; }

  // The method's own per-pixel variance of this residual (ADU^2), estimated before frame t
  // was seen; nullptr when the method has none (the harness then takes one robust sigma per
  // frame from the residual).
  virtual const Plane* variance() const noexcept { return nullptr; }

  // The residual's noise over the frame's noise at best, for independent frames (whitening:
  // sqrt(1 + sum a_k^2) of this frame's weights).
  virtual double noise_floor() const = 0;

  // The field's shift against the first frame the method measured for this frame (px), when
  // it measures one (whitening with shift: resample).
  virtual bool shift_estimate(double& x, double& y) const {
    (void)x;
    (void)y;
    return false;
  }

 protected:
  ResidualMethod(int width, int height) : residual_(width, height) {}
  Plane residual_;
};

enum class MethodKind {
  WhitenNone,
  WhitenResample,
  // shift: resample fed frames whose hot pixels are replaced by the median of their
  // neighbours from a bad-pixel map (as a dark frame gives one): the shift estimate otherwise
  // locks onto the hot pixels, which stay put while the stars move (docs/quality.md).
  WhitenResampleRepaired,
  // shift: resample with reject: objects: faint blobs stay out of the history.
  WhitenResampleObjects,
  // WhitenResample and WhitenResampleObjects with history-format: half (each stored history
  // value rounded to binary16's 11 significant bits).
  WhitenResampleHalf,
  WhitenResampleObjectsHalf,
  // WhitenParams{} as it ships: what `siftwhiten` does with no property set.
  WhitenDefaults,
  Difference,
  RunningMedian,
  // The same two after whitening's alignment (the shift the shipped stage measures per frame,
  // bicubic resampling), fed frames repaired from the bad-pixel map as whiten-resample-bpm
  // is (aligned, hot pixels fixed on the camera would otherwise move against the sky and
  // leave residuals): the fair comparison on a jittering mount.
  DifferenceAligned,
  RunningMedianAligned,
};

inline constexpr MethodKind kAllMethods[] = {MethodKind::WhitenNone,
                                             MethodKind::WhitenResample,
                                             MethodKind::WhitenResampleRepaired,
                                             MethodKind::WhitenResampleObjects,
                                             MethodKind::WhitenResampleHalf,
                                             MethodKind::WhitenResampleObjectsHalf,
                                             MethodKind::WhitenDefaults,
                                             MethodKind::Difference,
                                             MethodKind::RunningMedian,
                                             MethodKind::DifferenceAligned,
                                             MethodKind::RunningMedianAligned};

// whiten-none, whiten-resample, whiten-resample-bpm, whiten-resample-objects,
// whiten-resample-half, whiten-resample-objects-half, whiten-defaults, difference,
// running-median, difference-aligned, running-median-aligned.
std::string_view method_name(MethodKind kind) noexcept;

// `history`: whitening's N and the running median's frame count. `shape`: GRAY16 frames.
// `backend`: where the whitening stages run (resolved, resolve_backend()); the baselines run
// on the CPU. `bad_pixels`: indices (y * width + x) of the bad-pixel map, for
// WhitenResampleRepaired and the aligned baselines.
std::unique_ptr<ResidualMethod> make_method(MethodKind kind, int history, const FrameShape& shape,
                                            const BackendChoice& backend,
                                            const std::vector<std::size_t>& bad_pixels = {});

// Replaces each listed pixel of a GRAY16 frame (packed rows) by the median of its neighbours
// in the 3 x 3 box that are not listed themselves (left as it is when all are).
void repair_bad_pixels(std::vector<std::uint16_t>& frame, int width, int height,
                       const std::vector<std::size_t>& bad_pixels,
                       const std::vector<unsigned char>& bad_mask);

}  // namespace starsift::quality
