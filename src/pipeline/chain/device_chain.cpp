#include "pipeline/chain/device_chain.hpp"

#include "cuda/cuda_check.hpp"

namespace starsift {

void DeviceChainFrames::allocate(const FrameShape& shape, std::size_t stages) {
  const std::size_t row = static_cast<std::size_t>(shape.width) * bytes_per_pixel(shape.format);
  frames_[0].allocate(row, shape.height);
  frames_[1].allocate(row, shape.height);
  if (stages > 1) {
    frames_[2].allocate(row, shape.height);
  } else {
    frames_[2].release();
  }
  shape_ = shape;
}

ImageView DeviceChainFrames::view(int i) const {
  return {frames_[i].data(), shape_.width, shape_.height,
          static_cast<std::ptrdiff_t>(frames_[i].pitch()), shape_.format};
}

void DeviceChainFrames::enqueue(const std::vector<std::unique_ptr<FilterStage>>& stages,
                                ConstImageView in, ImageView out, cudaStream_t stream,
                                const cudaEvent_t* marks) {
  auto mark = [&](std::size_t i) {
    if (marks) cuda::check(cudaEventRecord(marks[i], stream), "cudaEventRecord");
  };
  const std::size_t row = in.row_bytes();
  mark(0);
  cuda::check(cudaMemcpy2DAsync(frames_[0].data(), frames_[0].pitch(), in.data, in.stride, row,
                                in.height, cudaMemcpyHostToDevice, stream),
              "upload (cudaMemcpy2DAsync)");
  mark(1);
  // Stage i reads frame src and writes frame dst; frame 0 is only ever read after upload.
  int src = 0;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const int dst = src == 1 ? 2 : 1;
    stages[i]->enqueue(const_view(view(src)), view(dst), stream);
    mark(i + 2);
    src = dst;
  }
  cuda::check(cudaMemcpy2DAsync(out.data, out.stride, frames_[src].data(), frames_[src].pitch(),
                                row, in.height, cudaMemcpyDeviceToHost, stream),
              "download (cudaMemcpy2DAsync)");
  mark(stages.size() + 2);
}

}  // namespace starsift
