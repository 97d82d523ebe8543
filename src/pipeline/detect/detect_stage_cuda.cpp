// SPDX-License-Identifier: LGPL-2.1-or-later
// Detection on a CUDA device (src/cuda/detect/ underneath). Like every CUDA stage: process()
// (host frames through the stage's own stream and staging, synchronous: tests and tools) and
// enqueue() (device frames on the caller's stream, nothing waited for). The catalogue stays
// on the device until enqueue_result() writes it into the engine's result area, after the
// frame, on the same stream. The stage keeps no state across frames but its buffers, so
// successive frames on different streams need no ordering between them... except those
// buffers: a frame's passes must not overlap the next frame's, so each frame waits on the
// event the previous one recorded after its catalogue (cudaStreamWaitEvent, never a
// device-wide sync).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/detect/detect.cuh"
#include "cuda/device_buffer.hpp"
#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/detect_stage.hpp"
#include "pipeline/detect/line_channel.hpp"
#include "pipeline/detect/reference.hpp"
#include "pipeline/error.hpp"
#include "pipeline/frame_memory.hpp"
#include "pipeline/host_staging_cuda.hpp"

namespace starsift {

namespace {

class DetectStageCuda final : public DetectStage {
 public:
  DetectStageCuda(const DetectParams& params, int device_id)
      : DetectStage(params), device_id_(device_id) {
    cuda::use_device(device_id_);
    stream_ = std::make_unique<cuda::Stream>();
    done_ = std::make_unique<cuda::SyncEvent>();
  }

  ~DetectStageCuda() override {
    cudaEventSynchronize(done_->get());  // frames queued still use the buffers
    free_frame_memory(host_result_);
  }

  Backend backend() const override { return Backend::Cuda; }
  // The frames wait on the previous frame's event: not a fixed launch sequence.
  bool capturable() const override { return false; }

  void configure(const FrameShape& shape) override { allocate(shape, true); }
  void configure_device(const FrameShape& shape) override { allocate(shape, false); }

  void enqueue(ConstImageView in, ImageView out, void* stream) override {
    if (!configured_) throw Error("detect: enqueue() before configure_device()", "configure first");
    const auto s = static_cast<cudaStream_t>(stream);
    cuda::check(cudaStreamWaitEvent(s, done_->get(), 0), "cudaStreamWaitEvent");
    cuda::check(cuda::launch_detect(params_, buffers_, in, out, s), "detect kernels");
  }

  void enqueue_result(ResultView result, void* stream) const override {
    const auto s = static_cast<cudaStream_t>(stream);
    cuda::check(cuda::launch_detect_catalogue(params_, const_cast<cuda::DetectBuffers&>(buffers_),
                                              result.data, s),
                "detect catalogue");
    cuda::check(cudaEventRecord(done_->get(), s), "cudaEventRecord");
  }

  void process(ConstImageView in, ImageView out) override {
    if (!configured_ || !staging_.ready()) {
      throw Error("detect: process() before configure()", "configure() with the frame shape");
    }
    cuda::use_device(device_id_);
    const cudaStream_t s = stream_->get();
    enqueue(staging_.upload(in, s), staging_.output(out), s);
    enqueue_result({result_.data(), layout_bytes()}, s);
    staging_.download(out, s);
    cuda::check(cudaMemcpyAsync(host_result_.data, result_.data(), layout_bytes(),
                                cudaMemcpyDeviceToHost, s),
                "catalogue download (cudaMemcpyAsync)");
    cuda::check(cudaStreamSynchronize(s), "detect (cudaStreamSynchronize)");
  }

  // process()'s catalogue: header and records, as the engine would hand them back.
  void write_result(ResultView result) const override {
    std::copy_n(static_cast<const std::byte*>(host_result_.data), layout_bytes(), result.data);
  }

 private:
  std::size_t layout_bytes() const { return result_layout()->bytes(); }

  void allocate(const FrameShape& shape, bool staging) {
    params_.validate_for(shape);
    cuda::use_device(device_id_);
    cudaEventSynchronize(done_->get());
    configured_ = false;
    const DetectKernel k = detect_kernel(params_);
    lines_ = make_line_bank(params_.line_length, k);
    buffers_.allocate(params_, shape, k.taps, k.radius, k.norm, lines_);
    staging_.release();
    free_frame_memory(host_result_);
    host_result_ = {};
    result_.release();
    if (staging) {
      staging_.allocate(shape, detect_output_shape(params_, shape));
      result_.allocate(layout_bytes(), 1);
      // process() downloads the whole area; the records past the count are never written.
      cuda::check(cudaMemset(result_.data(), 0, layout_bytes()), "cudaMemset (catalogue)");
      host_result_ = allocate_frame_memory(layout_bytes());
    }
    configured_ = true;
  }

  void apply_params(const DetectParams& params) override {
    if (!configured_) return;
    params.validate_for(buffers_.shape());
    const DetectKernel k = detect_kernel(params);
    // The taps are read by frames queued before: they finish first (a parameter change, not
    // the per-frame path).
    cudaEventSynchronize(done_->get());
    const FrameShape& shape = buffers_.shape();
    if (line_bank_changes(params_, params)) lines_ = make_line_bank(params.line_length, k);
    if (detect_background_plan(params, shape) != detect_background_plan(params_, shape) ||
        params.mesh != params_.mesh || params.connectivity != params_.connectivity) {
      buffers_.allocate(params, buffers_.shape(), k.taps, k.radius, k.norm, lines_);
    } else {
      buffers_.set_filter(k.taps, k.radius, k.norm, lines_);
    }
  }

  int device_id_;
  std::unique_ptr<cuda::Stream> stream_;   // process() only
  std::unique_ptr<cuda::SyncEvent> done_;  // recorded after each frame's catalogue
  cuda::DetectBuffers buffers_;
  LineBank lines_;  // the line channel's bank for params_
  bool configured_ = false;
  HostStaging staging_;       // process() only
  cuda::DeviceImage result_;  // process(): the catalogue
  FrameMemory host_result_;
};

}  // namespace

std::unique_ptr<DetectStage> make_detect_stage_cuda(const DetectParams& params, int device_id) {
  return std::make_unique<DetectStageCuda>(params, device_id);
}

}  // namespace starsift
