// SPDX-License-Identifier: LGPL-2.1-or-later
// The device frames a CUDA stage's host form (FilterStage::process(): host frames in and out,
// synchronous; tests and tools) stages through, so the stages write only their own work:
// allocate() at configure, then per frame upload(), the stage's enqueue() on the views, and
// download(). CUDA builds only; nothing allocated per frame.
#pragma once

#include <cuda_runtime_api.h>

#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift {

class HostStaging {
 public:
  void allocate(const FrameShape& in, const FrameShape& out) {
    input_.allocate(static_cast<std::size_t>(in.width) * bytes_per_pixel(in.format), in.height);
    output_.allocate(static_cast<std::size_t>(out.width) * bytes_per_pixel(out.format), out.height);
  }
  void release() noexcept {
    input_.release();
    output_.release();
  }
  bool ready() const noexcept { return input_.data() != nullptr; }

  // Queues the upload of `in` on `stream`; the device frame it lands in.
  ConstImageView upload(ConstImageView in, cudaStream_t stream) const {
    cuda::check(cudaMemcpy2DAsync(input_.data(), input_.pitch(), in.data, in.stride, in.row_bytes(),
                                  in.height, cudaMemcpyHostToDevice, stream),
                "upload (cudaMemcpy2DAsync)");
    return {input_.data(), in.width, in.height, static_cast<std::ptrdiff_t>(input_.pitch()),
            in.format};
  }
  // The device frame the stage writes for a host output `out`.
  ImageView output(ImageView out) const noexcept {
    return {output_.data(), out.width, out.height, static_cast<std::ptrdiff_t>(output_.pitch()),
            out.format};
  }
  // Queues the download into `out` on `stream`.
  void download(ImageView out, cudaStream_t stream) const {
    cuda::check(cudaMemcpy2DAsync(out.data, out.stride, output_.data(), output_.pitch(),
                                  out.row_bytes(), out.height, cudaMemcpyDeviceToHost, stream),
                "download (cudaMemcpy2DAsync)");
  }

 private:
  cuda::DeviceImage input_;
  cuda::DeviceImage output_;
};

}  // namespace starsift
