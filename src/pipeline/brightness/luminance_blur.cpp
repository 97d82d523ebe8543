// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/brightness/luminance_blur.hpp"

#include <algorithm>
#include <cmath>

#include "pipeline/border.hpp"
#include "pipeline/brightness/params.hpp"
#include "pipeline/brightness/rows.hpp"
#include "pipeline/brightness/tent_axis.hpp"
#include "pipeline/gauss/params.hpp"

namespace starsift {

namespace {

// As rows.cpp: AVX-512, AVX2 and the baseline, chosen at run time.
#if defined(__x86_64__) && defined(__GNUC__)
#define STARSIFT_BRIGHTNESS_CLONES [[gnu::target_clones("avx512f", "avx2", "default")]]
#else
#define STARSIFT_BRIGHTNESS_CLONES
#endif

// sums[x] += w row[x]
STARSIFT_BRIGHTNESS_CLONES void add_scaled(float* sums, const float* row, float w, int n) {
  for (int x = 0; x < n; ++x) sums[x] += w * row[x];
}

// towards_left[x] = lum[x] to_left[x], towards_right[x] = lum[x] to_right[x]
STARSIFT_BRIGHTNESS_CLONES void weigh(const float* lum, const float* to_left, const float* to_right,
                                      int n, float* towards_left, float* towards_right) {
  for (int x = 0; x < n; ++x) {
    towards_left[x] = lum[x] * to_left[x];
    towards_right[x] = lum[x] * to_right[x];
  }
}

// sums[x] = a[x] + sums[x]
STARSIFT_BRIGHTNESS_CLONES void add_to(float* sums, const float* a, int n) {
  for (int x = 0; x < n; ++x) sums[x] = a[x] + sums[x];
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

void LuminanceBlur::Axis::build(int pixel_count, int factor) {
  if (pixel_count == pixels && samples == small_samples(pixel_count, factor) && !left.empty()) {
    return;
  }
  pixels = pixel_count;
  samples = small_samples(pixel_count, factor);
  spacing = tent_axis::spacing(pixels, samples);
  const auto n = static_cast<std::size_t>(pixels);
  left.assign(n, 0);
  fraction.assign(n, 0.0f);
  to_left.assign(n, 1.0f);
  to_right.assign(n, 0.0f);
  run_begin.assign(static_cast<std::size_t>(samples), pixels);
  if (samples == 1) {  // one pixel: the sample is that pixel
    run_begin[0] = 0;
    return;
  }
  // The tent of sample i (at i s): 1 - |p - i s| / s. Pixels beyond the frame read their
  // mirror image (reflect-101), which lies under the edge sample's tent too.
  std::vector<double> wl(n), wr(n), total(static_cast<std::size_t>(samples), 0.0);
  for (int p = pixels - 1; p >= 0; --p) {
    const tent_axis::Spot s = tent_axis::spot(p, pixels, samples, spacing);
    const int i = s.left;
    const auto k = static_cast<std::size_t>(p);
    left[k] = i;
    fraction[k] = static_cast<float>(s.fraction);
    wl[k] = s.to_left;
    wr[k] = s.to_right;
    total[static_cast<std::size_t>(i)] += wl[k];
    total[static_cast<std::size_t>(i) + 1] += wr[k];
    run_begin[static_cast<std::size_t>(i)] = p;
  }
  for (std::size_t k = 0; k < n; ++k) {
    const auto i = static_cast<std::size_t>(left[k]);
    to_left[k] = static_cast<float>(wl[k] / total[i]);
    to_right[k] = static_cast<float>(wr[k] / total[i + 1]);
  }
  run_begin[static_cast<std::size_t>(samples) - 1] = pixels;
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
  // 1. The small plane: each row of the frame read once (twice where two thread chunks
  // meet), reduced across by the tents, and added to the two small rows whose tents it lies
  // under. Small row r is (run r - 1's rows times to_right) + (run r's rows times to_left),
  // each sum from 0 in the rows' order, as the samples across add their runs (and as the CUDA
  // kernel, which sums each run's rows in one block, adds them).
  const std::size_t line_floats = 3 * static_cast<std::size_t>(width_) + 3 * sw;
  lines_.resize(static_cast<std::size_t>(chunks) * line_floats);
  pool.parallel_for(chunks, [&](int chunk_begin, int chunk_end) {
    for (int chunk = chunk_begin; chunk < chunk_end; ++chunk) {
      float* lum = lines_.data() + static_cast<std::size_t>(chunk) * line_floats;
      float* towards_left = lum + width_;
      float* towards_right = towards_left + width_;
      float* reduced = towards_right + width_;
      float* towards_next = reduced + sw;       // run r's rows times to_right: small row r + 1's
      float* towards_this = towards_next + sw;  // run r - 1's: small row r's
      const int j_begin = static_cast<int>(static_cast<long long>(sh) * chunk / chunks);
      const int j_end = static_cast<int>(static_cast<long long>(sh) * (chunk + 1) / chunks);
      if (j_begin >= j_end) continue;
      std::fill(small_.data() + static_cast<std::size_t>(j_begin) * sw,
                small_.data() + static_cast<std::size_t>(j_end) * sw, 0.0f);
      const auto reduce_row = [&](int y) {
        brightness_rows::load_luminance(in, y, max, lum);
        if (sw == 1) {
          reduced[0] = lum[0];
          return;
        }
        weigh(lum, x_.to_left.data(), x_.to_right.data(), width_, towards_left, towards_right);
        std::fill(reduced, reduced + sw, 0.0f);
        for (int i = 0; i + 1 < sw; ++i) {
          float a = 0.0f, b = 0.0f;
          for (int x = x_.run_begin[i]; x < x_.run_begin[i + 1]; ++x) {
            a += towards_left[x];
            b += towards_right[x];
          }
          reduced[i] += a;
          reduced[i + 1] += b;
        }
      };
      if (sh == 1) {
        reduce_row(0);
        std::copy(reduced, reduced + sw, small_.data());
        continue;
      }
      // Runs r - 1 .. r of rows feed small row r; this chunk's rows j_begin .. j_end - 1.
      const int run_first = std::max(j_begin - 1, 0);
      const int run_last = std::min(j_end - 1, sh - 2);
      // The chunk's first row holds no run before it that this chunk sums (run -1, or the
      // run the chunk before sums as its last).
      bool has_this = false;
      for (int r = run_first; r <= run_last; ++r) {
        std::fill(towards_next, towards_next + sw, 0.0f);
        float* const small_row = small_.data() + static_cast<std::size_t>(r) * sw;
        for (int y = y_.run_begin[r]; y < y_.run_begin[r + 1]; ++y) {
          reduce_row(y);
          const auto k = static_cast<std::size_t>(y);
          if (r >= j_begin) add_scaled(small_row, reduced, y_.to_left[k], sw);
          if (r + 1 < j_end) add_scaled(towards_next, reduced, y_.to_right[k], sw);
        }
        if (r >= j_begin && has_this) add_to(small_row, towards_this, sw);
        std::swap(towards_next, towards_this);
        has_this = r + 1 < j_end;
      }
      // Small row run_last + 1 (the last, whose run is empty) when the chunk holds it
      // (has_this): run_last's sum towards it, plus its own 0.
      if (has_this) {
        add_to(small_.data() + static_cast<std::size_t>(run_last + 1) * sw, towards_this, sw);
      }
    }
  });

  // 2. The small plane blurred, each pixel's spread made up to sigma.
  blur.sigma_x = small_sigma(sigma, x_.spacing);
  blur.sigma_y = small_sigma(sigma, y_.spacing);
  const ConstImageView small = const_view(plane_view(small_, sw, sh));
  const ImageView blurred = plane_view(blurred_, sw, sh);
  if (gauss_cpu_recursive(blur)) {
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
        const float b = src[std::min(i + 1, sw - 1)];  // sw 1: fraction 0
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
