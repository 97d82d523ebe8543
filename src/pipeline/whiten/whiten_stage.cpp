// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/whiten/whiten_stage.hpp"

#include "pipeline/error.hpp"
#include "pipeline/thread_pool.hpp"
#include "pipeline/whiten/reference.hpp"

#if STARSIFT_HAVE_CUDA
#include "pipeline/whiten/whiten_stage_cuda.hpp"
#endif

namespace starsift {

namespace {

class WhitenStageCpu final : public WhitenStage {
 public:
  explicit WhitenStageCpu(const WhitenParams& params) : WhitenStage(params) {}

  Backend backend() const override { return Backend::Cpu; }

  void configure(const FrameShape& shape) override {
    state_.reset();  // a refused shape leaves the stage unconfigured, not half-configured
    state_ = std::make_unique<WhitenState>(params_, shape);
  }

  void process(ConstImageView in, ImageView out) override {
    if (!state_) {
      throw Error("whiten: process() before configure()", "configure() with the frame shape");
    }
    state_->process(in, out, pool_);
  }

  void write_result(ResultView result) const override {
    *result.records<WhitenStats>() = last_stats();
  }

  void reset_state() override {
    if (state_) state_->reset();
  }

  WhitenStats last_stats() const override { return state_ ? state_->last_stats() : WhitenStats{}; }

 private:
  void apply_params(const WhitenParams& params) override {
    if (!state_) return;
    if (state_->can_update(params)) {
      state_->update(params);
    } else {
      // Built before the old state goes, so a refusal keeps the old one.
      auto fresh = std::make_unique<WhitenState>(params, state_->shape());
      state_ = std::move(fresh);
    }
  }

  ThreadPool& pool_ = shared_thread_pool();  // every CPU stage shares the process pool
  std::unique_ptr<WhitenState> state_;
};

}  // namespace

std::unique_ptr<WhitenStage> make_whiten_stage(const WhitenParams& params,
                                               const BackendChoice& choice) {
  switch (choice.backend) {
    case Backend::Cpu:
      return std::make_unique<WhitenStageCpu>(params);
    case Backend::Cuda:
#if STARSIFT_HAVE_CUDA
      return make_whiten_stage_cuda(params, choice.device_id);
#else
      throw Error("whiten: this build has no CUDA backend", "backend cpu for chains with whiten");
#endif
    case Backend::Auto:
      break;
  }
  throw Error("whiten: backend must be resolved before building a stage", "cuda, cpu");
}

}  // namespace starsift
