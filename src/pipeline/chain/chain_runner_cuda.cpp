// A chain on a CUDA device in one GPU pass: the frame is uploaded once, every stage runs on
// device memory (two intermediates, ping-pong), and the result is downloaded once, all on
// the chain's own stream. Events around each stage give per-stage GPU times.
#include <cuda_runtime_api.h>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "pipeline/chain/chain_runner.hpp"
#include "pipeline/chain/device_chain.hpp"
#include "pipeline/chain/stage_shapes.hpp"
#include "pipeline/error.hpp"

namespace starsift {

namespace {

float elapsed_ms(const cuda::Event& from, const cuda::Event& to) {
  float ms = 0.0f;
  cuda::check(cudaEventElapsedTime(&ms, from.get(), to.get()), "cudaEventElapsedTime");
  return ms;
}

class ChainRunnerCuda final : public ChainRunner {
 public:
  ChainRunnerCuda(std::vector<std::unique_ptr<FilterStage>> stages, int device_id)
      : ChainRunner(std::move(stages)), device_id_(device_id) {
    for (const auto& s : stages_) {
      if (s->backend() != Backend::Cuda) {
        throw Error("chain: stage '" + std::string(s->name()) + "' is not a CUDA stage",
                    "every stage on the chain's backend");
      }
    }
    cuda::use_device(device_id_);
    stream_ = std::make_unique<cuda::Stream>();
    // Marks: before the upload, after it, after each stage, after the download.
    marks_.resize(stages_.size() + 3);
    for (auto& m : marks_) {
      m = std::make_unique<cuda::Event>();
      mark_handles_.push_back(m->get());
    }
  }

  Backend backend() const override { return Backend::Cuda; }

  void configure(const FrameShape& shape) override {
    cuda::use_device(device_id_);
    const std::vector<FrameShape> shapes = configure_stage_shapes(stages_, shape, true);
    frames_.allocate(shapes);
    shape_ = shape;
    output_shape_ = shapes.back();
  }

  void process(ConstImageView in, ImageView out) override {
    if (in.width != shape_.width || in.height != shape_.height || in.format != shape_.format) {
      throw Error("chain: frame " + std::to_string(in.width) + "x" + std::to_string(in.height) +
                      " differs from the configured shape",
                  std::to_string(shape_.width) + "x" + std::to_string(shape_.height));
    }
    cuda::use_device(device_id_);
    const cudaStream_t s = stream_->get();
    frames_.enqueue(stages_, in, out, s, mark_handles_.data());
    // This chain's stream only; other elements' work goes on.
    cuda::check(cudaStreamSynchronize(s), "chain (cudaStreamSynchronize)");

    stats_.upload_ms_last = elapsed_ms(*marks_[0], *marks_[1]);
    for (std::size_t i = 0; i < stages_.size(); ++i) {
      const double ms = elapsed_ms(*marks_[i + 1], *marks_[i + 2]);
      stats_.stage_ms_last[i] = ms;
      stats_.stage_ms_total[i] += ms;
    }
    stats_.download_ms_last = elapsed_ms(*marks_[stages_.size() + 1], *marks_.back());
    ++stats_.frames;
  }

 private:
  int device_id_;
  std::unique_ptr<cuda::Stream> stream_;
  std::vector<std::unique_ptr<cuda::Event>> marks_;
  std::vector<cudaEvent_t> mark_handles_;
  DeviceChainFrames frames_;
  FrameShape shape_;
};

}  // namespace

std::unique_ptr<ChainRunner> make_chain_runner_cuda(
    std::vector<std::unique_ptr<FilterStage>> stages, int device_id) {
  return std::make_unique<ChainRunnerCuda>(std::move(stages), device_id);
}

}  // namespace starsift
