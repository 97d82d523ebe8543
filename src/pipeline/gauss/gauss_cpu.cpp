// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/gauss/gauss_cpu.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "pipeline/error.hpp"

namespace starsift {

namespace {

// Row y's colour samples as floats, `channels` per pixel (alpha/padding left out).
void load_row(ConstImageView in, int y, int channels, float* out) {
  const FormatInfo& info = format_info(in.format);
  const std::byte* row = in.row(y);
  const int step = info.channels;
  for (int x = 0; x < in.width; ++x) {
    for (int c = 0; c < channels; ++c) {
      const std::size_t k = static_cast<std::size_t>(x) * step + c;
      float v;
      if (info.bytes_per_sample == 1) {
        v = static_cast<float>(std::to_integer<unsigned>(row[k]));
      } else if (info.bytes_per_sample == 2) {
        std::uint16_t s;
        std::memcpy(&s, row + 2 * k, sizeof s);
        v = static_cast<float>(s);
      } else {
        std::memcpy(&v, row + 4 * k, sizeof v);
      }
      out[static_cast<std::size_t>(x) * channels + c] = v;
    }
  }
}

// Writes one output row from its float sums: integers rounded to the nearest and clamped,
// alpha/padding copied from the input.
void store_row(ConstImageView in, ImageView out, int y, int channels, const float* sums) {
  const FormatInfo& info = format_info(out.format);
  std::byte* row = out.row(y);
  const std::byte* src = in.row(y);
  const int step = info.channels;
  const auto clamped = [](float v, float max) {
    const float r = std::nearbyint(v);
    return r < 0.0f ? 0.0f : (r > max ? max : r);
  };
  for (int x = 0; x < out.width; ++x) {
    for (int c = 0; c < step; ++c) {
      const std::size_t k = static_cast<std::size_t>(x) * step + c;
      const std::size_t bytes = static_cast<std::size_t>(info.bytes_per_sample);
      if (c >= channels) {
        std::memcpy(row + bytes * k, src + bytes * k, bytes);
        continue;
      }
      const float v = sums[static_cast<std::size_t>(x) * channels + c];
      if (info.bytes_per_sample == 1) {
        row[k] = static_cast<std::byte>(static_cast<unsigned>(clamped(v, 255.0f)));
      } else if (info.bytes_per_sample == 2) {
        const auto s = static_cast<std::uint16_t>(clamped(v, 65535.0f));
        std::memcpy(row + 2 * k, &s, sizeof s);
      } else {
        std::memcpy(row + 4 * k, &v, sizeof v);
      }
    }
  }
}

// acc[k] = sum over taps t, in order, of w[t] * src[k + t * stride], for k < n: the same
// sequence of float operations per output as the reference's loop, across k at once.
void convolve(const float* src, std::size_t stride, const float* w, int taps, std::size_t n,
              float* acc) {
  for (std::size_t k = 0; k < n; ++k) acc[k] = 0.0f;
  for (int t = 0; t < taps; ++t) {
    const float wt = w[t];
    const float* s = src + static_cast<std::size_t>(t) * stride;
    for (std::size_t k = 0; k < n; ++k) acc[k] += wt * s[k];
  }
}

}  // namespace

void GaussCpu::run(const GaussParams& params, ConstImageView in, ImageView out, ThreadPool& pool) {
  params.validate_for(in.format);
  if (in.width != out.width || in.height != out.height || in.format != out.format) {
    throw Error("gauss: output frame differs from input frame in size or format",
                "identical size and format");
  }
  const int channels = format_info(in.format).color_channels;
  const int rx = params.effective_radius_x();
  const int ry = params.effective_radius_y();
  const std::vector<float> wx = gauss_weights(params.sigma_x, rx);
  const std::vector<float> wy = gauss_weights(params.sigma_y, ry);
  const auto border = static_cast<float>(params.border_value);
  const std::size_t row_samples = static_cast<std::size_t>(in.width) * channels;
  rows_.resize(row_samples * static_cast<std::size_t>(in.height));

  // Along x: each row loaded once, padded with rx pixels each side through the border.
  pool.parallel_for(in.height, [&](int y_begin, int y_end) {
    thread_local std::vector<float> line, padded;  // grow to the widest row, then stay
    line.resize(row_samples);
    padded.resize(row_samples + 2 * static_cast<std::size_t>(rx) * channels);
    for (int y = y_begin; y < y_end; ++y) {
      load_row(in, y, channels, line.data());
      for (int xx = -rx; xx < in.width + rx; ++xx) {
        const int sx = border_index(xx, in.width, params.border);
        float* p = padded.data() + static_cast<std::size_t>(xx + rx) * channels;
        for (int c = 0; c < channels; ++c) {
          p[c] = sx < 0 ? border : line[static_cast<std::size_t>(sx) * channels + c];
        }
      }
      convolve(padded.data(), static_cast<std::size_t>(channels), wx.data(), 2 * rx + 1,
               row_samples, rows_.data() + static_cast<std::size_t>(y) * row_samples);
    }
  });
  // Along y: the blurred rows the window covers, through the border (a row outside under
  // Constant is the border value, as in the reference).
  pool.parallel_for(in.height, [&](int y_begin, int y_end) {
    thread_local std::vector<float> sums, constant_row;
    sums.resize(row_samples);
    constant_row.assign(row_samples, border);
    for (int y = y_begin; y < y_end; ++y) {
      for (std::size_t k = 0; k < row_samples; ++k) sums[k] = 0.0f;
      for (int j = -ry; j <= ry; ++j) {
        const int sy = border_index(y + j, in.height, params.border);
        const float* src = sy < 0 ? constant_row.data()
                                  : rows_.data() + static_cast<std::size_t>(sy) * row_samples;
        const float wj = wy[static_cast<std::size_t>(j + ry)];
        for (std::size_t k = 0; k < row_samples; ++k) sums[k] += wj * src[k];
      }
      store_row(in, out, y, channels, sums.data());
    }
  });
}

}  // namespace starsift
