// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/gauss/reference.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "pipeline/gauss/samples.hpp"

namespace starsift {

void gauss_reference(const GaussParams& params, ConstImageView in, ImageView out,
                     ThreadPool& pool) {
  using namespace gauss_samples;
  params.validate_frames(in, out);
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
