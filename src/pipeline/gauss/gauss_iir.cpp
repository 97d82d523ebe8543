// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/gauss/gauss_iir.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "pipeline/error.hpp"

namespace starsift {

namespace {

// One padded line in place: the forward recursion, then the backward one, in double (float
// state loses digits over the long responses of large sigma). Each starts in the steady
// state of its first sample: for a constant input the output is that constant (the
// coefficients' B + (b1 + b2 + b3) / b0 is 1).
void yvv_line(double* line, int n, const YvvCoefficients& k) {
  const double a1 = k.b1 / k.b0, a2 = k.b2 / k.b0, a3 = k.b3 / k.b0;
  double w1 = line[0], w2 = line[0], w3 = line[0];
  for (int i = 0; i < n; ++i) {
    const double w = k.B * line[i] + a1 * w1 + a2 * w2 + a3 * w3;
    w3 = w2;
    w2 = w1;
    w1 = w;
    line[i] = w;
  }
  double y1 = line[n - 1], y2 = line[n - 1], y3 = line[n - 1];
  for (int i = n - 1; i >= 0; --i) {
    const double y = k.B * line[i] + a1 * y1 + a2 * y2 + a3 * y3;
    y3 = y2;
    y2 = y1;
    y1 = y;
    line[i] = y;
  }
}

float read_sample(ConstImageView img, int x, int y, int c) {
  const FormatInfo& info = format_info(img.format);
  const std::byte* px = img.row(y) + static_cast<std::ptrdiff_t>(x) * bytes_per_pixel(img.format);
  if (info.bytes_per_sample == 1) return static_cast<float>(std::to_integer<unsigned>(px[c]));
  if (info.bytes_per_sample == 2) {
    std::uint16_t v;
    std::memcpy(&v, px + 2 * c, sizeof v);
    return static_cast<float>(v);
  }
  float v;
  std::memcpy(&v, px + 4 * c, sizeof v);
  return v;
}

void write_sample(ImageView img, int x, int y, int c, float value) {
  const FormatInfo& info = format_info(img.format);
  std::byte* px = img.row(y) + static_cast<std::ptrdiff_t>(x) * bytes_per_pixel(img.format);
  if (info.bytes_per_sample == 1) {
    px[c] = static_cast<std::byte>(static_cast<unsigned>(gauss_round(value, 255.0f)));
  } else if (info.bytes_per_sample == 2) {
    const auto v = static_cast<std::uint16_t>(gauss_round(value, 65535.0f));
    std::memcpy(px + 2 * c, &v, sizeof v);
  } else {
    std::memcpy(px + 4 * c, &value, sizeof value);
  }
}

}  // namespace

YvvCoefficients yvv_coefficients(double sigma) {
  // Young and van Vliet (1995): q from sigma, then the third-order coefficients.
  const double q = sigma >= 2.5 ? 0.98711 * sigma - 0.96330
                                : 3.97156 - 4.14554 * std::sqrt(1.0 - 0.26891 * sigma);
  YvvCoefficients k;
  k.b0 = 1.57825 + 2.44413 * q + 1.4281 * q * q + 0.422205 * q * q * q;
  k.b1 = 2.44413 * q + 2.85619 * q * q + 1.26661 * q * q * q;
  k.b2 = -(1.4281 * q * q + 1.26661 * q * q * q);
  k.b3 = 0.422205 * q * q * q;
  k.B = 1.0 - (k.b1 + k.b2 + k.b3) / k.b0;
  return k;
}

void GaussIir::run(const GaussParams& params, ConstImageView in, ImageView out, ThreadPool& pool) {
  params.validate_for(in.format);
  if (in.width != out.width || in.height != out.height || in.format != out.format) {
    throw Error("gauss: output frame differs from input frame in size or format",
                "identical size and format");
  }
  const FormatInfo& info = format_info(in.format);
  const int channels = info.color_channels;
  const int w = in.width, h = in.height;
  const auto border = static_cast<double>(params.border_value);
  const std::size_t row_samples = static_cast<std::size_t>(w) * channels;
  rows_.resize(row_samples * static_cast<std::size_t>(h));
  const auto at = [&](int x, int y, int c) {
    return static_cast<std::size_t>(y) * row_samples + static_cast<std::size_t>(x) * channels +
           static_cast<std::size_t>(c);
  };

  // Along x: each row and channel padded through the border, filtered, its middle kept.
  const bool blur_x = params.sigma_x > 0.0;
  const YvvCoefficients kx = yvv_coefficients(params.sigma_x);
  const int px = blur_x ? static_cast<int>(std::ceil(kPadSigmas * params.sigma_x)) : 0;
  pool.parallel_for(h, [&](int y_begin, int y_end) {
    thread_local std::vector<double> line;
    line.resize(static_cast<std::size_t>(w + 2 * px));
    for (int y = y_begin; y < y_end; ++y) {
      for (int c = 0; c < channels; ++c) {
        for (int i = -px; i < w + px; ++i) {
          const int sx = border_index(i, w, params.border);
          line[static_cast<std::size_t>(i + px)] = sx < 0 ? border : read_sample(in, sx, y, c);
        }
        if (blur_x) yvv_line(line.data(), w + 2 * px, kx);
        for (int x = 0; x < w; ++x) {
          rows_[at(x, y, c)] = static_cast<float>(line[static_cast<std::size_t>(x + px)]);
        }
      }
    }
  });
  // Along y: each column and channel likewise, from those rows.
  const bool blur_y = params.sigma_y > 0.0;
  const YvvCoefficients ky = yvv_coefficients(params.sigma_y);
  const int py = blur_y ? static_cast<int>(std::ceil(kPadSigmas * params.sigma_y)) : 0;
  pool.parallel_for(w, [&](int x_begin, int x_end) {
    thread_local std::vector<double> line;
    line.resize(static_cast<std::size_t>(h + 2 * py));
    for (int x = x_begin; x < x_end; ++x) {
      for (int c = 0; c < channels; ++c) {
        for (int j = -py; j < h + py; ++j) {
          const int sy = border_index(j, h, params.border);
          line[static_cast<std::size_t>(j + py)] = sy < 0 ? border : rows_[at(x, sy, c)];
        }
        if (blur_y) yvv_line(line.data(), h + 2 * py, ky);
        for (int y = 0; y < h; ++y) {
          write_sample(out, x, y, c, static_cast<float>(line[static_cast<std::size_t>(y + py)]));
        }
      }
      for (int y = 0; y < h; ++y) {
        for (int c = channels; c < info.channels; ++c) {
          const int bytes = info.bytes_per_sample;
          const std::ptrdiff_t o = static_cast<std::ptrdiff_t>(x) * bytes_per_pixel(in.format) +
                                   static_cast<std::ptrdiff_t>(c) * bytes;
          std::memcpy(out.row(y) + o, in.row(y) + o, static_cast<std::size_t>(bytes));
        }
      }
    }
  });
}

}  // namespace starsift
