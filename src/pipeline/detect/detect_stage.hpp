// SPDX-License-Identifier: LGPL-2.1-or-later
// Detection as a stage, on the CPU or a CUDA device. Its frame is the input, the labels or an
// overlay (DetectParams::output); its per-frame result is the catalogue: up to max_objects
// DetectedObject records (kCatalogueKind), the objects beyond counted as overflow.
#pragma once

#include <memory>

#include "pipeline/backend.hpp"
#include "pipeline/detect/params.hpp"
#include "pipeline/stage.hpp"

namespace starsift {

class DetectStage : public FilterStage {
 public:
  std::string_view name() const override { return "detect"; }
  bool supports(PixelFormat format) const override { return detect_supports(format); }
  FrameShape output_shape(const FrameShape& in) const override {
    return detect_output_shape(params_, in);
  }
  bool keeps_frame() const override { return params_.output == DetectOutput::Input; }
  std::optional<ResultLayout> result_layout() const override;

  // Validates and stores new parameters. Everything but output and max-objects applies from
  // the next frame (detect_live_change()); those two size the stage's buffers and its result,
  // so a chain replaces the stage instead. A refusal (Error) leaves the stage as it was.
  void set_params(const DetectParams& params);
  const DetectParams& params() const noexcept { return params_; }

 protected:
  explicit DetectStage(const DetectParams& params) : params_(params) { params_.validate(); }
  virtual void apply_params(const DetectParams& params) = 0;
  DetectParams params_;
};

std::unique_ptr<DetectStage> make_detect_stage(const DetectParams& params,
                                               const BackendChoice& choice);

#if STARSIFT_HAVE_CUDA
std::unique_ptr<DetectStage> make_detect_stage_cuda(const DetectParams& params, int device_id);
#endif

}  // namespace starsift
