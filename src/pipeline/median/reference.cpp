// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/median/reference.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "pipeline/error.hpp"
#include "pipeline/sample_key.hpp"

namespace starsift {

namespace {

// Reads colour channel `c` of pixel (x, y) as an ordered integer key.
std::uint32_t read_key(ConstImageView img, int x, int y, int c) {
  const FormatInfo& info = format_info(img.format);
  const std::byte* px = img.row(y) + static_cast<std::ptrdiff_t>(x) * bytes_per_pixel(img.format);
  switch (info.bytes_per_sample) {
    case 1:
      return std::to_integer<std::uint32_t>(px[c]);
    case 2: {
      std::uint16_t v;
      std::memcpy(&v, px, sizeof v);
      return v;
    }
    default: {
      std::uint32_t bits;
      std::memcpy(&bits, px, sizeof bits);
      return float_bits_to_key(bits);
    }
  }
}

void write_key(ImageView img, int x, int y, int c, std::uint32_t key) {
  const FormatInfo& info = format_info(img.format);
  std::byte* px = img.row(y) + static_cast<std::ptrdiff_t>(x) * bytes_per_pixel(img.format);
  switch (info.bytes_per_sample) {
    case 1:
      px[c] = static_cast<std::byte>(key);
      break;
    case 2: {
      const auto v = static_cast<std::uint16_t>(key);
      std::memcpy(px, &v, sizeof v);
      break;
    }
    default: {
      const std::uint32_t bits = key_to_float_bits(key);
      std::memcpy(px, &bits, sizeof bits);
    }
  }
}

}  // namespace

void median_reference(const MedianParams& params, ConstImageView in, ImageView out,
                      ThreadPool& pool) {
  params.validate_for(in.format);
  if (in.width != out.width || in.height != out.height || in.format != out.format) {
    throw Error("median: output frame differs from input frame in size or format",
                "identical size and format");
  }
  const int r = params.radius();
  const int window = params.size * params.size;
  const std::uint32_t border = median_border_sample(params, in.format);
  const FormatInfo& info = format_info(in.format);

  pool.parallel_for(in.height, [&](int y_begin, int y_end) {
    // On the stack: the per-frame path allocates nothing.
    std::array<std::uint32_t, MedianParams::kMaxSize * MedianParams::kMaxSize> values;
    for (int y = y_begin; y < y_end; ++y) {
      for (int x = 0; x < in.width; ++x) {
        for (int c = 0; c < info.color_channels; ++c) {
          int n = 0;
          for (int dy = 0; dy < params.size; ++dy) {
            const int sy = border_index(y + dy - r, in.height, params.border);
            for (int dx = 0; dx < params.size; ++dx) {
              const int sx = border_index(x + dx - r, in.width, params.border);
              values[n++] = (sx < 0 || sy < 0) ? border : read_key(in, sx, sy, c);
            }
          }
          auto mid = values.begin() + window / 2;
          std::nth_element(values.begin(), mid, values.begin() + window);
          write_key(out, x, y, c, *mid);
        }
        for (int c = info.color_channels; c < info.channels; ++c) {
          write_key(out, x, y, c, read_key(in, x, y, c));
        }
      }
    }
  });
}

}  // namespace starsift
