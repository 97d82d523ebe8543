// SPDX-License-Identifier: LGPL-2.1-or-later
// The median filter as a stage, on the CPU or CUDA backend.
#pragma once

#include <memory>

#include "pipeline/backend.hpp"
#include "pipeline/median/params.hpp"
#include "pipeline/stage.hpp"

namespace starsift {

class MedianStage : public FilterStage {
 public:
  std::string_view name() const override { return "median"; }
  bool supports(PixelFormat format) const override { return median_supports(format); }

  // Validates and stores new parameters; the next process() uses them. Cheap: no
  // allocation (buffers depend only on the frame shape).
  void set_params(const MedianParams& params) {
    params.validate();
    params_ = params;
  }
  const MedianParams& params() const noexcept { return params_; }

 protected:
  explicit MedianStage(const MedianParams& params) { set_params(params); }
  MedianParams params_;
};

// Builds the stage for a resolved backend choice (see resolve_backend()).
std::unique_ptr<MedianStage> make_median_stage(const MedianParams& params,
                                               const BackendChoice& choice);

#if STARSIFT_HAVE_CUDA
std::unique_ptr<MedianStage> make_median_stage_cuda(const MedianParams& params, int device_id);
#endif

}  // namespace starsift
