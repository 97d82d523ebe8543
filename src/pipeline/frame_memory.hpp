// SPDX-License-Identifier: LGPL-2.1-or-later
// Host memory for frames that the GPU transfers: page-locked (cudaHostAlloc) when a CUDA
// device is usable, so copies are true asynchronous DMA; ordinary aligned memory otherwise.
#pragma once

#include <cstddef>

namespace starsift {

struct FrameMemory {
  void* data = nullptr;
  std::size_t bytes = 0;
  bool pinned = false;  // page-locked for DMA
};

// Throws Error when no memory can be had.
FrameMemory allocate_frame_memory(std::size_t bytes);
void free_frame_memory(const FrameMemory& memory) noexcept;

}  // namespace starsift
