// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/outputs/frame_copy.hpp"

#include <cstring>

namespace starsift::daemon {

void FrameCopy::assign(ConstImageView image) {
  width = image.width;
  height = image.height;
  format = image.format;
  const auto row_bytes = static_cast<std::size_t>(stride());
  pixels.resize(row_bytes * static_cast<std::size_t>(height));
  for (int y = 0; y < height; ++y) {
    std::memcpy(pixels.data() + row_bytes * static_cast<std::size_t>(y), image.row(y), row_bytes);
  }
}

}  // namespace starsift::daemon
