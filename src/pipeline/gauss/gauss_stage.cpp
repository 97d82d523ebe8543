// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/gauss/gauss_stage.hpp"

#include "pipeline/error.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

namespace {

class GaussStageCpu final : public GaussStage {
 public:
  explicit GaussStageCpu(const GaussParams& params) : GaussStage(params) {}

  Backend backend() const override { return Backend::Cpu; }

  void configure(const FrameShape& shape) override {
    shape.validate();
    params_.validate_for(shape.format);
  }

  void process(ConstImageView in, ImageView out) override {
    if (recursive()) {
      iir_.run(params_, in, out, pool_);
    } else {
      direct_.run(params_, in, out, pool_);
    }
  }

 private:
  ThreadPool& pool_ = shared_thread_pool();  // every CPU stage shares the process pool
  GaussCpu direct_;
  GaussIir iir_;
};

}  // namespace

std::unique_ptr<GaussStage> make_gauss_stage(const GaussParams& params,
                                             const BackendChoice& choice) {
  switch (choice.backend) {
    case Backend::Cpu:
      return std::make_unique<GaussStageCpu>(params);
    case Backend::Cuda:
#if STARSIFT_HAVE_CUDA
      return make_gauss_stage_cuda(params, choice.device_id);
#else
      throw Error("gauss: the CUDA backend was chosen but this build has none", "cpu");
#endif
    case Backend::Auto:
      break;
  }
  throw Error("gauss: backend must be resolved before building a stage", "cuda, cpu");
}

}  // namespace starsift
