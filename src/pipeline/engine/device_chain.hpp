// SPDX-License-Identifier: LGPL-2.1-or-later
// One GPU pass over a chain for one slot of the streaming engine: upload a host frame, run
// every stage on device memory (two intermediates, ping-pong), each stage's result into the
// slot's device result area right after it, then download the frame and the results, all
// queued on one stream. CUDA builds only.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <span>
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
  // `placements` (and `result_bytes`, the area's size) say where the stages' results go.
  void allocate(const std::vector<FrameShape>& shapes, std::span<const ResultPlacement> placements,
                std::size_t result_bytes);

  // Records the stages' work on these frames into a CUDA graph, launched from then on by
  // enqueue() in place of the stages one by one (small frames are launch-bound: one graph
  // launch costs less than a launch per stage). Returns false, leaving enqueue() as it was,
  // when a stage is not capturable() or the capture fails. After allocate() only.
  bool capture_stages(const std::vector<std::unique_ptr<FilterStage>>& stages, cudaStream_t stream);
  bool graphed() const noexcept { return static_cast<bool>(graph_); }

  // Queues upload of `in` (host, shapes.front()), the stages, and download into `out` (host,
  // shapes.back(); none when every stage keeps its frame) and of the results into `results` (host,
  // page-locked, the area's size) on `stream`; returns without waiting. `marks`, when given, holds
  // stages + 3 events recorded before the upload, after it, after each stage and after the
  // downloads (with a graph, the stage marks are all recorded after the whole graph).
  void enqueue(const std::vector<std::unique_ptr<FilterStage>>& stages, ConstImageView in,
               ImageView out, std::byte* results, cudaStream_t stream,
               const cudaEvent_t* marks = nullptr);

 private:
  // Frame i (0: upload target, 1 and 2: intermediates) seen as `shape`.
  ImageView view(int i, const FrameShape& shape) const;

  // Queues the stages one by one; returns the frame the last one wrote.
  int enqueue_stages(const std::vector<std::unique_ptr<FilterStage>>& stages, cudaStream_t stream,
                     const cudaEvent_t* marks);

  cuda::DeviceImage frames_[3];
  std::vector<FrameShape> shapes_;
  cuda::DeviceImage results_;  // one row: the stages' result areas
  std::vector<ResultPlacement> placements_;
  std::size_t result_bytes_ = 0;
  cuda::GraphExec graph_;
  int graph_result_ = 0;  // the frame the graphed stages write last
};

}  // namespace starsift
