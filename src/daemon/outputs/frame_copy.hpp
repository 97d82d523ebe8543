// SPDX-License-Identifier: LGPL-2.1-or-later
// A frame copied out of a GStreamer buffer (which must go back to its pool at once: a camera
// has only a few), with what the outputs need to know about it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift::daemon {

struct FrameCopy {
  std::vector<std::byte> pixels;  // rows packed: stride = width * bytes per pixel
  int width = 0;
  int height = 0;
  PixelFormat format = PixelFormat::Gray16;
  std::int64_t pts_ns = -1;
  std::int64_t utc_us = 0;
  std::uint64_t frame = 0;  // the pipeline's frame number
  double exposure_s = 0.0;  // the frame's duration, when known (0 otherwise)

  std::ptrdiff_t stride() const noexcept {
    return static_cast<std::ptrdiff_t>(width) * bytes_per_pixel(format);
  }
  ConstImageView view() const noexcept { return {pixels.data(), width, height, stride(), format}; }
  // Copies `image` (any stride) into this frame, reusing the pixels' memory.
  void assign(ConstImageView image);
};

}  // namespace starsift::daemon
