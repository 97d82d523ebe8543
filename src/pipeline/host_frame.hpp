// A host frame owned by the pipeline (intermediates between stages, engine slots on the
// CPU), allocated when a stage or engine is configured, never per frame.
#pragma once

#include <cstddef>
#include <vector>

#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift {

struct HostFrame {
  std::vector<std::byte> bytes;
  ImageView view;

  void allocate(const FrameShape& shape) {
    bytes.assign(packed_bytes(shape), std::byte{0});
    view = as(shape);
  }

  // The memory seen as a packed frame of `shape` (which must fit in bytes).
  ImageView as(const FrameShape& shape) {
    const auto stride = static_cast<std::ptrdiff_t>(shape.width) * bytes_per_pixel(shape.format);
    return {bytes.data(), shape.width, shape.height, stride, shape.format};
  }

  static std::size_t packed_bytes(const FrameShape& shape) {
    return static_cast<std::size_t>(shape.width) * bytes_per_pixel(shape.format) * shape.height;
  }
};

}  // namespace starsift
