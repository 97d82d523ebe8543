// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/brightness/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "pipeline/brightness/clahe.hpp"
#include "pipeline/error.hpp"
#include "pipeline/gauss/reference.hpp"
#include "pipeline/gauss/samples.hpp"

namespace starsift {

namespace {

using gauss_samples::copy_sample;
using gauss_samples::read_sample;

// A plane of one value per pixel, `Format` samples, contiguous rows.
template <class T>
struct Plane {
  int width = 0, height = 0;
  PixelFormat format = PixelFormat::Gray32F;
  std::vector<T> v;
  Plane(int w, int h, PixelFormat f)
      : width(w), height(h), format(f), v(static_cast<std::size_t>(w) * h) {}
  T& at(int x, int y) { return v[static_cast<std::size_t>(y) * width + x]; }
  ImageView view() {
    return {reinterpret_cast<std::byte*>(v.data()), width, height,
            static_cast<std::ptrdiff_t>(width * sizeof(T)), format};
  }
  ConstImageView cview() const {
    return {reinterpret_cast<const std::byte*>(v.data()), width, height,
            static_cast<std::ptrdiff_t>(width * sizeof(T)), format};
  }
};

// Step 1: the luminance of pixel (x, y), 0..1.
double luminance(ConstImageView in, int x, int y, double max) {
  const FormatInfo& info = format_info(in.format);
  if (info.color_channels == 3) {
    // R, G, B at bytes 0, 1, 2 for RGBA/RGBx, 2, 1, 0 for BGRA/BGRx.
    const bool bgr = in.format == PixelFormat::Bgra || in.format == PixelFormat::Bgrx;
    const double r = read_sample(in, x, y, bgr ? 2 : 0);
    const double g = read_sample(in, x, y, 1);
    const double b = read_sample(in, x, y, bgr ? 0 : 2);
    return (kLumaR * r + kLumaG * g + kLumaB * b) / max;
  }
  const double value = read_sample(in, x, y, 0);
  if (!(value > 0.0)) return 0.0;  // NaN too
  return std::min(value, max) / max;
}

}  // namespace

void brightness_reference(const BrightnessParams& params, const FrameShape& shape,
                          ConstImageView in, ImageView out, ThreadPool& pool) {
  params.validate_frames(shape, in, out);
  const FormatInfo& info = format_info(shape.format);
  const bool colour = info.color_channels == 3;
  const double max = brightness_sample_max(shape);
  const int width = shape.width;
  const int height = shape.height;

  // 1. Y.
  Plane<float> luma(width, height, PixelFormat::Gray32F);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) luma.at(x, y) = static_cast<float>(luminance(in, x, y, max));
  }

  // 2. C.
  Plane<double> corrected(width, height, PixelFormat::Gray32F);  // format unused
  if (params.mode == BrightnessMode::Local) {
    GaussParams blur;
    blur.sigma_x = blur.sigma_y = params.sigma;
    blur.border = BorderMode::Reflect101;
    Plane<float> blurred(width, height, PixelFormat::Gray32F);
    gauss_reference(blur, luma.cview(), blurred.view(), pool);
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        const double b = blurred.at(x, y);
        const double exponent = std::pow(2.0, params.strength * (2.0 * b - 1.0));
        corrected.at(x, y) = std::pow(static_cast<double>(luma.at(x, y)), exponent);
      }
    }
  } else {
    // The integer plane CLAHE equalises: the frame clamped to its maximum, or the luma
    // rounded to 8 bits (a GRAY8 plane: colour frames are 8-bit, and a grey colour frame
    // then equalises as the same GRAY8 frame does).
    const bool wide = !colour && info.bytes_per_sample == 2;
    const double plane_max = colour ? 255.0 : max;
    const int bits = colour ? 8 : shape.bit_depth;
    Plane<std::uint16_t> values16(width, height, PixelFormat::Gray16);
    Plane<std::uint8_t> values8(width, height, PixelFormat::Gray8);
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        const double v = colour ? std::floor(luma.at(x, y) * 255.0 + 0.5)
                                : std::min<double>(read_sample(in, x, y, 0), max);
        if (wide) {
          values16.at(x, y) = static_cast<std::uint16_t>(v);
        } else {
          values8.at(x, y) = static_cast<std::uint8_t>(v);
        }
      }
    }
    Plane<std::uint16_t> mapped16(width, height, PixelFormat::Gray16);
    Plane<std::uint8_t> mapped8(width, height, PixelFormat::Gray8);
    if (wide) {
      clahe_reference(params, bits, values16.cview(), mapped16.view(), pool);
    } else {
      clahe_reference(params, bits, values8.cview(), mapped8.view(), pool);
    }
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        const double mapped = wide ? mapped16.at(x, y) : mapped8.at(x, y);
        corrected.at(x, y) = mapped / plane_max;
      }
    }
  }

  // 3. v, in the format's units.
  Plane<double> value(width, height, PixelFormat::Gray32F);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const double c = corrected.at(x, y);
      const double lum = luma.at(x, y);
      value.at(x, y) = (params.alpha * c + (1.0 - params.alpha) * lum) * max;
    }
  }

  // 4. The stretch: v -> (v - lo) * scale.
  double lo = 0.0;
  double scale = 1.0;
  if (params.stretch == BrightnessStretch::Fixed) {
    lo = params.stretch_min;
    scale = max / (params.stretch_max - params.stretch_min);
  } else if (params.stretch == BrightnessStretch::Percentile) {
    std::vector<double> sorted;
    sorted.reserve(value.v.size());
    for (const double v : value.v) {
      sorted.push_back(info.is_float ? v
                                     : gauss_round(static_cast<float>(v), static_cast<float>(max)));
    }
    std::sort(sorted.begin(), sorted.end());
    const double low = sorted[brightness_percentile_rank(params.low_percentile, sorted.size()) - 1];
    const double high =
        sorted[brightness_percentile_rank(params.high_percentile, sorted.size()) - 1];
    if (high > low) {
      lo = low;
      scale = max / (high - low);
    }
  }

  // 5. Out.
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const double stretched = (value.at(x, y) - lo) * scale;
      if (!colour) {
        const float result =
            info.is_float ? static_cast<float>(std::clamp(stretched, 0.0, 1.0))
                          : gauss_round(static_cast<float>(stretched), static_cast<float>(max));
        gauss_samples::write_sample(out, x, y, 0, result);
        continue;
      }
      const double lum_out = std::clamp(stretched / max, 0.0, 1.0);
      const double lum = luma.at(x, y);
      for (int c = 0; c < 3; ++c) {
        const double sample = read_sample(in, x, y, c);
        const double scaled = lum > 0.0 ? sample * lum_out / lum : lum_out * max;
        gauss_samples::write_sample(out, x, y, c, static_cast<float>(scaled));
      }
      for (int c = 3; c < info.channels; ++c) copy_sample(in, out, x, y, c);
    }
  }
}

}  // namespace starsift
