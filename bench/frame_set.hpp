// SPDX-License-Identifier: LGPL-2.1-or-later
// The frames a GPU benchmark times a filter on: input/output pairs, more of them than the L2
// holds twice over, filled with seeded random samples before any timing, so that each call
// reads a frame that is no longer in the cache.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cuda/device_buffer.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift::bench {

struct Resolution {
  int width = 0;
  int height = 0;
};

// "4096x4096".
std::string resolution_name(int width, int height);

// Parses "WxH" (a valid frame size). Throws Error naming `option` and the value.
Resolution parse_resolution(std::string_view text, std::string_view option);

// Input/output pairs (cudaMallocPitch), together more than twice `l2_bytes` and at least 3;
// inputs and outputs filled with seeded random samples (fill_random) before the constructor
// returns.
class FrameSet {
 public:
  FrameSet(Resolution r, PixelFormat format, std::size_t l2_bytes, std::uint64_t seed,
           cudaStream_t stream);

  int frames() const noexcept { return static_cast<int>(inputs_.size()); }
  int width() const noexcept { return width_; }
  int height() const noexcept { return height_; }
  PixelFormat format() const noexcept { return format_; }
  int bpp() const noexcept { return bytes_per_pixel(format_); }
  // Bytes of one frame's pixels (no row padding).
  std::size_t frame_bytes() const { return static_cast<std::size_t>(width_) * height_ * bpp(); }
  // Bytes allocated for every pair, row padding included.
  std::size_t allocated_bytes() const {
    return 2 * inputs_[0].pitch() * static_cast<std::size_t>(height_) * inputs_.size();
  }

  ConstImageView in(int i) const { return starsift::const_view(view(inputs_[i])); }
  ImageView out(int i) const { return view(outputs_[i]); }

 private:
  void add_pair(std::size_t row_bytes);
  ImageView view(const cuda::DeviceImage& d) const {
    return {d.data(), width_, height_, static_cast<std::ptrdiff_t>(d.pitch()), format_};
  }

  int width_;
  int height_;
  PixelFormat format_;
  std::vector<cuda::DeviceImage> inputs_;
  std::vector<cuda::DeviceImage> outputs_;
};

// The part of `v` at least `r` pixels from every edge.
template <class View>
View interior(View v, int r) {
  v.data += static_cast<std::ptrdiff_t>(r) * v.stride +
            static_cast<std::ptrdiff_t>(r) * bytes_per_pixel(v.format);
  v.width -= 2 * r;
  v.height -= 2 * r;
  return v;
}

}  // namespace starsift::bench
