// SPDX-License-Identifier: LGPL-2.1-or-later
// The Gaussian stage on a CUDA device: host frame -> device -> kernels -> host, on the
// stage's own stream (process()), or the kernels alone on a device chain's stream
// (enqueue()). The scratch of the separable, decimated and recursive paths is allocated the
// first time parameters need it (a sigma beyond the fused path's radius), never per frame.
#include <cuda_runtime_api.h>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/gauss/gauss.cuh"
#include "pipeline/error.hpp"
#include "pipeline/gauss/gauss_stage.hpp"
#include "pipeline/host_staging_cuda.hpp"

namespace starsift {

namespace {

class GaussStageCuda final : public GaussStage {
 public:
  GaussStageCuda(const GaussParams& params, int device_id)
      : GaussStage(params), device_id_(device_id) {
    cuda::use_device(device_id_);
    stream_ = std::make_unique<cuda::Stream>();
  }

  Backend backend() const override { return Backend::Cuda; }

  void configure(const FrameShape& shape) override {
    configure_device(shape);
    staging_.allocate(shape, shape);
  }

  void configure_device(const FrameShape& shape) override {
    shape.validate();
    params_.validate_for(shape.format);
    cuda::use_device(device_id_);
    staging_.release();  // device chains bring their own buffers
    if (shape.width != shape_.width || shape.height != shape_.height ||
        shape.format != shape_.format) {
      scratch_.release();
      scratch_bytes_ = 0;
    }
    shape_ = shape;
    reserve_scratch();
  }

  void enqueue(ConstImageView in, ImageView out, void* stream) override {
    reserve_scratch();
    cuda::check(cuda::launch_gauss(params_, in, out, scratch_.data(), scratch_bytes_,
                                   static_cast<cudaStream_t>(stream)),
                "gauss kernel launch");
  }

  void process(ConstImageView in, ImageView out) override {
    if (in.width != shape_.width || in.height != shape_.height || in.format != shape_.format) {
      throw Error("gauss: frame " + std::to_string(in.width) + "x" + std::to_string(in.height) +
                      " differs from the configured shape",
                  std::to_string(shape_.width) + "x" + std::to_string(shape_.height) + " " +
                      std::string(to_string(shape_.format)));
    }
    if (!staging_.ready()) {
      throw Error("gauss: process() on a stage configured for device chains",
                  "configure() before process()");
    }
    cuda::use_device(device_id_);
    const cudaStream_t s = stream_->get();
    const ConstImageView d_in = staging_.upload(in, s);
    enqueue(d_in, staging_.output(out), s);
    staging_.download(out, s);
    // The stage's own stream only: other streams and elements keep running.
    cuda::check(cudaStreamSynchronize(s), "gauss (cudaStreamSynchronize)");
  }

 private:
  // The scratch the current parameters' path needs; allocated when they first need more
  // (a live change of sigma past the fused path), so the common small sigma holds none.
  void reserve_scratch() {
    const cuda::GaussPath path = cuda::gauss_auto_path(params_);
    const std::size_t need =
        cuda::gauss_scratch_bytes(path, shape_.width, shape_.height, shape_.format);
    if (need <= scratch_bytes_) return;
    cuda::use_device(device_id_);
    scratch_.allocate(need, 1);
    scratch_bytes_ = need;
  }

  int device_id_;
  std::unique_ptr<cuda::Stream> stream_;
  HostStaging staging_;  // process() only
  cuda::DeviceImage scratch_;
  std::size_t scratch_bytes_ = 0;
  FrameShape shape_;
};

}  // namespace

std::unique_ptr<GaussStage> make_gauss_stage_cuda(const GaussParams& params, int device_id) {
  return std::make_unique<GaussStageCuda>(params, device_id);
}

}  // namespace starsift
