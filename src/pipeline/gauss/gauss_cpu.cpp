// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/gauss/gauss_cpu.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace starsift {

namespace {

// Row y's colour samples as floats, `channels` per pixel (alpha/padding left out), for
// samples of type T (one loop per format: no branch per sample).
template <class T>
void load_row_as(ConstImageView in, int y, int channels, float* out) {
  const int step = format_info(in.format).channels;
  const std::byte* row = in.row(y);
  for (int x = 0; x < in.width; ++x) {
    for (int c = 0; c < channels; ++c) {
      T v;
      std::memcpy(&v, row + sizeof(T) * (static_cast<std::size_t>(x) * step + c), sizeof v);
      out[static_cast<std::size_t>(x) * channels + c] = static_cast<float>(v);
    }
  }
}

void load_row(ConstImageView in, int y, int channels, float* out) {
  switch (format_info(in.format).bytes_per_sample) {
    case 1:
      return load_row_as<std::uint8_t>(in, y, channels, out);
    case 2:
      return load_row_as<std::uint16_t>(in, y, channels, out);
    default:
      return load_row_as<float>(in, y, channels, out);
  }
}

// Writes one output row of samples of type T from its float sums (integers through
// gauss_round), alpha/padding copied from the input.
template <class T>
void store_row_as(ConstImageView in, ImageView out, int y, int channels, const float* sums) {
  const int step = format_info(out.format).channels;
  std::byte* row = out.row(y);
  const std::byte* src = in.row(y);
  constexpr float kMax = std::is_same_v<T, std::uint8_t> ? 255.0f : 65535.0f;  // T not float
  for (int x = 0; x < out.width; ++x) {
    for (int c = 0; c < step; ++c) {
      const std::size_t at = sizeof(T) * (static_cast<std::size_t>(x) * step + c);
      if (c >= channels) {
        std::memcpy(row + at, src + at, sizeof(T));
        continue;
      }
      const float v = sums[static_cast<std::size_t>(x) * channels + c];
      T sample;
      if constexpr (std::is_same_v<T, float>) {
        sample = v;
      } else {
        sample = static_cast<T>(gauss_round(v, kMax));
      }
      std::memcpy(row + at, &sample, sizeof sample);
    }
  }
}

void store_row(ConstImageView in, ImageView out, int y, int channels, const float* sums) {
  switch (format_info(out.format).bytes_per_sample) {
    case 1:
      return store_row_as<std::uint8_t>(in, out, y, channels, sums);
    case 2:
      return store_row_as<std::uint16_t>(in, out, y, channels, sums);
    default:
      return store_row_as<float>(in, out, y, channels, sums);
  }
}

// On x86-64 the two sum loops are also compiled for AVX2 (8 floats a step, where the baseline
// has 4), chosen at run time; AVX2 alone enables no FMA, so the sums round as the reference's.
#if defined(__x86_64__) && defined(__GNUC__)
#define STARSIFT_GAUSS_CLONES [[gnu::target_clones("avx2", "default")]]
#else
#define STARSIFT_GAUSS_CLONES
#endif

// acc[k] = sum over taps t, in order, of w[t] * src[k + t * stride], for k < n: the same
// sequence of float operations per output as the reference's loop, across k at once.
STARSIFT_GAUSS_CLONES void convolve(const float* src, std::size_t stride, const float* w, int taps,
                                    std::size_t n, float* acc) {
  for (std::size_t k = 0; k < n; ++k) acc[k] = 0.0f;
  for (int t = 0; t < taps; ++t) {
    const float wt = w[t];
    const float* s = src + static_cast<std::size_t>(t) * stride;
    for (std::size_t k = 0; k < n; ++k) acc[k] += wt * s[k];
  }
}

// sums[k] += w * src[k], for k < n: one row of the column pass.
STARSIFT_GAUSS_CLONES void accumulate(float* sums, const float* src, float w, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) sums[k] += w * src[k];
}

}  // namespace

void GaussCpu::run(const GaussParams& params, ConstImageView in, ImageView out, ThreadPool& pool) {
  params.validate_frames(in, out);
  const int channels = format_info(in.format).color_channels;
  const int rx = params.effective_radius_x();
  const int ry = params.effective_radius_y();
  if (weights_for_.sigma_x != params.sigma_x || weights_for_.sigma_y != params.sigma_y ||
      weights_for_.effective_radius_x() != rx || weights_for_.effective_radius_y() != ry ||
      wx_.empty()) {
    wx_ = gauss_weights(params.sigma_x, rx);  // only when the parameters change
    wy_ = gauss_weights(params.sigma_y, ry);
    weights_for_ = params;
  }
  const auto border = static_cast<float>(params.border_value);
  const std::size_t row_samples = static_cast<std::size_t>(in.width) * channels;
  const int slots = 2 * ry + 1;

  // Each thread takes a band of output rows and keeps the last 2 ry + 1 rows blurred along x
  // in a ring, so the float rows between the passes stay in its cache instead of making a
  // whole frame. A virtual row (any y, through the border) is blurred along x when it first
  // enters the ring; a band's first ry rows are also its neighbour's. The sums are the
  // reference's, in its order.
  pool.parallel_for(in.height, [&](int y_begin, int y_end) {
    // Grow to the widest frame and largest radius, then stay: no allocation per frame.
    thread_local std::vector<float> line, padded, ring, sums, constant_row;
    thread_local std::vector<int> ring_rows;
    line.resize(row_samples);
    padded.resize(row_samples + 2 * static_cast<std::size_t>(rx) * channels);
    ring.resize(static_cast<std::size_t>(slots) * row_samples);
    sums.resize(row_samples);
    constant_row.assign(row_samples, border);
    ring_rows.assign(static_cast<std::size_t>(slots), std::numeric_limits<int>::min());

    // Virtual row v blurred along x (the border value's row outside under Constant).
    const auto blurred_row = [&](int v) -> const float* {
      const int sy = border_index(v, in.height, params.border);
      if (sy < 0) return constant_row.data();
      const auto slot = static_cast<std::size_t>(((v % slots) + slots) % slots);
      float* dst = ring.data() + slot * row_samples;
      if (ring_rows[slot] == v) return dst;
      load_row(in, sy, channels, line.data());
      for (int xx = -rx; xx < in.width + rx; ++xx) {
        const int sx = border_index(xx, in.width, params.border);
        float* p = padded.data() + static_cast<std::size_t>(xx + rx) * channels;
        for (int c = 0; c < channels; ++c) {
          p[c] = sx < 0 ? border : line[static_cast<std::size_t>(sx) * channels + c];
        }
      }
      convolve(padded.data(), static_cast<std::size_t>(channels), wx_.data(), 2 * rx + 1,
               row_samples, dst);
      ring_rows[slot] = v;
      return dst;
    };

    for (int y = y_begin; y < y_end; ++y) {
      for (std::size_t k = 0; k < row_samples; ++k) sums[k] = 0.0f;
      for (int j = -ry; j <= ry; ++j) {
        accumulate(sums.data(), blurred_row(y + j), wy_[static_cast<std::size_t>(j + ry)],
                   row_samples);
      }
      store_row(in, out, y, channels, sums.data());
    }
  });
}

}  // namespace starsift
