// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/detect/detect_stage.hpp"

#include <algorithm>
#include <vector>

#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/reference.hpp"
#include "pipeline/error.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

std::optional<ResultLayout> DetectStage::result_layout() const {
  return ResultLayout{kCatalogueKind, sizeof(DetectedObject),
                      static_cast<std::uint32_t>(params_.max_objects), false};
}

void DetectStage::set_params(const DetectParams& params) {
  params.validate();
  if (!detect_live_change(params_, params)) {
    throw Error("detect: a new output or max-objects needs a new stage",
                "other parameters while running");
  }
  apply_params(params);
  params_ = params;
}

namespace {

class DetectStageCpu final : public DetectStage {
 public:
  explicit DetectStageCpu(const DetectParams& params) : DetectStage(params) {}

  Backend backend() const override { return Backend::Cpu; }

  void configure(const FrameShape& shape) override {
    state_.reset();  // a refused shape leaves the stage unconfigured, not half-configured
    state_ = std::make_unique<DetectState>(params_, shape);
    records_.assign(static_cast<std::size_t>(params_.max_objects), DetectedObject{});
  }

  void process(ConstImageView in, ImageView out) override {
    if (!state_) throw Error("detect: process() before configure()", "configure() first");
    counts_ = state_->process(in, out, records_, shared_thread_pool());
  }

  void write_result(ResultView result) const override {
    auto* header = reinterpret_cast<ResultHeader*>(result.data);
    header->count = counts_.objects;
    header->overflow = counts_.overflow;
    std::copy_n(records_.begin(), counts_.objects, result.records<DetectedObject>());
  }

 private:
  void apply_params(const DetectParams& params) override {
    if (state_) state_->set_params(params);
  }

  std::unique_ptr<DetectState> state_;
  std::vector<DetectedObject> records_;
  DetectCounts counts_;
};

}  // namespace

std::unique_ptr<DetectStage> make_detect_stage(const DetectParams& params,
                                               const BackendChoice& choice) {
  switch (choice.backend) {
    case Backend::Cpu:
      return std::make_unique<DetectStageCpu>(params);
    case Backend::Cuda:
#if STARSIFT_HAVE_CUDA
      return make_detect_stage_cuda(params, choice.device_id);
#else
      throw Error("detect: this build has no CUDA backend", "backend cpu");
#endif
    case Backend::Auto:
      break;
  }
  throw Error("detect: backend must be resolved before building a stage", "cuda, cpu");
}

}  // namespace starsift
