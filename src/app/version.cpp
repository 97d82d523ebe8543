// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/version.hpp"

#include <cstdio>
#include <string>

#include "pipeline/backend.hpp"

#ifndef STARSIFT_VERSION
#define STARSIFT_VERSION "unknown"
#endif
#ifndef STARSIFT_CUDA_DESCRIPTION
#define STARSIFT_CUDA_DESCRIPTION ""
#endif

namespace starsift::app {

void print_version() {
  std::printf("starsift %s\n", STARSIFT_VERSION);
  if (!built_with_cuda()) {
    std::printf("backends: cpu (a CPU-only build: nvcc was not found when it was configured)\n");
    return;
  }
  std::printf("backends: cuda (%s), cpu\n", STARSIFT_CUDA_DESCRIPTION);
  std::string description;
  const std::string why_not = cuda_unusable_reason(0, &description);
  if (why_not.empty()) {
    std::printf("CUDA device 0: %s\n", description.c_str());
  } else {
    std::printf("CUDA device 0: not usable (%s); backend=auto runs on the CPU\n", why_not.c_str());
  }
  const std::string fft_why_not = cufft_unusable_reason();
  std::printf("cuFFT: %s\n", fft_why_not.empty() ? "loaded" : fft_why_not.c_str());
}

}  // namespace starsift::app
