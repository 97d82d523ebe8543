// SPDX-License-Identifier: LGPL-2.1-or-later
// The brightness stage on a CUDA device: host frame -> device -> launch_brightness -> host, on
// the stage's own stream (process()), or the kernels alone on a device chain's stream
// (enqueue()). The scratch is allocated at configure for the frame size and the parameters,
// and serves mode local at any sigma, strength, alpha or stretch; it grows, once, the first
// time parameters need more (a live change to mode clahe, a finer grid or a deeper bit depth),
// never per frame. The small plane's tent tables are built once per frame size and sigma: the
// stage keeps the record of them (cuda::BrightnessTables) with the scratch and clears it
// whenever the scratch is allocated anew; the launcher rebuilds them when sigma changes.
#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "cuda/brightness/brightness.cuh"
#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "pipeline/brightness/brightness_stage.hpp"
#include "pipeline/error.hpp"
#include "pipeline/host_staging_cuda.hpp"

namespace starsift {

namespace {

class BrightnessStageCuda final : public BrightnessStage {
 public:
  BrightnessStageCuda(const BrightnessParams& params, int device_id)
      : BrightnessStage(params), device_id_(device_id) {
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
    params_.validate_for(shape);
    cuda::use_device(device_id_);
    staging_.release();  // device chains bring their own buffers
    if (!shape_ || shape.width != shape_->width || shape.height != shape_->height ||
        shape.format != shape_->format || shape.bit_depth != shape_->bit_depth) {
      scratch_.release();
      scratch_bytes_ = 0;
      tables_ = {};
    }
    shape_ = shape;
    reserve_scratch();
  }

  void enqueue(ConstImageView in, ImageView out, void* stream) override {
    if (!shape_) {
      throw Error("brightness: a frame before configure()", "configure() or configure_device()");
    }
    reserve_scratch();
    cuda::check(
        cuda::launch_brightness(params_, *shape_, in, out, scratch_.data(), scratch_bytes_,
                                static_cast<cudaStream_t>(stream), cuda::GaussPath::Auto, &tables_),
        "brightness kernel launch");
  }

  void process(ConstImageView in, ImageView out) override {
    if (!shape_) throw Error("brightness: a frame before configure()", "configure() first");
    params_.validate_frames(*shape_, in, out);
    if (!staging_.ready()) {
      throw Error("brightness: process() on a stage configured for device chains",
                  "configure() before process()");
    }
    cuda::use_device(device_id_);
    const cudaStream_t s = stream_->get();
    const ConstImageView d_in = staging_.upload(in, s);
    enqueue(d_in, staging_.output(out), s);
    staging_.download(out, s);
    // The stage's own stream only: other streams and elements keep running.
    cuda::check(cudaStreamSynchronize(s), "brightness (cudaStreamSynchronize)");
  }

 private:
  // The scratch the current parameters need, allocated when they first need more than there is.
  void reserve_scratch() {
    const std::size_t need = cuda::brightness_scratch_bytes(params_, *shape_);
    if (need <= scratch_bytes_) return;
    cuda::use_device(device_id_);
    scratch_.release();
    scratch_bytes_ = 0;
    tables_ = {};
    scratch_.allocate(need, 1);
    scratch_bytes_ = need;
  }

  int device_id_;
  std::unique_ptr<cuda::Stream> stream_;
  HostStaging staging_;  // process() only
  cuda::DeviceImage scratch_;
  std::size_t scratch_bytes_ = 0;
  cuda::BrightnessTables tables_;  // what the scratch's tent tables were built for
};

}  // namespace

std::unique_ptr<BrightnessStage> make_brightness_stage_cuda(const BrightnessParams& params,
                                                            int device_id) {
  return std::make_unique<BrightnessStageCuda>(params, device_id);
}

}  // namespace starsift
