// SPDX-License-Identifier: LGPL-2.1-or-later
// A host frame owned by the pipeline (intermediates between stages, engine slots on the
// CPU), allocated when a stage or engine is configured, never per frame.
#pragma once

#include <cstddef>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "pipeline/error.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift {

struct HostFrame {
  std::vector<std::byte> bytes;
  ImageView view;

  // Throws Error naming the size and shape when the memory cannot be had (std::bad_alloc
  // alone says neither).
  void allocate(const FrameShape& shape) {
    const std::size_t size = packed_bytes(shape);
    try {
      bytes.assign(size, std::byte{0});
    } catch (const std::bad_alloc&) {
      throw Error("cannot allocate " + describe(shape, size) + ": out of memory");
    } catch (const std::length_error&) {
      throw Error("cannot allocate " + describe(shape, size) + ": larger than a vector can hold");
    }
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

  // "a 4096x4096 GRAY16_LE host frame (33554432 bytes)"
  static std::string describe(const FrameShape& shape, std::size_t size) {
    return "a " + std::to_string(shape.width) + "x" + std::to_string(shape.height) + " " +
           std::string(to_string(shape.format)) + " host frame (" + std::to_string(size) +
           " bytes)";
  }
};

}  // namespace starsift
