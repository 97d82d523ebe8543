// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/gauss/reference.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "pipeline/error.hpp"

namespace starsift {

namespace {

float read_sample(ConstImageView img, int x, int y, int c) {
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

void write_sample(ImageView img, int x, int y, int c, float value) {
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

void copy_sample(ConstImageView in, ImageView out, int x, int y, int c) {
  const int bytes = format_info(in.format).bytes_per_sample;
  const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(x) * bytes_per_pixel(in.format) + c * bytes;
  std::memcpy(out.row(y) + at, in.row(y) + at, static_cast<std::size_t>(bytes));
}

}  // namespace

void gauss_reference(const GaussParams& params, ConstImageView in, ImageView out,
                     ThreadPool& pool) {
  params.validate_for(in.format);
  if (in.width != out.width || in.height != out.height || in.format != out.format) {
    throw Error("gauss: output frame differs from input frame in size or format",
                "identical size and format");
  }
  const FormatInfo& info = format_info(in.format);
  const int rx = params.effective_radius_x();
  const int ry = params.effective_radius_y();
  const std::vector<float> wx = gauss_weights(params.sigma_x, rx);
  const std::vector<float> wy = gauss_weights(params.sigma_y, ry);
  const auto border = static_cast<float>(params.border_value);
  const int channels = info.color_channels;
  const auto index = [&](int x, int y, int c) {
    return (static_cast<std::size_t>(y) * static_cast<std::size_t>(in.width) +
            static_cast<std::size_t>(x)) *
               static_cast<std::size_t>(channels) +
           static_cast<std::size_t>(c);
  };

  // Along x, every row of the frame, into a float frame.
  std::vector<float> rows(static_cast<std::size_t>(in.width) * in.height * channels);
  pool.parallel_for(in.height, [&](int y_begin, int y_end) {
    for (int y = y_begin; y < y_end; ++y) {
      for (int x = 0; x < in.width; ++x) {
        for (int c = 0; c < channels; ++c) {
          float sum = 0.0f;
          for (int i = -rx; i <= rx; ++i) {
            const int sx = border_index(x + i, in.width, params.border);
            sum += wx[static_cast<std::size_t>(i + rx)] *
                   (sx < 0 ? border : read_sample(in, sx, y, c));
          }
          rows[index(x, y, c)] = sum;
        }
      }
    }
  });
  // Along y, from those rows; a row outside the frame under Constant is the border value
  // (its blur along x is the value itself: the weights sum to 1).
  pool.parallel_for(in.height, [&](int y_begin, int y_end) {
    for (int y = y_begin; y < y_end; ++y) {
      for (int x = 0; x < in.width; ++x) {
        for (int c = 0; c < channels; ++c) {
          float sum = 0.0f;
          for (int j = -ry; j <= ry; ++j) {
            const int sy = border_index(y + j, in.height, params.border);
            sum += wy[static_cast<std::size_t>(j + ry)] * (sy < 0 ? border : rows[index(x, sy, c)]);
          }
          write_sample(out, x, y, c, sum);
        }
        for (int c = channels; c < info.channels; ++c) copy_sample(in, out, x, y, c);
      }
    }
  });
}

}  // namespace starsift
