// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/backend.hpp"

#include <spdlog/spdlog.h>

#include "pipeline/error.hpp"

#if STARSIFT_HAVE_CUDA
#include "cuda/cufft_library.hpp"
#include "cuda/device_query.hpp"
#endif

namespace starsift {

std::string_view to_string(Backend backend) noexcept {
  switch (backend) {
    case Backend::Auto:
      return "auto";
    case Backend::Cuda:
      return "cuda";
    case Backend::Cpu:
      return "cpu";
  }
  return "?";
}

Backend parse_backend(std::string_view name) {
  if (name == "auto") return Backend::Auto;
  if (name == "cuda") return Backend::Cuda;
  if (name == "cpu") return Backend::Cpu;
  throw Error("unknown backend '" + shown_value(name) + "'", "auto, cuda, cpu");
}

bool built_with_cuda() noexcept {
  return STARSIFT_HAVE_CUDA != 0;
}

std::string cuda_unusable_reason(int device_id, std::string* description) {
#if STARSIFT_HAVE_CUDA
  return cuda::device_unusable_reason(device_id, description);
#else
  (void)device_id;
  (void)description;
  return "this build has no CUDA backend (nvcc was not found when it was configured)";
#endif
}

std::string cufft_unusable_reason() {
#if STARSIFT_HAVE_CUDA
  try {
    cuda::cufft();
    return {};
  } catch (const Error& e) {
    return e.problem();
  }
#else
  return cuda_unusable_reason(0, nullptr);
#endif
}

BackendChoice resolve_backend(Backend requested, int device_id) {
  if (device_id < 0) {
    throw Error("device-id " + std::to_string(device_id) + " is negative", "0 or more");
  }
  if (requested == Backend::Cpu) return {Backend::Cpu, device_id, "backend=cpu requested"};

  std::string description;
  const std::string why_not = cuda_unusable_reason(device_id, &description);
  if (why_not.empty()) {
    return {Backend::Cuda, device_id,
            "CUDA device " + std::to_string(device_id) + ": " + description};
  }
  if (requested == Backend::Cuda) {
    throw Error(
        "backend=cuda, but CUDA device " + std::to_string(device_id) + " is not usable: " + why_not,
        "backend=cpu or backend=auto on this machine");
  }
  spdlog::info("starsift: backend=auto runs on the CPU: {}", why_not);
  return {Backend::Cpu, device_id, "CPU (CUDA not usable: " + why_not + ")"};
}

}  // namespace starsift
