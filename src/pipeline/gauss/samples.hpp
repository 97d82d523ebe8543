// SPDX-License-Identifier: LGPL-2.1-or-later
// One sample of a frame as the Gaussian blur's per-sample paths read and write it (the
// reference and the recursion): as float, colour channel `c` of pixel (x, y); integer formats
// written through gauss_round(); alpha and padding copied.
#pragma once

#include <cstdint>
#include <cstring>

#include "pipeline/gauss/params.hpp"
#include "pipeline/image.hpp"

namespace starsift::gauss_samples {

inline float read_sample(ConstImageView img, int x, int y, int c) {
  const FormatInfo& info = format_info(img.format);
  const std::byte* px = img.row(y) + static_cast<std::ptrdiff_t>(x) * bytes_per_pixel(img.format);
  switch (info.bytes_per_sample) {
    case 1:
      return static_cast<float>(std::to_integer<unsigned>(px[c]));
    case 2: {
      std::uint16_t v;
      std::memcpy(&v, px + 2 * c, sizeof v);
      return static_cast<float>(v);
    }
    default: {
      float v;
      std::memcpy(&v, px + 4 * c, sizeof v);
      return v;
    }
  }
}

inline void write_sample(ImageView img, int x, int y, int c, float value) {
  const FormatInfo& info = format_info(img.format);
  std::byte* px = img.row(y) + static_cast<std::ptrdiff_t>(x) * bytes_per_pixel(img.format);
  const auto rounded = [&](float max) { return gauss_round(value, max); };
  switch (info.bytes_per_sample) {
    case 1:
      px[c] = static_cast<std::byte>(static_cast<unsigned>(rounded(255.0f)));
      break;
    case 2: {
      const auto v = static_cast<std::uint16_t>(rounded(65535.0f));
      std::memcpy(px + 2 * c, &v, sizeof v);
      break;
    }
    default:
      std::memcpy(px + 4 * c, &value, sizeof value);
  }
}

inline void copy_sample(ConstImageView in, ImageView out, int x, int y, int c) {
  const int bytes = format_info(in.format).bytes_per_sample;
  const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(x) * bytes_per_pixel(in.format) + c * bytes;
  std::memcpy(out.row(y) + at, in.row(y) + at, static_cast<std::size_t>(bytes));
}

}  // namespace starsift::gauss_samples
