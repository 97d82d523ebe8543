// One GPU pass over a chain, shared by the synchronous chain and the streaming engine:
// upload a host frame, run every stage on device memory (two intermediates, ping-pong),
// download the result, all queued on one stream. CUDA builds only.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "cuda/device_buffer.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"
#include "pipeline/stage.hpp"

namespace starsift {

class DeviceChainFrames {
 public:
  // Allocates the upload target and the intermediates `stages` stages need.
  void allocate(const FrameShape& shape, std::size_t stages);

  // Queues upload of `in` (host), the stages, and download into `out` (host) on `stream`;
  // returns without waiting. `marks`, when given, holds stages + 3 events recorded before
  // the upload, after it, after each stage and after the download.
  void enqueue(const std::vector<std::unique_ptr<FilterStage>>& stages, ConstImageView in,
               ImageView out, cudaStream_t stream, const cudaEvent_t* marks = nullptr);

 private:
  ImageView view(int i) const;

  cuda::DeviceImage frames_[3];  // upload target, two intermediates
  FrameShape shape_;
};

}  // namespace starsift
