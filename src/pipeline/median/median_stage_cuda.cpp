// SPDX-License-Identifier: LGPL-2.1-or-later
// The median stage on a CUDA device: host frame -> device -> kernel -> host, on the stage's
// own stream. Buffers are allocated in configure(); process() only copies and launches.
#include <cuda_runtime_api.h>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/median/median.cuh"
#include "pipeline/error.hpp"
#include "pipeline/host_staging_cuda.hpp"
#include "pipeline/median/median_stage.hpp"

namespace starsift {

namespace {

class MedianStageCuda final : public MedianStage {
 public:
  MedianStageCuda(const MedianParams& params, int device_id)
      : MedianStage(params), device_id_(device_id) {
    cuda::use_device(device_id_);
    stream_ = std::make_unique<cuda::Stream>();
  }

  Backend backend() const override { return Backend::Cuda; }

  void configure(const FrameShape& shape) override {
    shape.validate();
    params_.validate_for(shape.format);
    cuda::use_device(device_id_);
    staging_.allocate(shape, shape);
    shape_ = shape;
  }

  void configure_device(const FrameShape& shape) override {
    shape.validate();
    params_.validate_for(shape.format);
    staging_.release();  // device chains bring their own buffers
    shape_ = shape;
  }

  void enqueue(ConstImageView in, ImageView out, void* stream) override {
    cuda::check(cuda::launch_median(params_, in, out, static_cast<cudaStream_t>(stream)),
                "median kernel launch");
  }

  void process(ConstImageView in, ImageView out) override {
    if (in.width != shape_.width || in.height != shape_.height || in.format != shape_.format) {
      throw Error("median: frame " + std::to_string(in.width) + "x" + std::to_string(in.height) +
                      " differs from the configured shape",
                  std::to_string(shape_.width) + "x" + std::to_string(shape_.height) + " " +
                      std::string(to_string(shape_.format)));
    }
    if (!staging_.ready()) {
      throw Error("median: process() on a stage configured for device chains",
                  "configure() before process()");
    }
    cuda::use_device(device_id_);
    const cudaStream_t s = stream_->get();
    const ConstImageView d_in = staging_.upload(in, s);
    cuda::check(cuda::launch_median(params_, d_in, staging_.output(out), s),
                "median kernel launch");
    staging_.download(out, s);
    // The stage's own stream only: other streams and elements keep running.
    cuda::check(cudaStreamSynchronize(s), "median (cudaStreamSynchronize)");
  }

 private:
  int device_id_;
  std::unique_ptr<cuda::Stream> stream_;
  HostStaging staging_;  // process() only
  FrameShape shape_;
};

}  // namespace

std::unique_ptr<MedianStage> make_median_stage_cuda(const MedianParams& params, int device_id) {
  return std::make_unique<MedianStageCuda>(params, device_id);
}

}  // namespace starsift
