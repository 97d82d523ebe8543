// The median stage on a CUDA device: host frame -> device -> kernel -> host, on the stage's
// own stream. Buffers are allocated in configure(); process() only copies and launches.
#include <cuda_runtime_api.h>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "cuda/median/median.cuh"
#include "pipeline/error.hpp"
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
    const std::size_t row_bytes =
        static_cast<std::size_t>(shape.width) * bytes_per_pixel(shape.format);
    input_.allocate(row_bytes, shape.height);
    output_.allocate(row_bytes, shape.height);
    shape_ = shape;
  }

  void configure_device(const FrameShape& shape) override {
    shape.validate();
    params_.validate_for(shape.format);
    input_.release();  // device chains bring their own buffers
    output_.release();
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
    if (input_.data() == nullptr) {
      throw Error("median: process() on a stage configured for device chains",
                  "configure() before process()");
    }
    cuda::use_device(device_id_);
    const cudaStream_t s = stream_->get();
    const std::size_t row_bytes = in.row_bytes();
    cuda::check(cudaMemcpy2DAsync(input_.data(), input_.pitch(), in.data, in.stride, row_bytes,
                                  in.height, cudaMemcpyHostToDevice, s),
                "upload (cudaMemcpy2DAsync)");
    const ConstImageView d_in{input_.data(), in.width, in.height,
                              static_cast<std::ptrdiff_t>(input_.pitch()), in.format};
    const ImageView d_out{output_.data(), in.width, in.height,
                          static_cast<std::ptrdiff_t>(output_.pitch()), in.format};
    cuda::check(cuda::launch_median(params_, d_in, d_out, s), "median kernel launch");
    cuda::check(cudaMemcpy2DAsync(out.data, out.stride, output_.data(), output_.pitch(), row_bytes,
                                  in.height, cudaMemcpyDeviceToHost, s),
                "download (cudaMemcpy2DAsync)");
    // The stage's own stream only: other streams and elements keep running.
    cuda::check(cudaStreamSynchronize(s), "median (cudaStreamSynchronize)");
  }

 private:
  int device_id_;
  std::unique_ptr<cuda::Stream> stream_;
  cuda::DeviceImage input_;
  cuda::DeviceImage output_;
  FrameShape shape_;
};

}  // namespace

std::unique_ptr<MedianStage> make_median_stage_cuda(const MedianParams& params, int device_id) {
  return std::make_unique<MedianStageCuda>(params, device_id);
}

}  // namespace starsift
