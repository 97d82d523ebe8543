// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift-bench-clahe-cuda: times launch_clahe() on device frames at 1024^2, 2048^2 and
// 4096^2, GRAY8 and GRAY16 at bit depths 12, 14 and 16, on uniform random frames (every
// histogram flat, every map entry read at random) and on a sky-like frame (a background with
// a gradient, Gaussian noise, a few bright pixels); checks each output against
// clahe_reference() and prints a Markdown table.
//
//   starsift-bench-clahe-cuda [--tiles 8] [--clip 2] [--calls 50]
//
// Timing: 5 untimed launches, then cudaEvents around --calls launches on one stream; the
// table gives the mean per launch (all three kernels).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda/brightness/clahe.cuh"
#include "cuda/cuda_check.hpp"
#include "pipeline/brightness/clahe.hpp"
#include "pipeline/error.hpp"

using namespace starsift;

namespace {

struct Case {
  int size;
  PixelFormat format;
  int bits;
  bool sky;
};

std::vector<std::byte> make_frame(const Case& c, std::mt19937& rng) {
  const int top = (1 << c.bits) - 1;
  const int bytes = c.format == PixelFormat::Gray8 ? 1 : 2;
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<std::byte> frame(static_cast<std::size_t>(c.size) * c.size * bytes);
  for (int y = 0; y < c.size; ++y)
    for (int x = 0; x < c.size; ++x) {
      double v = rng() % (top + 1u);
      if (c.sky) {
        v = (0.08 + 0.05 * x / c.size + 0.004 * noise(rng)) * top;
        if (rng() % 2000 == 0) v = top * (0.2 + 0.8 * (rng() % 1000) / 1000.0);
      }
      const auto s = static_cast<std::uint16_t>(std::clamp(std::lround(v), 0L, long{top}));
      std::memcpy(&frame[(static_cast<std::size_t>(y) * c.size + x) * bytes], &s, bytes);
    }
  return frame;
}

}  // namespace

int main(int argc, char** argv) try {
  BrightnessParams p;
  p.mode = BrightnessMode::Clahe;
  int calls = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--tiles")
      p.tiles_x = p.tiles_y = std::atoi(argv[i + 1]);
    else if (key == "--clip")
      p.clip_limit = std::atof(argv[i + 1]);
    else if (key == "--calls")
      calls = std::max(1, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: starsift-bench-clahe-cuda [--tiles N] [--clip C] [--calls N]\n");
      return 2;
    }
  }
  cudaDeviceProp prop{};
  cuda::check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("%s; tiles %dx%d, clip %g; mean of %d launches\n\n", prop.name, p.tiles_x, p.tiles_y,
              p.clip_limit, calls);
  std::printf("| frame | format | bits | data | us | Gpix/s | scratch MiB | pixels |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  ThreadPool pool;
  std::mt19937 rng(1);
  cudaStream_t stream;
  cuda::check(cudaStreamCreate(&stream), "cudaStreamCreate");
  cudaEvent_t start, stop;
  cuda::check(cudaEventCreate(&start), "cudaEventCreate");
  cuda::check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int size : {1024, 2048, 4096})
    for (bool sky : {false, true})
      for (const auto& [format, bits] :
           {std::pair{PixelFormat::Gray8, 8}, std::pair{PixelFormat::Gray16, 12},
            std::pair{PixelFormat::Gray16, 14}, std::pair{PixelFormat::Gray16, 16}}) {
        const Case c{size, format, bits, sky};
        const std::vector<std::byte> host = make_frame(c, rng);
        const std::ptrdiff_t stride = static_cast<std::ptrdiff_t>(size) * bytes_per_pixel(format);
        const std::size_t scratch_bytes =
            cuda::clahe_scratch_bytes(p, FrameShape{size, size, format, bits});
        void *in = nullptr, *out = nullptr, *scratch = nullptr;
        cuda::check(cudaMalloc(&in, host.size()), "cudaMalloc");
        cuda::check(cudaMalloc(&out, host.size()), "cudaMalloc");
        cuda::check(cudaMalloc(&scratch, scratch_bytes), "cudaMalloc");
        cuda::check(cudaMemcpy(in, host.data(), host.size(), cudaMemcpyHostToDevice), "upload");
        const ConstImageView d_in{static_cast<const std::byte*>(in), size, size, stride, format};
        const ImageView d_out{static_cast<std::byte*>(out), size, size, stride, format};
        const auto launch = [&] {
          cuda::check(cuda::launch_clahe(p, bits, d_in, d_out, {scratch, scratch_bytes}, stream),
                      "launch_clahe");
        };
        for (int i = 0; i < 5; ++i) launch();
        cuda::check(cudaEventRecord(start, stream), "cudaEventRecord");
        for (int i = 0; i < calls; ++i) launch();
        cuda::check(cudaEventRecord(stop, stream), "cudaEventRecord");
        cuda::check(cudaEventSynchronize(stop), "cudaEventSynchronize");
        float ms = 0;
        cuda::check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        ms /= static_cast<float>(calls);

        std::vector<std::byte> got(host.size()), want(host.size());
        cuda::check(cudaMemcpy(got.data(), out, got.size(), cudaMemcpyDeviceToHost), "download");
        clahe_reference(p, bits, ConstImageView{host.data(), size, size, stride, format},
                        ImageView{want.data(), size, size, stride, format}, pool);
        std::printf("| %d² | %s | %d | %s | %.1f | %.1f | %.1f | %s |\n", size,
                    std::string(to_string(format)).c_str(), bits, sky ? "sky" : "uniform", ms * 1e3,
                    size * static_cast<double>(size) / (ms * 1e6), scratch_bytes / 1048576.0,
                    got == want ? "identical to the reference" : "DIFFER from the reference");
        cudaFree(in);
        cudaFree(out);
        cudaFree(scratch);
      }
  return 0;
} catch (const Error& e) {
  std::fprintf(stderr, "starsift-bench-clahe-cuda: %s\n", e.what());
  return 1;
}
