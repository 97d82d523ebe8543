#include "pipeline/chain/chain_runner.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "pipeline/chain/stage_shapes.hpp"
#include "pipeline/error.hpp"

namespace starsift {

ChainRunner::ChainRunner(std::vector<std::unique_ptr<FilterStage>> stages)
    : stages_(std::move(stages)) {
  if (stages_.empty()) throw Error("a chain needs at least one stage", "one or more stages");
  stats_.stage_ms_last.assign(stages_.size(), 0.0);
  stats_.stage_ms_total.assign(stages_.size(), 0.0);
}

void HostChainFrames::allocate(const std::vector<FrameShape>& shapes) {
  shapes_ = shapes;
  std::size_t bytes = 0;
  for (std::size_t i = 1; i + 1 < shapes.size(); ++i) {
    bytes = std::max(bytes, HostFrame::packed_bytes(shapes[i]));
  }
  // Two intermediates are enough: stage i reads one and writes the other.
  const int needed = static_cast<int>(std::min<std::size_t>(shapes.size() - 2, 2));
  for (int i = 0; i < 2; ++i) scratch_[i].bytes.assign(i < needed ? bytes : 0, std::byte{0});
}

void HostChainFrames::run(const std::vector<std::unique_ptr<FilterStage>>& stages,
                          ConstImageView in, ImageView out, double* stage_ms) {
  ConstImageView src = in;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const bool last = i + 1 == stages.size();
    ImageView dst = last ? out : scratch_[i % 2].as(shapes_[i + 1]);
    const auto t0 = std::chrono::steady_clock::now();
    stages[i]->process(src, dst);
    if (stage_ms) {
      stage_ms[i] =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    src = const_view(dst);
  }
}

namespace {

class ChainRunnerCpu final : public ChainRunner {
 public:
  explicit ChainRunnerCpu(std::vector<std::unique_ptr<FilterStage>> stages)
      : ChainRunner(std::move(stages)) {
    for (const auto& s : stages_) {
      if (s->backend() != Backend::Cpu) {
        throw Error("chain: stage '" + std::string(s->name()) + "' is not a CPU stage",
                    "every stage on the chain's backend");
      }
    }
  }

  Backend backend() const override { return Backend::Cpu; }

  void configure(const FrameShape& shape) override {
    const std::vector<FrameShape> shapes = configure_stage_shapes(stages_, shape, false);
    frames_.allocate(shapes);
    output_shape_ = shapes.back();
  }

  void process(ConstImageView in, ImageView out) override {
    frames_.run(stages_, in, out, stats_.stage_ms_last.data());
    for (std::size_t i = 0; i < stages_.size(); ++i) {
      stats_.stage_ms_total[i] += stats_.stage_ms_last[i];
    }
    ++stats_.frames;
  }

 private:
  HostChainFrames frames_;
};

}  // namespace

std::unique_ptr<ChainRunner> make_chain_runner(std::vector<std::unique_ptr<FilterStage>> stages,
                                               const BackendChoice& choice) {
  switch (choice.backend) {
    case Backend::Cpu:
      return std::make_unique<ChainRunnerCpu>(std::move(stages));
    case Backend::Cuda:
#if STARSIFT_HAVE_CUDA
      return make_chain_runner_cuda(std::move(stages), choice.device_id);
#else
      throw Error("chain: the CUDA backend was chosen but this build has none", "cpu");
#endif
    case Backend::Auto:
      break;
  }
  throw Error("chain: backend must be resolved before building a chain", "cuda, cpu");
}

}  // namespace starsift
