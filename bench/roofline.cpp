// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bench/roofline.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

#include "bench/bench_kernels.hpp"
#include "bench/report.hpp"

namespace starsift::bench {

CopyBandwidth measure_copy_bandwidth(const FrameSet& fs, const TimingPlan& plan,
                                     cudaStream_t stream) {
  const Launch kernel = [&](int i) -> const char* {
    const cudaError_t s = copy_frame(fs.in(i), fs.out(i), stream);
    return s == cudaSuccess ? nullptr : cudaGetErrorString(s);
  };
  const Launch memcpy2d = [&](int i) -> const char* {
    const ConstImageView in = fs.in(i);
    const ImageView out = fs.out(i);
    const cudaError_t s =
        cudaMemcpy2DAsync(out.data, out.stride, in.data, in.stride, in.row_bytes(), in.height,
                          cudaMemcpyDeviceToDevice, stream);
    return s == cudaSuccess ? nullptr : cudaGetErrorString(s);
  };
  const Timing tk = measure(stream, fs.frames(), plan, kernel);
  const Timing tm = measure(stream, fs.frames(), plan, memcpy2d);
  const double bytes = 2.0 * static_cast<double>(fs.frame_bytes());
  const double kernel_bps = tk.error.empty() ? bytes / (tk.ms_median * 1e-3) : 0.0;
  const double memcpy_bps = tm.error.empty() ? bytes / (tm.ms_median * 1e-3) : 0.0;
  CopyBandwidth c;
  c.bytes_per_s = std::max(kernel_bps, memcpy_bps);
  c.json = Json::object()
               .set("width", fs.width())
               .set("height", fs.height())
               .set("format", to_string(fs.format()))
               .set("bytes_per_frame", static_cast<unsigned long long>(fs.frame_bytes()))
               .set("frames", fs.frames())
               .set("allocated_bytes", static_cast<unsigned long long>(fs.allocated_bytes()))
               .set("kernel_gbps", kernel_bps * 1e-9)
               .set("memcpy2d_gbps", memcpy_bps * 1e-9)
               .set("gbps", c.bytes_per_s * 1e-9)
               .set("kernel", timing_json(tk))
               .set("memcpy2d", timing_json(tm));
  if (!tk.error.empty()) c.json.set("kernel_error", tk.error);
  if (!tm.error.empty()) c.json.set("memcpy2d_error", tm.error);
  std::fprintf(stderr, "copy %s %s: %.0f GB/s read+write (kernel %.0f, memcpy2D %.0f), %d frames\n",
               resolution_name(fs.width(), fs.height()).c_str(),
               std::string(to_string(fs.format())).c_str(), c.bytes_per_s * 1e-9, kernel_bps * 1e-9,
               memcpy_bps * 1e-9, fs.frames());
  return c;
}

}  // namespace starsift::bench
