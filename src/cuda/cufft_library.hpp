// SPDX-License-Identifier: LGPL-2.1-or-later
// cuFFT, loaded when first needed rather than linked: the plugin then loads on a camera host
// that has the NVIDIA driver but not the CUDA toolkit (cuFFT comes only with the toolkit, not
// from a Debian package), and only the stage that needs it (whitening's shift estimation on
// the GPU) fails there, naming the library and what to do instead.
#pragma once

#include <cufft.h>

namespace starsift::cuda {

struct CufftLibrary {
  cufftResult (*plan_2d)(cufftHandle* plan, int nx, int ny, cufftType type);
  cufftResult (*destroy)(cufftHandle plan);
  cufftResult (*set_stream)(cufftHandle plan, cudaStream_t stream);
  cufftResult (*exec_r2c)(cufftHandle plan, cufftReal* in, cufftComplex* out);
  cufftResult (*exec_c2r)(cufftHandle plan, cufftComplex* in, cufftReal* out);
};

// The loaded library; loads it on the first call (thread-safe). Throws starsift::Error
// saying which files were tried and what the user can do when it cannot be loaded.
const CufftLibrary& cufft();

}  // namespace starsift::cuda
