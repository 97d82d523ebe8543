// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cuda/device_query.hpp"

#include <cuda_runtime_api.h>

#include <optional>

#include "cuda/per_device.hpp"

namespace starsift::cuda {

std::string device_unusable_reason(int device_id, std::string* description) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return std::string("no usable NVIDIA driver/GPU (") + cudaGetErrorName(status) + ": " +
           cudaGetErrorString(status) + ")";
  }
  if (count == 0) return "no CUDA device present";
  if (device_id >= count) {
    return "device-id " + std::to_string(device_id) + " out of range, " + std::to_string(count) +
           " device(s) present";
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device_id) != cudaSuccess) {
    cudaGetLastError();
    return "cannot read the properties of device " + std::to_string(device_id);
  }
  if (prop.major < 7) {
    return "compute capability " + std::to_string(prop.major) + "." + std::to_string(prop.minor) +
           " is below the 7.0 this build needs";
  }
  if (description) {
    *description =
        std::string(prop.name) + ", sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
  }
  return {};
}

DeviceFacts current_device_facts() {
  return once_per_device(
      [](int device) -> std::optional<DeviceFacts> {
        DeviceFacts f;
        const auto ask = [&](int& value, cudaDeviceAttr attribute) {
          return cudaDeviceGetAttribute(&value, attribute, device) == cudaSuccess;
        };
        if (!ask(f.multiprocessors, cudaDevAttrMultiProcessorCount) ||
            !ask(f.major, cudaDevAttrComputeCapabilityMajor) ||
            !ask(f.shared_per_block_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin)) {
          cudaGetLastError();
          return std::nullopt;
        }
        return f;
      },
      DeviceFacts{});
}

}  // namespace starsift::cuda
