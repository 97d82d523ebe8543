#include "pipeline/chain/chain_runner.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "pipeline/error.hpp"

namespace starsift {

ChainRunner::ChainRunner(std::vector<std::unique_ptr<FilterStage>> stages)
    : stages_(std::move(stages)) {
  if (stages_.empty()) throw Error("a chain needs at least one stage", "one or more stages");
  stats_.stage_ms_last.assign(stages_.size(), 0.0);
  stats_.stage_ms_total.assign(stages_.size(), 0.0);
}

namespace {

// A host frame owned by the chain: the intermediates between stages.
struct HostFrame {
  std::vector<std::byte> bytes;
  ImageView view;
  void allocate(const FrameShape& shape) {
    const std::ptrdiff_t stride =
        static_cast<std::ptrdiff_t>(shape.width) * bytes_per_pixel(shape.format);
    bytes.assign(static_cast<std::size_t>(stride) * shape.height, std::byte{0});
    view = {bytes.data(), shape.width, shape.height, stride, shape.format};
  }
};

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
    for (auto& s : stages_) s->configure(shape);
    // Two intermediates are enough: stage i reads one and writes the other.
    const std::size_t needed = std::min<std::size_t>(stages_.size() - 1, 2);
    scratch_.resize(needed);
    for (auto& f : scratch_) f.allocate(shape);
  }

  void process(ConstImageView in, ImageView out) override {
    ConstImageView src = in;
    for (std::size_t i = 0; i < stages_.size(); ++i) {
      const bool last = i + 1 == stages_.size();
      ImageView dst = last ? out : scratch_[i % 2].view;
      const auto t0 = std::chrono::steady_clock::now();
      stages_[i]->process(src, dst);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      stats_.stage_ms_last[i] = ms;
      stats_.stage_ms_total[i] += ms;
      src = const_view(dst);
    }
    ++stats_.frames;
  }

 private:
  std::vector<HostFrame> scratch_;
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
