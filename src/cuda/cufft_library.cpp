// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cuda/cufft_library.hpp"

#include <dlfcn.h>

#include <string>

#include "pipeline/error.hpp"

namespace starsift::cuda {

namespace {

// The soname of the toolkit the build used first, then the other majors whose API these five
// calls share, then the toolkit's own directory (not always in the loader's cache).
const char* const kCandidates[] = {
    STARSIFT_CUFFT_SONAME,
    "libcufft.so.12",
    "libcufft.so.11",
    STARSIFT_CUDA_LIBRARY_DIR "/" STARSIFT_CUFFT_SONAME,
    "/usr/local/cuda/lib64/" STARSIFT_CUFFT_SONAME,
};

template <typename F>
void bind(void* handle, const char* name, F*& to, std::string& missing) {
  to = reinterpret_cast<F*>(dlsym(handle, name));
  if (to == nullptr) missing += std::string(missing.empty() ? "" : ", ") + name;
}

struct Loaded {
  CufftLibrary api{};
  std::string error;  // empty once loaded
};

Loaded load() {
  Loaded loaded;
  std::string tried;
  void* handle = nullptr;
  for (const char* name : kCandidates) {
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) break;
    tried += std::string(tried.empty() ? "" : "; ") + dlerror();
  }
  if (handle == nullptr) {
    loaded.error =
        "cuFFT, which whitening's shift estimation needs on the GPU, is not on this "
        "host (tried: " +
        tried + ")";
    return loaded;
  }
  std::string missing;
  bind(handle, "cufftPlan2d", loaded.api.plan_2d, missing);
  bind(handle, "cufftDestroy", loaded.api.destroy, missing);
  bind(handle, "cufftSetStream", loaded.api.set_stream, missing);
  bind(handle, "cufftExecR2C", loaded.api.exec_r2c, missing);
  bind(handle, "cufftExecC2R", loaded.api.exec_c2r, missing);
  if (!missing.empty()) {
    loaded.error = "the cuFFT library found lacks " + missing;
    dlclose(handle);
  }
  // Otherwise kept open for the life of the process: plans made from it may live as long.
  return loaded;
}

}  // namespace

const CufftLibrary& cufft() {
  static const Loaded loaded = load();
  if (!loaded.error.empty()) {
    throw Error(loaded.error,
                "the CUDA toolkit's cuFFT (libcufft, from NVIDIA's cuda-toolkit or "
                "libcufft packages), or whiten shift: none, or backend cpu");
  }
  return loaded.api;
}

}  // namespace starsift::cuda
