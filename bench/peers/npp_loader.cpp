// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bench/peers/npp_loader.hpp"

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "cuda/cuda_check.hpp"

namespace starsift::bench::npp {

namespace {

// Opens `file`; on failure appends dlerror() to `errors` and returns nullptr.
void* try_open(const std::string& file, std::string& errors) {
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char* e = dlerror();
    if (!errors.empty()) errors += "; ";
    errors += e ? e : file + ": dlopen failed";
  }
  return handle;
}

std::string loaded_path(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name) {
    return map->l_name;
  }
  return fallback;
}

template <class Fn>
Fn symbol(void* handle, const char* name) {
  return reinterpret_cast<Fn>(dlsym(handle, name));
}

MedianEntry resolve(void* handle, const char* run, const char* buffer_size, int compare_bytes) {
  MedianEntry e;
  e.name = run;
  e.buffer_size_name = buffer_size;
  e.run = symbol<FilterMedianFn>(handle, run);
  e.buffer_size = symbol<FilterMedianBufferSizeFn>(handle, buffer_size);
  e.compare_bytes = compare_bytes;
  if (!e.run || !e.buffer_size) e = MedianEntry{};
  return e;
}

GaussEntry resolve_gauss(void* handle, const char* run, const char* advanced) {
  GaussEntry e;
  e.name = run;
  e.advanced_name = advanced;
  e.run = symbol<FilterGaussBorderFn>(handle, run);
  e.advanced = symbol<FilterGaussAdvancedBorderFn>(handle, advanced);
  return e;
}

}  // namespace

NppiMaskSize square_mask_size(int width) noexcept {
  switch (width) {
    case 3:
      return 200;  // NPP_MASK_SIZE_3_X_3
    case 5:
      return 201;  // NPP_MASK_SIZE_5_X_5
    case 7:
      return 400;  // NPP_MASK_SIZE_7_X_7
    case 9:
      return 500;  // NPP_MASK_SIZE_9_X_9
    case 11:
      return 600;  // NPP_MASK_SIZE_11_X_11
    case 13:
      return 700;  // NPP_MASK_SIZE_13_X_13
    case 15:
      return 800;  // NPP_MASK_SIZE_15_X_15
    default:
      return -1;
  }
}

Library Library::load() {
  Library lib;
  static constexpr const char* kSonames[] = {"libnppif.so.13", "libnppif.so.12", "libnppif.so"};
  std::string errors;
  void* handle = nullptr;
  std::string opened;
  for (const char* soname : kSonames) {
    std::string error;
    if ((handle = try_open(soname, error))) {
      opened = soname;
      break;
    }
    if (errors.empty()) errors = error;  // the first says it: the others fail alike
  }
  if (!handle) {
    std::vector<std::string> dirs;
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
      if (const char* v = std::getenv(var); v && *v) dirs.push_back(std::string(v) + "/lib64");
    }
    dirs.push_back("/usr/local/cuda/lib64");
    std::string searched;
    for (std::size_t d = 0; d < dirs.size() && !handle; ++d) {
      const std::string& dir = dirs[d];
      if (std::find(dirs.begin(), dirs.begin() + d, dir) != dirs.begin() + d) continue;
      searched += (searched.empty() ? "" : ", ") + dir;
      for (const char* major : {".13", ".12", ""}) {
        std::string ignored;  // the loader's path failed already; these name the same files
        try_open(dir + "/libcudart.so" + major, ignored);
        try_open(dir + "/libnppc.so" + major, ignored);
        const std::string file = dir + "/libnppif.so" + major;
        if ((handle = try_open(file, ignored))) {
          opened = file;
          break;
        }
      }
    }
    if (!handle) errors += "; no libnppif.so* in " + searched;
  }
  if (!handle) {
    lib.reason_ = errors;
    return lib;
  }
  lib.reason_.clear();
  lib.path_ = loaded_path(handle, opened);
  // nppGetLibVersion lives in libnppc, which libnppif depends on: dlsym searches it too.
  using VersionFn = const NppLibraryVersion* (*)();
  if (const auto version = symbol<VersionFn>(handle, "nppGetLibVersion")) {
    if (const NppLibraryVersion* v = version()) {
      lib.version_ = std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                     std::to_string(v->build);
    }
  }
  lib.set_device_ = symbol<SetDeviceFn>(handle, "cudaSetDevice");
  lib.gray8_ =
      resolve(handle, "nppiFilterMedian_8u_C1R_Ctx", "nppiFilterMedianGetBufferSize_8u_C1R_Ctx", 1);
  lib.gray16_ = resolve(handle, "nppiFilterMedian_16u_C1R_Ctx",
                        "nppiFilterMedianGetBufferSize_16u_C1R_Ctx", 2);
  lib.gray32f_ = resolve(handle, "nppiFilterMedian_32f_C1R_Ctx",
                         "nppiFilterMedianGetBufferSize_32f_C1R_Ctx", 4);
  lib.rgba_ = resolve(handle, "nppiFilterMedian_8u_AC4R_Ctx",
                      "nppiFilterMedianGetBufferSize_8u_AC4R_Ctx", 3);
  lib.gauss_gray8_ = resolve_gauss(handle, "nppiFilterGaussBorder_8u_C1R_Ctx",
                                   "nppiFilterGaussAdvancedBorder_8u_C1R_Ctx");
  lib.gauss_gray16_ = resolve_gauss(handle, "nppiFilterGaussBorder_16u_C1R_Ctx",
                                    "nppiFilterGaussAdvancedBorder_16u_C1R_Ctx");
  lib.gauss_gray32f_ = resolve_gauss(handle, "nppiFilterGaussBorder_32f_C1R_Ctx",
                                     "nppiFilterGaussAdvancedBorder_32f_C1R_Ctx");
  lib.gauss_rgba_ = resolve_gauss(handle, "nppiFilterGaussBorder_8u_C4R_Ctx",
                                  "nppiFilterGaussAdvancedBorder_8u_C4R_Ctx");
  const bool any_median = lib.gray8_.run || lib.gray16_.run || lib.gray32f_.run || lib.rgba_.run;
  const bool any_gauss = lib.gauss(PixelFormat::Gray8) || lib.gauss(PixelFormat::Gray16) ||
                         lib.gauss(PixelFormat::Gray32F) || lib.gauss(PixelFormat::Rgba);
  if (!any_median && !any_gauss) {
    lib.reason_ = lib.path_ +
                  " has none of the nppiFilterMedian_*_Ctx and nppiFilterGauss*Border_*_Ctx "
                  "functions";
  }
  return lib;
}

Library Library::unavailable(std::string reason) {
  Library lib;
  lib.reason_ = std::move(reason);
  return lib;
}

const MedianEntry* Library::median(PixelFormat format) const noexcept {
  const MedianEntry* e = nullptr;
  switch (format) {
    case PixelFormat::Gray8:
      e = &gray8_;
      break;
    case PixelFormat::Gray16:
      e = &gray16_;
      break;
    case PixelFormat::Gray32F:
      e = &gray32f_;
      break;
    case PixelFormat::Rgba:
    case PixelFormat::Bgra:
    case PixelFormat::Rgbx:
    case PixelFormat::Bgrx:
      e = &rgba_;
      break;
  }
  return e && e->run ? e : nullptr;
}

const GaussEntry* Library::gauss(PixelFormat format) const noexcept {
  const GaussEntry* e = nullptr;
  switch (format) {
    case PixelFormat::Gray8:
      e = &gauss_gray8_;
      break;
    case PixelFormat::Gray16:
      e = &gauss_gray16_;
      break;
    case PixelFormat::Gray32F:
      e = &gauss_gray32f_;
      break;
    case PixelFormat::Rgba:
    case PixelFormat::Bgra:
    case PixelFormat::Rgbx:
    case PixelFormat::Bgrx:
      e = &gauss_rgba_;
      break;
  }
  return e && (e->run || e->advanced) ? e : nullptr;
}

void Library::use_device(int device) const noexcept {
  if (set_device_) set_device_(device);
}

NppStreamContext Library::context(cudaStream_t stream) {
  NppStreamContext c{};
  c.hStream = stream;
  cuda::check(cudaGetDevice(&c.nCudaDeviceId), "cudaGetDevice");
  cudaDeviceProp prop{};
  cuda::check(cudaGetDeviceProperties(&prop, c.nCudaDeviceId), "cudaGetDeviceProperties");
  c.nMultiProcessorCount = prop.multiProcessorCount;
  c.nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
  c.nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
  c.nSharedMemPerBlock = prop.sharedMemPerBlock;
  c.nCudaDevAttrComputeCapabilityMajor = prop.major;
  c.nCudaDevAttrComputeCapabilityMinor = prop.minor;
  cuda::check(cudaStreamGetFlags(stream, &c.nStreamFlags), "cudaStreamGetFlags");
  return c;
}

}  // namespace starsift::bench::npp
