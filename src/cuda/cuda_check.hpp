// SPDX-License-Identifier: LGPL-2.1-or-later
// Error plumbing for CUDA runtime calls: launchers return cudaError_t (CUB style); the
// pipeline layer turns a failure into starsift::Error with the call that failed.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace starsift::cuda {

// Throws starsift::Error("CUDA <what> failed: <error string>") when `status` is not success.
void check(cudaError_t status, const char* what);

// Runs `expr`; returns its error from the enclosing function when it fails.
#define STARSIFT_CUDA_TRY(expr)                                   \
  do {                                                            \
    const cudaError_t starsift_status_ = (expr);                  \
    if (starsift_status_ != cudaSuccess) return starsift_status_; \
  } while (0)

}  // namespace starsift::cuda
