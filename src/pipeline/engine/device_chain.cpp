// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/engine/device_chain.hpp"

#include <algorithm>

#include "cuda/cuda_check.hpp"
#include "pipeline/engine/stage_shapes.hpp"

namespace starsift {

void DeviceChainFrames::allocate(const std::vector<FrameShape>& shapes,
                                 std::span<const ResultPlacement> placements,
                                 std::size_t result_bytes) {
  const FrameShape& in = shapes.front();
  frames_[0].allocate(static_cast<std::size_t>(in.width) * bytes_per_pixel(in.format), in.height);
  // Stage i writes frame 1 or 2, whichever it does not read; the last stage's result is
  // downloaded from there too. One stage needs one, more need both.
  std::size_t row = largest_intermediate_row(shapes);
  const FrameShape& out = shapes.back();
  row = std::max(row, static_cast<std::size_t>(out.width) * bytes_per_pixel(out.format));
  frames_[1].allocate(row, in.height);
  if (shapes.size() > 2) {
    frames_[2].allocate(row, in.height);
  } else {
    frames_[2].release();
  }
  if (result_bytes > 0) {
    results_.allocate(result_bytes, 1);
    cuda::check(cudaMemset(results_.data(), 0, result_bytes), "cudaMemset");
  } else {
    results_.release();
  }
  placements_.assign(placements.begin(), placements.end());
  result_bytes_ = result_bytes;
  shapes_ = shapes;
  graph_.reset();  // it names the frames just replaced
}

ImageView DeviceChainFrames::view(int i, const FrameShape& shape) const {
  return {frames_[i].data(), shape.width, shape.height,
          static_cast<std::ptrdiff_t>(frames_[i].pitch()), shape.format};
}

int DeviceChainFrames::enqueue_stages(const std::vector<std::unique_ptr<FilterStage>>& stages,
                                      cudaStream_t stream, const cudaEvent_t* marks) {
  // Stage i reads frame src and writes frame dst; frame 0 is only ever read after upload. A
  // stage that keeps its frame writes none: the next reads what it read.
  int src = 0;
  auto placement = placements_.cbegin();
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const int dst = stages[i]->keeps_frame() ? src : src == 1 ? 2 : 1;
    stages[i]->enqueue(const_view(view(src, shapes_[i])), view(dst, shapes_[i + 1]), stream);
    if (placement != placements_.cend() && placement->stage == i) {
      stages[i]->enqueue_result({results_.data() + placement->offset, placement->layout.bytes()},
                                stream);
      ++placement;
    }
    if (marks) cuda::check(cudaEventRecord(marks[i + 2], stream), "cudaEventRecord");
    src = dst;
  }
  return src;
}

bool DeviceChainFrames::capture_stages(const std::vector<std::unique_ptr<FilterStage>>& stages,
                                       cudaStream_t stream) {
  graph_.reset();
  for (const auto& stage : stages) {
    if (!stage->capturable()) return false;
  }
  cudaGraph_t graph = nullptr;
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  int result = 0;
  try {
    result = enqueue_stages(stages, stream, nullptr);
  } catch (...) {
    // The capture must end whatever happened; the chain then runs stage by stage.
    cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    return false;
  }
  if (cudaStreamEndCapture(stream, &graph) != cudaSuccess || graph == nullptr) {
    cudaGetLastError();
    return false;
  }
  cudaGraphExec_t exec = nullptr;
  const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  if (made != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  graph_.reset(exec);
  graph_result_ = result;
  return true;
}

void DeviceChainFrames::enqueue(const std::vector<std::unique_ptr<FilterStage>>& stages,
                                ConstImageView in, ImageView out, std::byte* results,
                                cudaStream_t stream, const cudaEvent_t* marks) {
  auto mark = [&](std::size_t i) {
    if (marks) cuda::check(cudaEventRecord(marks[i], stream), "cudaEventRecord");
  };
  mark(0);
  cuda::check(cudaMemcpy2DAsync(frames_[0].data(), frames_[0].pitch(), in.data, in.stride,
                                in.row_bytes(), in.height, cudaMemcpyHostToDevice, stream),
              "upload (cudaMemcpy2DAsync)");
  mark(1);
  int src = 0;
  if (graph_) {
    cuda::check(cudaGraphLaunch(graph_.get(), stream), "stages (cudaGraphLaunch)");
    for (std::size_t i = 0; i < stages.size(); ++i) mark(i + 2);
    src = graph_result_;
  } else {
    src = enqueue_stages(stages, stream, marks);
  }
  // Frame 0 at the end: every stage kept its frame, which the caller holds already.
  if (src != 0) {
    cuda::check(cudaMemcpy2DAsync(out.data, out.stride, frames_[src].data(), frames_[src].pitch(),
                                  out.row_bytes(), out.height, cudaMemcpyDeviceToHost, stream),
                "download (cudaMemcpy2DAsync)");
  }
  if (result_bytes_ > 0) {
    cuda::check(
        cudaMemcpyAsync(results, results_.data(), result_bytes_, cudaMemcpyDeviceToHost, stream),
        "results download (cudaMemcpyAsync)");
  }
  mark(stages.size() + 2);
}

}  // namespace starsift
