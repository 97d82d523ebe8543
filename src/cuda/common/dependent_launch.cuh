// SPDX-License-Identifier: LGPL-2.1-or-later
// Kernels of one frame launched back to back with programmatic dependent launch (Hopper and
// later): a kernel launched by launch_after() may be scheduled while the kernel before it in
// the stream drains its last blocks, and waits in wait_for_prior_grid() until that kernel has
// finished and its writes are visible. What it does before the wait must not read what the
// kernel before writes (the frame's own pixels, tables built earlier). The kernel before
// lets it be scheduled early by calling allow_dependent_grid(); without that call, or on an
// older device, every launch is ordered as a plain launch is, and both device calls do
// nothing.
//
// Why: the small plane's kernels of the brightness correction run a few microseconds each on
// a few hundred blocks; a plain launch leaves the GPU idle while each grid drains and the next
// one starts.
#pragma once

#include <cuda_runtime.h>

#include "cuda/device_query.hpp"

namespace starsift::cuda {

__device__ __forceinline__ void wait_for_prior_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void allow_dependent_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Whether the current device takes programmatic dependent launches (compute capability 9.0
// and later); false where it cannot be asked.
inline bool dependent_launch_supported() {
  return current_device_facts().major >= 9;
}

// kernel<<<grid, block, 0, stream>>>(args...), allowed to start as the kernel before it in
// `stream` drains where `dependent` (dependent_launch_supported()); the launch's status.
template <class... Params, class... Args>
cudaError_t launch_after(bool dependent, void (*kernel)(Params...), dim3 grid, dim3 block,
                         cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = dependent ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...);
}

}  // namespace starsift::cuda
