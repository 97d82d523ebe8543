// SPDX-License-Identifier: LGPL-2.1-or-later
// Blocks a kernel asks the compiler to fit on each multiprocessor (__launch_bounds__' second
// argument, which bounds its registers), within what the architecture being compiled holds:
// 2048 threads a multiprocessor on compute capability 8.0 and 9.0, 1536 on 8.6, 8.7 and 8.9,
// 1024 on 7.5. ptxas ignores a request beyond that with a warning; this keeps the request
// where it was chosen (measured on an H200) and the most the others hold elsewhere.
// And the dynamic shared memory a kernel may take, and how it asks for more.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace starsift::cuda {

__host__ __device__ constexpr int threads_per_sm() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ != 800 && __CUDA_ARCH__ < 900
#if __CUDA_ARCH__ >= 860
  return 1536;
#else
  return 1024;
#endif
#else
  return 2048;
#endif
}

// `wanted` blocks of `threads` a multiprocessor, or as many as it holds where that is fewer.
__host__ __device__ constexpr int blocks_per_sm(int wanted, int threads) {
  return wanted < threads_per_sm() / threads ? wanted : threads_per_sm() / threads;
}

// Dynamic shared memory a kernel may use without opting in.
inline constexpr std::size_t kDefaultSharedBytes = 48 * 1024;

// Lets `kernel` take `bytes` of dynamic shared memory on the current device: past
// kDefaultSharedBytes a kernel must opt in, and the attribute is per device, so a launcher calls
// this at each such launch (a host call, no synchronisation). The call's status.
template <class Kernel>
cudaError_t allow_shared(Kernel kernel, std::size_t bytes) {
  if (bytes <= kDefaultSharedBytes) return cudaSuccess;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(bytes));
}

}  // namespace starsift::cuda
