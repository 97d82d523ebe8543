// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/frame_memory.hpp"

#include <cstdlib>
#include <limits>
#include <string>

#include "pipeline/error.hpp"

#if STARSIFT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace starsift {

FrameMemory allocate_frame_memory(std::size_t bytes) {
  constexpr std::size_t kAlign = 64;
  // Rounding up to kAlign must not wrap around to a small size.
  if (bytes > std::numeric_limits<std::size_t>::max() - (kAlign - 1)) {
    throw Error("cannot allocate " + std::to_string(bytes) +
                " bytes of frame memory: more than the address space holds");
  }
  FrameMemory m;
  m.bytes = bytes;
#if STARSIFT_HAVE_CUDA
  if (cudaHostAlloc(&m.data, bytes, cudaHostAllocDefault) == cudaSuccess) {
    m.pinned = true;
    return m;
  }
  cudaGetLastError();  // no driver or no device: ordinary memory serves the CPU backend
  m.data = nullptr;
#endif
  m.data = std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
  if (m.data == nullptr) {
    throw Error("cannot allocate " + std::to_string(bytes) + " bytes (" +
                std::to_string(bytes >> 20) + " MiB) of frame memory: out of memory");
  }
  return m;
}

void free_frame_memory(const FrameMemory& memory) noexcept {
  if (memory.data == nullptr) return;
#if STARSIFT_HAVE_CUDA
  if (memory.pinned) {
    cudaFreeHost(memory.data);
    return;
  }
#endif
  std::free(memory.data);
}

}  // namespace starsift
