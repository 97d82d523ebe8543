// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/median/median_stage.hpp"

#include "pipeline/error.hpp"
#include "pipeline/median/median_cpu.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

namespace {

class MedianStageCpu final : public MedianStage {
 public:
  explicit MedianStageCpu(const MedianParams& params) : MedianStage(params) {}

  Backend backend() const override { return Backend::Cpu; }

  void configure(const FrameShape& shape) override {
    shape.validate();
    params_.validate_for(shape.format);
    shape_ = shape;
  }

  // The vectorised median where it applies (sizes 3-7, integer formats), else the
  // reference; both give the same pixels.
  void process(ConstImageView in, ImageView out) override { median_cpu(params_, in, out, pool_); }

 private:
  ThreadPool& pool_ = shared_thread_pool();  // every CPU stage shares the process pool
  FrameShape shape_;
};

}  // namespace

std::unique_ptr<MedianStage> make_median_stage(const MedianParams& params,
                                               const BackendChoice& choice) {
  switch (choice.backend) {
    case Backend::Cpu:
      return std::make_unique<MedianStageCpu>(params);
    case Backend::Cuda:
#if STARSIFT_HAVE_CUDA
      return make_median_stage_cuda(params, choice.device_id);
#else
      throw Error("median: the CUDA backend was chosen but this build has none", "cpu");
#endif
    case Backend::Auto:
      break;
  }
  throw Error("median: backend must be resolved before building a stage", "cuda, cpu");
}

}  // namespace starsift
