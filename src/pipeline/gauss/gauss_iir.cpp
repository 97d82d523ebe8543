// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/gauss/gauss_iir.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "pipeline/gauss/samples.hpp"

namespace starsift {

namespace {

// Deriche's fourth-order recursion (1993) on one padded line, in place: the Gaussian as the
// sum of a causal and an anticausal filter of order 4, in double (float state loses digits
// over the long responses of large sigma), scaled so the whole passes a constant unchanged.
// `tmp` holds the causal part. Each starts in the steady state of its first sample.
void deriche_line(double* line, int n, const DericheCoefficients& k, double* tmp) {
  const double* x = line;
  // Causal: y+(i) = n0 x(i) + n1 x(i-1) + n2 x(i-2) + n3 x(i-3) - d1 y+(i-1) - ... - d4 y+(i-4)
  double xm1 = x[0], xm2 = x[0], xm3 = x[0];
  const double y0 = k.causal_gain * x[0];
  double ym1 = y0, ym2 = y0, ym3 = y0, ym4 = y0;
  for (int i = 0; i < n; ++i) {
    const double y = k.n0 * x[i] + k.n1 * xm1 + k.n2 * xm2 + k.n3 * xm3 - k.d1 * ym1 - k.d2 * ym2 -
                     k.d3 * ym3 - k.d4 * ym4;
    xm3 = xm2;
    xm2 = xm1;
    xm1 = x[i];
    ym4 = ym3;
    ym3 = ym2;
    ym2 = ym1;
    ym1 = y;
    tmp[i] = y;
  }
  // Anticausal: y-(i) = m1 x(i+1) + ... + m4 x(i+4) - d1 y-(i+1) - ... - d4 y-(i+4)
  const double last = x[n - 1];
  double xp1 = last, xp2 = last, xp3 = last, xp4 = last;
  const double z0 = k.anticausal_gain * last;
  double yp1 = z0, yp2 = z0, yp3 = z0, yp4 = z0;
  for (int i = n - 1; i >= 0; --i) {
    const double y = k.m1 * xp1 + k.m2 * xp2 + k.m3 * xp3 + k.m4 * xp4 - k.d1 * yp1 - k.d2 * yp2 -
                     k.d3 * yp3 - k.d4 * yp4;
    xp4 = xp3;
    xp3 = xp2;
    xp2 = xp1;
    xp1 = x[i];
    yp4 = yp3;
    yp3 = yp2;
    yp2 = yp1;
    yp1 = y;
    line[i] = (tmp[i] + y) * k.scale;
  }
}

}  // namespace

void GaussIir::run(const GaussParams& params, ConstImageView in, ImageView out, ThreadPool& pool) {
  using namespace gauss_samples;
  params.validate_frames(in, out);
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
  const DericheCoefficients kx = deriche_coefficients(params.sigma_x);
  const int px = blur_x ? static_cast<int>(std::ceil(kPadSigmas * params.sigma_x)) : 0;
  pool.parallel_for(h, [&](int y_begin, int y_end) {
    thread_local std::vector<double> line, tmp;
    line.resize(static_cast<std::size_t>(w + 2 * px));
    tmp.resize(line.size());
    for (int y = y_begin; y < y_end; ++y) {
      for (int c = 0; c < channels; ++c) {
        for (int i = -px; i < w + px; ++i) {
          const int sx = border_index(i, w, params.border);
          line[static_cast<std::size_t>(i + px)] = sx < 0 ? border : read_sample(in, sx, y, c);
        }
        if (blur_x) deriche_line(line.data(), w + 2 * px, kx, tmp.data());
        for (int x = 0; x < w; ++x) {
          rows_[at(x, y, c)] = static_cast<float>(line[static_cast<std::size_t>(x + px)]);
        }
      }
    }
  });
  // Along y: each column and channel likewise, from those rows.
  const bool blur_y = params.sigma_y > 0.0;
  const DericheCoefficients ky = deriche_coefficients(params.sigma_y);
  const int py = blur_y ? static_cast<int>(std::ceil(kPadSigmas * params.sigma_y)) : 0;
  pool.parallel_for(w, [&](int x_begin, int x_end) {
    thread_local std::vector<double> line, tmp;
    line.resize(static_cast<std::size_t>(h + 2 * py));
    tmp.resize(line.size());
    for (int x = x_begin; x < x_end; ++x) {
      for (int c = 0; c < channels; ++c) {
        for (int j = -py; j < h + py; ++j) {
          const int sy = border_index(j, h, params.border);
          line[static_cast<std::size_t>(j + py)] = sy < 0 ? border : rows_[at(x, sy, c)];
        }
        if (blur_y) deriche_line(line.data(), h + 2 * py, ky, tmp.data());
        for (int y = 0; y < h; ++y) {
          write_sample(out, x, y, c, static_cast<float>(line[static_cast<std::size_t>(y + py)]));
        }
      }
      for (int y = 0; y < h; ++y) {
        for (int c = channels; c < info.channels; ++c) copy_sample(in, out, x, y, c);
      }
    }
  });
}

}  // namespace starsift
