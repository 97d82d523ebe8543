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
    const auto stride = static_cast<std::ptrdiff_t>(shape.width) * bytes_per_pixel(shape.format);
    bytes.assign(static_cast<std::size_t>(stride) * shape.height, std::byte{0});
    view = {bytes.data(), shape.width, shape.height, stride, shape.format};
  }
};

}  // namespace starsift
