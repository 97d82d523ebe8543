// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cuda/cuda_check.hpp"

#include "pipeline/error.hpp"

namespace starsift::cuda {

void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  throw Error(std::string("CUDA ") + what + " failed: " + cudaGetErrorName(status) + " (" +
              cudaGetErrorString(status) + ")");
}

}  // namespace starsift::cuda
