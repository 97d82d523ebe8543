// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/brightness/brightness_stage.hpp"

#include <vector>

#include "pipeline/brightness/brightness_cpu.hpp"
#include "pipeline/error.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

namespace {

class BrightnessStageCpu final : public BrightnessStage {
 public:
  explicit BrightnessStageCpu(const BrightnessParams& params) : BrightnessStage(params) {}

  Backend backend() const override { return Backend::Cpu; }

  // Runs one black frame through the path, so its buffers are sized here and process()
  // allocates nothing (a later change of sigma, mode or stretch may size some anew, once).
  void configure(const FrameShape& shape) override {
    shape.validate();
    params_.validate_for(shape);
    shape_ = shape;
    const std::size_t bytes = static_cast<std::size_t>(shape.width) *
                              bytes_per_pixel(shape.format) *
                              static_cast<std::size_t>(shape.height);
    std::vector<std::byte> in(bytes), out(bytes);
    const auto stride = static_cast<std::ptrdiff_t>(bytes / static_cast<std::size_t>(shape.height));
    cpu_.run(params_, shape, {in.data(), shape.width, shape.height, stride, shape.format},
             {out.data(), shape.width, shape.height, stride, shape.format}, pool_);
  }

  void process(ConstImageView in, ImageView out) override {
    if (!shape_) throw Error("brightness: a frame before configure()", "configure() first");
    cpu_.run(params_, *shape_, in, out, pool_);
  }

 private:
  ThreadPool& pool_ = shared_thread_pool();  // every CPU stage shares the process pool
  BrightnessCpu cpu_;
};

}  // namespace

std::unique_ptr<BrightnessStage> make_brightness_stage(const BrightnessParams& params,
                                                       const BackendChoice& choice) {
  switch (choice.backend) {
    case Backend::Cpu:
      return std::make_unique<BrightnessStageCpu>(params);
    case Backend::Cuda:
#if STARSIFT_HAVE_CUDA
      return make_brightness_stage_cuda(params, choice.device_id);
#else
      throw Error("brightness: the CUDA backend was chosen but this build has none", "backend cpu");
#endif
    case Backend::Auto:
      break;
  }
  throw Error("brightness: backend must be resolved before building a stage", "cuda, cpu");
}

}  // namespace starsift
