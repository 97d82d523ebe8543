// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/brightness/luminance_blur.hpp"

#include <algorithm>
#include <cmath>

#include "pipeline/border.hpp"
#include "pipeline/brightness/params.hpp"
#include "pipeline/brightness/rows.hpp"
#include "pipeline/gauss/params.hpp"

namespace starsift {

namespace {

#if defined(__x86_64__) && defined(__GNUC__)
#define STARSIFT_BRIGHTNESS_CLONES [[gnu::target_clones("avx2", "default")]]
#else
#define STARSIFT_BRIGHTNESS_CLONES
#endif

// sums[x] += w row[x]
STARSIFT_BRIGHTNESS_CLONES void add_scaled(float* sums, const float* row, float w, int n) {
  for (int x = 0; x < n; ++x) sums[x] += w * row[x];
}

// out[x] = a[x] + t (b[x] - a[x])
STARSIFT_BRIGHTNESS_CLONES void lerp_rows(const float* a, const float* b, float t, int n,
                                          float* out) {
  for (int x = 0; x < n; ++x) out[x] = a[x] + t * (b[x] - a[x]);
}

ImageView plane_view(std::vector<float>& plane, int width, int height) {
  return {reinterpret_cast<std::byte*>(plane.data()), width, height,
          static_cast<std::ptrdiff_t>(width) * 4, PixelFormat::Gray32F};
}

}  // namespace

int LuminanceBlur::downsample_factor(double sigma) noexcept {
  int factor = 1;
  while (factor < kMaxFactor && sigma / (2 * factor) >= kMinSmallSigma) factor *= 2;
  return factor;
}

int LuminanceBlur::small_samples(int pixels, int factor) noexcept {
  if (factor == 1 || pixels == 1) return pixels;
  return (pixels - 1 + factor - 1) / factor + 1;
}

double LuminanceBlur::small_sigma(double sigma, double spacing) noexcept {
  if (spacing <= 1.0) return sigma;
  const double variance = sigma * sigma - spacing * spacing / 3.0;
  return std::sqrt(std::max(variance, 0.0)) / spacing;
}

void LuminanceBlur::Axis::build(int pixel_count, int factor) {
  if (pixel_count == pixels && samples == small_samples(pixel_count, factor) &&
      !tap_begin.empty()) {
    return;
  }
  pixels = pixel_count;
  samples = small_samples(pixel_count, factor);
  spacing = samples > 1 ? static_cast<double>(pixels - 1) / (samples - 1) : 1.0;
  tap_begin.assign(1, 0);
  tap_pixel.clear();
  tap_weight.clear();
  for (int i = 0; i < samples; ++i) {
    // The tent of half-width s around the sample: weight 1 - |x - c| / s.
    const double centre = i * spacing;
    const int first = static_cast<int>(std::floor(centre - spacing)) + 1;
    const int last = static_cast<int>(std::ceil(centre + spacing)) - 1;
    double sum = 0.0;
    const std::size_t begin = tap_weight.size();
    for (int x = first; x <= last; ++x) {
      const double w = 1.0 - std::abs(x - centre) / spacing;
      if (w <= 0.0) continue;
      tap_pixel.push_back(border_index(x, pixels, BorderMode::Reflect101));
      tap_weight.push_back(static_cast<float>(w));
      sum += w;
    }
    for (std::size_t k = begin; k < tap_weight.size(); ++k) {
      tap_weight[k] = static_cast<float>(tap_weight[k] / sum);
    }
    tap_begin.push_back(static_cast<int>(tap_weight.size()));
  }
  left.resize(static_cast<std::size_t>(pixels));
  fraction.resize(static_cast<std::size_t>(pixels));
  for (int p = 0; p < pixels; ++p) {
    const double u = p / spacing;
    const int i = samples > 1 ? std::min(static_cast<int>(u), samples - 2) : 0;
    left[static_cast<std::size_t>(p)] = i;
    fraction[static_cast<std::size_t>(p)] =
        samples > 1 ? static_cast<float>(std::min(u - i, 1.0)) : 0.0f;
  }
}

void LuminanceBlur::prepare(const FrameShape& shape, double sigma, ConstImageView in,
                            ThreadPool& pool) {
  const auto max = static_cast<float>(brightness_sample_max(shape));
  width_ = shape.width;
  height_ = shape.height;
  factor_ = downsample_factor(sigma);
  const int chunks = static_cast<int>(pool.size());
  GaussParams blur;
  blur.border = BorderMode::Reflect101;

  if (factor_ == 1) {
    // The exact blur of the Y plane.
    const std::size_t size = static_cast<std::size_t>(width_) * height_;
    small_.resize(size);
    blurred_.resize(size);
    pool.parallel_for(height_, [&](int y_begin, int y_end) {
      for (int y = y_begin; y < y_end; ++y) {
        brightness_rows::load_luminance(in, y, max,
                                        small_.data() + static_cast<std::size_t>(y) * width_);
      }
    });
    blur.sigma_x = blur.sigma_y = sigma;
    direct_.run(blur, const_view(plane_view(small_, width_, height_)),
                plane_view(blurred_, width_, height_), pool);
    return;
  }

  x_.build(width_, factor_);
  y_.build(height_, factor_);
  const int sw = x_.samples;
  const int sh = y_.samples;
  const std::size_t small_size = static_cast<std::size_t>(sw) * sh;
  small_.resize(small_size);
  blurred_.resize(small_size);
  const std::size_t line_floats = static_cast<std::size_t>(width_) + sw;
  lines_.resize(static_cast<std::size_t>(chunks) * line_floats);

  // 1. Each small row: the tents down of the rows reduced by the tents across.
  pool.parallel_for(chunks, [&](int chunk_begin, int chunk_end) {
    for (int chunk = chunk_begin; chunk < chunk_end; ++chunk) {
      float* lum = lines_.data() + static_cast<std::size_t>(chunk) * line_floats;
      float* reduced = lum + width_;
      const int j_begin = static_cast<int>(static_cast<long long>(sh) * chunk / chunks);
      const int j_end = static_cast<int>(static_cast<long long>(sh) * (chunk + 1) / chunks);
      for (int j = j_begin; j < j_end; ++j) {
        float* small_row = small_.data() + static_cast<std::size_t>(j) * sw;
        std::fill(small_row, small_row + sw, 0.0f);
        for (int k = y_.tap_begin[j]; k < y_.tap_begin[j + 1]; ++k) {
          brightness_rows::load_luminance(in, y_.tap_pixel[k], max, lum);
          for (int i = 0; i < sw; ++i) {
            float sum = 0.0f;
            for (int t = x_.tap_begin[i]; t < x_.tap_begin[i + 1]; ++t) {
              sum += x_.tap_weight[t] * lum[x_.tap_pixel[t]];
            }
            reduced[i] = sum;
          }
          add_scaled(small_row, reduced, y_.tap_weight[k], sw);
        }
      }
    }
  });

  // 2. The small plane blurred, each pixel's spread made up to sigma.
  blur.sigma_x = small_sigma(sigma, x_.spacing);
  blur.sigma_y = small_sigma(sigma, y_.spacing);
  const ConstImageView small = const_view(plane_view(small_, sw, sh));
  const ImageView blurred = plane_view(blurred_, sw, sh);
  if (std::max(blur.sigma_x, blur.sigma_y) >= GaussParams::kRecursiveFromSigma) {
    recursive_.run(blur, small, blurred, pool);
  } else {
    direct_.run(blur, small, blurred, pool);
  }

  // 3. Each blurred row interpolated to the full width once; row() then blends two.
  upsampled_rows_.resize(static_cast<std::size_t>(sh) * width_);
  pool.parallel_for(sh, [&](int j_begin, int j_end) {
    for (int j = j_begin; j < j_end; ++j) {
      const float* src = blurred_.data() + static_cast<std::size_t>(j) * sw;
      float* dst = upsampled_rows_.data() + static_cast<std::size_t>(j) * width_;
      for (int x = 0; x < width_; ++x) {
        const int i = x_.left[static_cast<std::size_t>(x)];
        const float a = src[i];
        const float b = src[std::min(i + 1, sw - 1)];
        dst[x] = a + x_.fraction[static_cast<std::size_t>(x)] * (b - a);
      }
    }
  });
}

const float* LuminanceBlur::row(int y, float* scratch) const {
  if (factor_ == 1) return blurred_.data() + static_cast<std::size_t>(y) * width_;
  const int j = y_.left[static_cast<std::size_t>(y)];
  const int j1 = std::min(j + 1, y_.samples - 1);
  lerp_rows(upsampled_rows_.data() + static_cast<std::size_t>(j) * width_,
            upsampled_rows_.data() + static_cast<std::size_t>(j1) * width_,
            y_.fraction[static_cast<std::size_t>(y)], width_, scratch);
  return scratch;
}

}  // namespace starsift
