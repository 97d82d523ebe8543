// SPDX-License-Identifier: LGPL-2.1-or-later
// The memory roofline of a frame set: how fast this device copies those very frames. A filter
// must read and write every pixel at least once, so no filter can beat a copy.
#pragma once

#include <cuda_runtime_api.h>

#include "bench/frame_set.hpp"
#include "bench/json.hpp"
#include "bench/timing.hpp"

namespace starsift::bench {

struct CopyBandwidth {
  double bytes_per_s = 0.0;  // read + written, the faster of the two copies; 0 if both failed
  // { "width", "height", "format", "bytes_per_frame", "frames", "allocated_bytes",
  //   "kernel_gbps", "memcpy2d_gbps", "gbps", "kernel", "memcpy2d",
  //   "kernel_error"?, "memcpy2d_error"? }
  Json json;

  // The most pixels per second any filter reading and writing `bytes_per_pixel` per pixel
  // could produce here.
  double roofline_pix_per_s(int bytes_per_pixel) const {
    return bytes_per_s / (2.0 * bytes_per_pixel);
  }
};

// Times a 16-byte-per-thread copy kernel (copy_frame) and cudaMemcpy2DAsync over the frames
// of `fs`, rotating as every measurement does, and prints one line to stderr.
CopyBandwidth measure_copy_bandwidth(const FrameSet& fs, const TimingPlan& plan,
                                     cudaStream_t stream);

}  // namespace starsift::bench
