// SPDX-License-Identifier: LGPL-2.1-or-later
// Test frames on the device, for the GPU tests: a TestImage uploaded with a padded pitch of
// its own (the padding filled with 0xA5, so a kernel that writes past a row is caught).
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "cuda/cuda_check.hpp"
#include "support/test_image.hpp"

namespace starsift::test {

// A device copy of a TestImage with its own padded pitch (padding filled with 0xA5).
struct DeviceCopy {
  DeviceCopy(const TestImage& host, int pad_bytes)
      : width(host.width), height(host.height), format(host.format) {
    row = static_cast<std::size_t>(width) * bytes_per_pixel(format);
    pitch = row + pad_bytes;
    cuda::check(cudaMalloc(&ptr, pitch * height), "cudaMalloc");
    cuda::check(cudaMemset(ptr, 0xA5, pitch * height), "cudaMemset");
    cuda::check(cudaMemcpy2D(ptr, pitch, host.bytes.data(), host.stride, row, height,
                             cudaMemcpyHostToDevice),
                "upload");
  }
  ~DeviceCopy() { cudaFree(ptr); }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  ImageView view() {
    return {static_cast<std::byte*>(ptr), width, height, static_cast<std::ptrdiff_t>(pitch),
            format};
  }
  TestImage download() const {
    TestImage out(width, height, format);
    cuda::check(
        cudaMemcpy2D(out.bytes.data(), out.stride, ptr, pitch, row, height, cudaMemcpyDeviceToHost),
        "download");
    return out;
  }
  bool padding_untouched() const {
    std::vector<unsigned char> all(pitch * height);
    cuda::check(cudaMemcpy(all.data(), ptr, all.size(), cudaMemcpyDeviceToHost), "download");
    for (int y = 0; y < height; ++y)
      for (std::size_t b = row; b < pitch; ++b)
        if (all[y * pitch + b] != 0xA5) return false;
    return true;
  }
  int width, height;
  PixelFormat format;
  std::size_t row = 0, pitch = 0;
  void* ptr = nullptr;
};

}  // namespace starsift::test
