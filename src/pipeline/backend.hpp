// SPDX-License-Identifier: LGPL-2.1-or-later
// Which processor runs a stage, and how `auto` is resolved.
#pragma once

#include <string>
#include <string_view>

namespace starsift {

enum class Backend { Auto, Cuda, Cpu };

std::string_view to_string(Backend backend) noexcept;
// Accepts "auto", "cuda", "cpu"; throws Error otherwise.
Backend parse_backend(std::string_view name);

// True when this build contains the CUDA backend (nvcc was found at configure time).
bool built_with_cuda() noexcept;

// What a request resolved to. `backend` is never Auto.
struct BackendChoice {
  Backend backend = Backend::Cpu;
  int device_id = 0;
  std::string reason;  // why this backend: "CUDA device 0: NVIDIA H100", "no CUDA driver", ...
};

// Resolves a request:
//  - cpu: the CPU backend.
//  - cuda: the CUDA device `device_id`; throws Error saying why when it is not usable.
//  - auto: the CUDA device when usable, else the CPU backend with a log line saying why.
BackendChoice resolve_backend(Backend requested, int device_id);

// Why CUDA device `device_id` cannot be used, or an empty string when it can. Its name
// ("NVIDIA H100 80GB HBM3, sm_90") is written to `description` when usable.
std::string cuda_unusable_reason(int device_id, std::string* description = nullptr);

// Empty when cuFFT (loaded at run time; whitening's shift estimation on the GPU needs it)
// loads; else why not. A CPU-only build: why there is no CUDA backend.
std::string cufft_unusable_reason();

}  // namespace starsift
