// SPDX-License-Identifier: LGPL-2.1-or-later
// A value asked of the CUDA runtime once for each device and then kept: for launchers that need
// a device's facts at every frame without a runtime query in the hot path.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <mutex>
#include <optional>

namespace starsift::cuda {

// compute(device) for the current device, asked the first time that device comes here and kept
// once it gives a value (nothing: asked again next time); `fallback` where there is no current
// device. Each call site (its own Compute type) keeps its own values.
template <class T, class Compute>
T once_per_device(Compute compute, T fallback) {
  constexpr int kDevices = 64;
  static std::mutex mutex;
  static std::array<std::optional<T>, kDevices> known;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kDevices) {
    cudaGetLastError();
    return fallback;
  }
  const std::lock_guard lock(mutex);
  std::optional<T>& value = known[static_cast<std::size_t>(device)];
  if (!value) value = compute(device);
  return value ? *value : fallback;
}

}  // namespace starsift::cuda
