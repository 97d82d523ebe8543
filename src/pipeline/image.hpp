// SPDX-License-Identifier: LGPL-2.1-or-later
// Non-owning views of strided images in host or device memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "pipeline/pixel_format.hpp"

namespace starsift {

// `Byte` is std::byte or const std::byte. `stride` is the distance between the starts of
// two rows in bytes; it may exceed width * bytes_per_pixel (padded rows), never be less.
template <class Byte>
struct BasicImageView {
  Byte* data = nullptr;
  int width = 0;
  int height = 0;
  std::ptrdiff_t stride = 0;
  PixelFormat format = PixelFormat::Gray8;

  Byte* row(int y) const { return data + static_cast<std::ptrdiff_t>(y) * stride; }

  template <class T>
  auto row_as(int y) const {
    using Out = std::conditional_t<std::is_const_v<Byte>, const T, T>;
    return reinterpret_cast<Out*>(row(y));
  }

  std::size_t row_bytes() const {
    return static_cast<std::size_t>(width) * bytes_per_pixel(format);
  }
};

using ImageView = BasicImageView<std::byte>;
using ConstImageView = BasicImageView<const std::byte>;

inline ConstImageView const_view(const ImageView& v) {
  return {v.data, v.width, v.height, v.stride, v.format};
}

}  // namespace starsift
