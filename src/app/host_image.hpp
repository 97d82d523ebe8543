// SPDX-License-Identifier: LGPL-2.1-or-later
// An image that owns its pixels in host memory, with views for the pipeline.
#pragma once

#include <cstddef>
#include <vector>

#include "pipeline/image.hpp"

namespace starsift::app {

class HostImage {
 public:
  HostImage(int width, int height, PixelFormat format)
      : width_(width),
        height_(height),
        format_(format),
        stride_(static_cast<std::ptrdiff_t>(width) * bytes_per_pixel(format)),
        bytes_(static_cast<std::size_t>(stride_) * height) {}

  ImageView view() { return {bytes_.data(), width_, height_, stride_, format_}; }
  ConstImageView cview() const { return {bytes_.data(), width_, height_, stride_, format_}; }

  int width() const noexcept { return width_; }
  int height() const noexcept { return height_; }

 private:
  int width_;
  int height_;
  PixelFormat format_;
  std::ptrdiff_t stride_;
  std::vector<std::byte> bytes_;
};

}  // namespace starsift::app
