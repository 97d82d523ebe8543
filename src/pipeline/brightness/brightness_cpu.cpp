// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/brightness/brightness_cpu.hpp"

#include <algorithm>
#include <cmath>

#include "pipeline/brightness/fast_math.hpp"
#include "pipeline/brightness/rows.hpp"

namespace starsift {

namespace {

using namespace brightness_rows;

// Rows [begin, end) of thread chunk `chunk` out of `chunks`.
std::pair<int, int> chunk_rows(int height, int chunk, int chunks) {
  return {static_cast<int>(static_cast<long long>(height) * chunk / chunks),
          static_cast<int>(static_cast<long long>(height) * (chunk + 1) / chunks)};
}

template <class T>
ImageView plane_view(std::vector<T>& plane, int width, int height, PixelFormat format) {
  return {reinterpret_cast<std::byte*>(plane.data()), width, height,
          static_cast<std::ptrdiff_t>(width * sizeof(T)), format};
}

// The value of rank `rank` (1-based) in the histogram `counts` of 0..top.
int value_of_rank(const std::vector<std::uint32_t>& counts, int top, std::size_t rank) {
  std::size_t seen = 0;
  for (int v = 0; v < top; ++v) {
    seen += counts[static_cast<std::size_t>(v)];
    if (seen >= rank) return v;
  }
  return top;
}

}  // namespace

void BrightnessCpu::fill_log_table(const FrameShape& shape) {
  const int top = static_cast<int>(brightness_sample_max(shape));
  if (top == log_table_top_) return;
  log_table_.resize(static_cast<std::size_t>(top) + 1);
  log_table_[0] = brightness_math::kLog2OfZero;
  for (int v = 1; v <= top; ++v) {
    log_table_[static_cast<std::size_t>(v)] =
        static_cast<float>(std::log2(static_cast<double>(v) / top));
  }
  log_table_top_ = top;
}

ConstImageView BrightnessCpu::equalise(const BrightnessParams& params, const FrameShape& shape,
                                       ConstImageView in, ThreadPool& pool) {
  const int width = shape.width;
  const int height = shape.height;
  const std::size_t size = static_cast<std::size_t>(width) * height;
  if (shape.format == PixelFormat::Gray16) {
    clahe_out16_.resize(size);
    const ImageView mapped = plane_view(clahe_out16_, width, height, PixelFormat::Gray16);
    clahe_.run(params, shape.bit_depth, in, mapped, pool);
    return const_view(mapped);
  }
  clahe_out8_.resize(size);
  const ImageView mapped = plane_view(clahe_out8_, width, height, PixelFormat::Gray8);
  if (shape.format == PixelFormat::Gray8) {
    clahe_.run(params, 8, in, mapped, pool);
    return const_view(mapped);
  }
  // Colour: the luma rounded to 8 bits, as the reference equalises it.
  clahe_in8_.resize(size);
  const int chunks = static_cast<int>(pool.size());
  rows_.resize(static_cast<std::size_t>(chunks) * 4 * width);
  pool.parallel_for(chunks, [&](int chunk_begin, int chunk_end) {
    for (int chunk = chunk_begin; chunk < chunk_end; ++chunk) {
      float* lum = rows_.data() + static_cast<std::size_t>(chunk) * 4 * width;
      const auto [y_begin, y_end] = chunk_rows(height, chunk, chunks);
      for (int y = y_begin; y < y_end; ++y) {
        load_luminance(in, y, 255.0f, lum);
        std::uint8_t* row = clahe_in8_.data() + static_cast<std::size_t>(y) * width;
        for (int x = 0; x < width; ++x) {
          row[x] = static_cast<std::uint8_t>(static_cast<int>(lum[x] * 255.0f + 0.5f));
        }
      }
    }
  });
  const ImageView luma = plane_view(clahe_in8_, width, height, PixelFormat::Gray8);
  clahe_.run(params, 8, const_view(luma), mapped, pool);
  return const_view(mapped);
}

void BrightnessCpu::run(const BrightnessParams& params, const FrameShape& shape, ConstImageView in,
                        ImageView out, ThreadPool& pool) {
  params.validate_frames(shape, in, out);
  const FormatInfo& info = format_info(shape.format);
  const bool colour = info.color_channels == 3;
  const bool integer_grey = !colour && !info.is_float;
  const bool local = params.mode == BrightnessMode::Local;
  const bool percentile = params.stretch == BrightnessStretch::Percentile;
  const auto max = static_cast<float>(brightness_sample_max(shape));
  const int top = info.is_float ? 0 : static_cast<int>(max);
  const int width = shape.width;
  const int height = shape.height;
  const auto chunks = static_cast<int>(pool.size());
  const auto strength = static_cast<float>(params.strength);
  const auto alpha = static_cast<float>(params.alpha);

  // Where C comes from: the blurred luminance (local) or the equalised plane (clahe), whose
  // rows load_luminance() reads as C, its maximum standing for 1.
  ConstImageView mapped{};
  float mapped_max = max;
  if (local) {
    blur_.prepare(shape, params.sigma, in, pool);
    if (integer_grey) fill_log_table(shape);
  } else {
    mapped = equalise(params, shape, in, pool);
    if (colour) mapped_max = 255.0f;
  }

  float lo = 0.0f;
  float scale = 1.0f;
  if (params.stretch == BrightnessStretch::Fixed) {
    lo = static_cast<float>(params.stretch_min);
    scale = static_cast<float>(max / (params.stretch_max - params.stretch_min));
  }
  const std::size_t row_floats = static_cast<std::size_t>(width);
  rows_.resize(static_cast<std::size_t>(chunks) * 4 * row_floats);
  if (percentile) {
    values_.resize(row_floats * height);
    if (!info.is_float) counts_.assign(static_cast<std::size_t>(chunks) * (top + 1), 0);
  }

  // v of every row; stored at once without a percentile stretch, else kept and counted.
  pool.parallel_for(chunks, [&](int chunk_begin, int chunk_end) {
    for (int chunk = chunk_begin; chunk < chunk_end; ++chunk) {
      float* lum = rows_.data() + static_cast<std::size_t>(chunk) * 4 * row_floats;
      float* corrected = lum + row_floats;
      float* scratch = corrected + row_floats;
      float* value_row = scratch + row_floats;
      std::uint32_t* counts =
          percentile && !info.is_float
              ? counts_.data() + static_cast<std::size_t>(chunk) * static_cast<std::size_t>(top + 1)
              : nullptr;
      const auto [y_begin, y_end] = chunk_rows(height, chunk, chunks);
      for (int y = y_begin; y < y_end; ++y) {
        load_luminance(in, y, max, lum);
        if (local) {
          if (integer_grey) {
            log2_by_table(in, y, log_table_.data(), top, corrected);
          } else {
            log2_luminance(lum, width, corrected);
          }
          local_correct(corrected, blur_.row(y, scratch), strength, width, corrected);
        } else {
          load_luminance(mapped, y, mapped_max, corrected);
        }
        float* value =
            percentile ? values_.data() + static_cast<std::size_t>(y) * row_floats : value_row;
        blend(corrected, lum, alpha, max, width, value);
        if (!percentile) {
          store_row(in, out, y, value, lum, lo, scale, max);
        } else if (!info.is_float) {
          count_values(value, width, top, counts);
        }
      }
    }
  });
  if (!percentile) return;

  // The percentile stretch: lo and hi of the ranks, then every row stored.
  const std::size_t pixels = row_floats * height;
  const std::size_t low_rank = brightness_percentile_rank(params.low_percentile, pixels);
  const std::size_t high_rank = brightness_percentile_rank(params.high_percentile, pixels);
  float low = 0.0f;
  float high = 0.0f;
  if (info.is_float) {
    order_.assign(values_.begin(), values_.end());
    std::nth_element(order_.begin(), order_.begin() + (low_rank - 1), order_.end());
    low = order_[low_rank - 1];
    std::nth_element(order_.begin() + (low_rank - 1), order_.begin() + (high_rank - 1),
                     order_.end());
    high = order_[high_rank - 1];
  } else {
    for (int chunk = 1; chunk < chunks; ++chunk) {
      const std::uint32_t* add = counts_.data() + static_cast<std::size_t>(chunk) * (top + 1);
      for (int v = 0; v <= top; ++v) counts_[static_cast<std::size_t>(v)] += add[v];
    }
    low = static_cast<float>(value_of_rank(counts_, top, low_rank));
    high = static_cast<float>(value_of_rank(counts_, top, high_rank));
  }
  if (high > low) {
    lo = low;
    scale = max / (high - low);
  }
  pool.parallel_for(chunks, [&](int chunk_begin, int chunk_end) {
    for (int chunk = chunk_begin; chunk < chunk_end; ++chunk) {
      float* lum = rows_.data() + static_cast<std::size_t>(chunk) * 4 * row_floats;
      const auto [y_begin, y_end] = chunk_rows(height, chunk, chunks);
      for (int y = y_begin; y < y_end; ++y) {
        if (colour) load_luminance(in, y, max, lum);
        store_row(in, out, y, values_.data() + static_cast<std::size_t>(y) * row_floats, lum, lo,
                  scale, max);
      }
    }
  });
}

}  // namespace starsift
