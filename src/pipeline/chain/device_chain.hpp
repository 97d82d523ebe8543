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
  // Allocates the upload target and the intermediates between stages whose shapes are
  // `shapes` (as configure_stage_shapes() returned them: [i] is stage i's input).
  void allocate(const std::vector<FrameShape>& shapes);

  // Queues upload of `in` (host, shapes.front()), the stages, and download into `out` (host,
  // shapes.back()) on `stream`;
  // returns without waiting. `marks`, when given, holds stages + 3 events recorded before
  // the upload, after it, after each stage and after the download.
  void enqueue(const std::vector<std::unique_ptr<FilterStage>>& stages, ConstImageView in,
               ImageView out, cudaStream_t stream, const cudaEvent_t* marks = nullptr);

 private:
  // Frame i (0: upload target, 1 and 2: intermediates) seen as `shape`.
  ImageView view(int i, const FrameShape& shape) const;

  cuda::DeviceImage frames_[3];
  std::vector<FrameShape> shapes_;
};

}  // namespace starsift
