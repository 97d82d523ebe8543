// SPDX-License-Identifier: LGPL-2.1-or-later
// NPP's median and Gaussian filters, loaded at run time (dlopen/dlsym) so that building the
// benchmarks needs no NPP: a host without it still benchmarks starsift and reports why NPP is
// missing.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "pipeline/pixel_format.hpp"

namespace starsift::bench::npp {

// ---- The few NPP types the filter calls use, as nppdefs.h (CUDA 12 and 13) declares them ----

using NppStatus = int;  // NPP_SUCCESS is 0; negative values are errors, positive ones warnings
constexpr NppStatus kSuccess = 0;

struct NppiSize {
  int width;
  int height;
};

struct NppiPoint {
  int x;
  int y;
};

// Passed by value to every *_Ctx function; the application fills every field but the last.
struct NppStreamContext {
  cudaStream_t hStream;
  int nCudaDeviceId;                 // cudaGetDevice()
  int nMultiProcessorCount;          // cudaDeviceProp::multiProcessorCount
  int nMaxThreadsPerMultiProcessor;  // cudaDeviceProp::maxThreadsPerMultiProcessor
  int nMaxThreadsPerBlock;           // cudaDeviceProp::maxThreadsPerBlock
  std::size_t nSharedMemPerBlock;    // cudaDeviceProp::sharedMemPerBlock
  int nCudaDevAttrComputeCapabilityMajor;
  int nCudaDevAttrComputeCapabilityMinor;
  unsigned int nStreamFlags;  // cudaStreamGetFlags()
  int nReserved0;
};
static_assert(offsetof(NppStreamContext, nSharedMemPerBlock) == 24);
static_assert(offsetof(NppStreamContext, nStreamFlags) == 40);
static_assert(sizeof(NppStreamContext) == 48);

struct NppLibraryVersion {
  int major;
  int minor;
  int build;
};

// nppiFilterMedian_<type>_<layout>_Ctx. The pixel pointers are typed (Npp8u*, Npp16u*, Npp32f*)
// in NPP's headers; every pointer passes alike, so one signature covers all of them.
using FilterMedianFn = NppStatus (*)(const void* src, int src_step, void* dst, int dst_step,
                                     NppiSize roi, NppiSize mask, NppiPoint anchor,
                                     unsigned char* buffer, NppStreamContext context);
// nppiFilterMedianGetBufferSize_<type>_<layout>_Ctx. NPP declares the size as Npp32u*; the
// loader passes a zeroed 64-bit word, which reads correctly whether 4 or 8 bytes are written.
using FilterMedianBufferSizeFn = NppStatus (*)(NppiSize roi, NppiSize mask, void* buffer_size,
                                               NppStreamContext context);

// NppiMaskSize: the fixed masks of nppiFilterGaussBorder (an enum, passed as an int).
using NppiMaskSize = int;
// The NppiMaskSize of a square mask `width` pixels wide (NPP_MASK_SIZE_3_X_3 = 200,
// NPP_MASK_SIZE_5_X_5 = 201, NPP_MASK_SIZE_7_X_7 = 400, ... NPP_MASK_SIZE_15_X_15 = 800);
// -1 for a width NPP has no fixed mask of.
NppiMaskSize square_mask_size(int width) noexcept;
inline constexpr int kMaxFixedGaussWidth = 15;

// NppiBorderType (an enum, passed as an int). The Gauss border filters take only replicate.
using NppiBorderType = int;
inline constexpr NppiBorderType kBorderReplicate = 2;  // NPP_BORDER_REPLICATE

// nppiFilterGaussBorder_<type>_<layout>_Ctx: NPP's own Gaussian of a fixed mask size, over the
// ROI at `src_offset` of a `src_size` source, reading outside it through `border`.
using FilterGaussBorderFn = NppStatus (*)(const void* src, int src_step, NppiSize src_size,
                                          NppiPoint src_offset, void* dst, int dst_step,
                                          NppiSize roi, NppiMaskSize mask, NppiBorderType border,
                                          NppStreamContext context);
// nppiFilterGaussAdvancedBorder_<type>_<layout>_Ctx: a separable filter of `taps` (odd)
// caller-given coefficients summing to 1, the same along both axes.
using FilterGaussAdvancedBorderFn = NppStatus (*)(const void* src, int src_step, NppiSize src_size,
                                                  NppiPoint src_offset, void* dst, int dst_step,
                                                  NppiSize roi, int taps, const float* kernel,
                                                  NppiBorderType border, NppStreamContext context);

// The Gaussians of one pixel format; either pointer may be null (symbol missing).
struct GaussEntry {
  const char* name = nullptr;           // "nppiFilterGaussBorder_8u_C1R_Ctx"
  const char* advanced_name = nullptr;  // "nppiFilterGaussAdvancedBorder_8u_C1R_Ctx"
  FilterGaussBorderFn run = nullptr;
  FilterGaussAdvancedBorderFn advanced = nullptr;
};

// The median of one pixel format.
struct MedianEntry {
  const char* name = nullptr;              // "nppiFilterMedian_8u_C1R_Ctx"
  const char* buffer_size_name = nullptr;  // "nppiFilterMedianGetBufferSize_8u_C1R_Ctx"
  FilterMedianFn run = nullptr;
  FilterMedianBufferSizeFn buffer_size = nullptr;
  int compare_bytes = 0;  // bytes per pixel NPP writes (AC4R leaves byte 3 alone)
};

// libnppif, opened once. Never unloaded: NPP keeps state for the life of the process.
class Library {
 public:
  // Tries libnppif.so.13, .12 and .so on the loader's path, then the lib64 folders of
  // $CUDA_HOME, $CUDA_PATH and /usr/local/cuda (preloading libcudart and libnppc from the same
  // folder, so that its dependencies resolve there too).
  static Library load();
  // A library that is not there, for `reason`.
  static Library unavailable(std::string reason);

  bool available() const noexcept { return reason_.empty(); }
  // Why NPP is not available ("libnppif.so.13: cannot open shared object file ...").
  const std::string& reason() const noexcept { return reason_; }
  const std::string& path() const noexcept { return path_; }
  const std::string& version() const noexcept { return version_; }

  // The median for `format`, or nullptr when NPP has none (or the symbol is missing).
  const MedianEntry* median(PixelFormat format) const noexcept;
  // The Gaussians for `format` (8u_C1R, 16u_C1R, 32f_C1R; 8u_C4R for every 4 x 8-bit format,
  // the fourth byte filtered too), or nullptr when NPP has neither.
  const GaussEntry* gauss(PixelFormat format) const noexcept;

  // Makes `device` current for NPP's own CUDA runtime (a shared libcudart, apart from the
  // one linked into the benchmark), so that both work on the same device.
  void use_device(int device) const noexcept;

  // A context for `stream` on the current device. Throws Error when CUDA cannot describe it.
  static NppStreamContext context(cudaStream_t stream);

 private:
  std::string reason_ = "NPP not loaded";
  std::string path_;
  std::string version_;
  using SetDeviceFn = int (*)(int);
  SetDeviceFn set_device_ = nullptr;  // cudaSetDevice of the libcudart libnppif loaded
  MedianEntry gray8_;
  MedianEntry gray16_;
  MedianEntry gray32f_;
  MedianEntry rgba_;  // 8u_AC4R: every 4 x 8-bit format, the fourth byte untouched
  GaussEntry gauss_gray8_;
  GaussEntry gauss_gray16_;
  GaussEntry gauss_gray32f_;
  GaussEntry gauss_rgba_;  // 8u_C4R
};

}  // namespace starsift::bench::npp
