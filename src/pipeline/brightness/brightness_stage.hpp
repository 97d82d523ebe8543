// SPDX-License-Identifier: LGPL-2.1-or-later
// The adaptive brightness correction as a stage. On the CPU: BrightnessCpu on the shared
// thread pool (mode local, and mode clahe through ClaheCpu). On CUDA: launch_brightness, both
// modes (brightness_stage_cuda.cpp). The stage keeps nothing from one frame to the next but
// its buffers, so every parameter change applies from the next frame.
#pragma once

#include <memory>
#include <optional>

#include "pipeline/backend.hpp"
#include "pipeline/brightness/params.hpp"
#include "pipeline/stage.hpp"

namespace starsift {

class BrightnessStage : public FilterStage {
 public:
  std::string_view name() const override { return "brightness"; }
  bool supports(PixelFormat format) const override { return brightness_supports(format); }

  // Validates and stores new parameters (against the configured frames too, once there are
  // some: a fixed stretch beyond the bit depth, clahe on GRAY32F); the next process() uses
  // them. Throws Error and keeps the previous ones when they are refused.
  void set_params(const BrightnessParams& params) {
    if (shape_) {
      params.validate_for(*shape_);
    } else {
      params.validate();
    }
    params_ = params;
  }
  const BrightnessParams& params() const noexcept { return params_; }

 protected:
  explicit BrightnessStage(const BrightnessParams& params) { set_params(params); }
  BrightnessParams params_;
  std::optional<FrameShape> shape_;  // set by configure()
};

// Builds the stage for a resolved backend choice.
std::unique_ptr<BrightnessStage> make_brightness_stage(const BrightnessParams& params,
                                                       const BackendChoice& choice);

#if STARSIFT_HAVE_CUDA
std::unique_ptr<BrightnessStage> make_brightness_stage_cuda(const BrightnessParams& params,
                                                            int device_id);
#endif

}  // namespace starsift
