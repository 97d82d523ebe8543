// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/brightness/rows.hpp"

#include <algorithm>
#include <cstring>

#include "pipeline/brightness/fast_math.hpp"

namespace starsift::brightness_rows {

namespace {

// On x86-64 the row loops are also compiled for AVX-512 and AVX2 (16 and 8 floats a step,
// where the baseline has 4), the best the CPU has chosen at run time. Compiled without
// contraction into fused multiply-adds (-ffp-contract=off, src/pipeline/CMakeLists.txt), every
// clone rounds alike: the same pixels on every CPU.
#if defined(__x86_64__) && defined(__GNUC__)
#define STARSIFT_BRIGHTNESS_CLONES [[gnu::target_clones("avx512f", "avx2", "default")]]
#else
#define STARSIFT_BRIGHTNESS_CLONES
#endif

// 0..max, NaN as 0, then rounded half up: gauss_round() without branches.
inline float round_sample(float v, float max) noexcept {
  v = std::min(std::max(0.0f, v), max);
  return static_cast<float>(static_cast<std::int32_t>(v + 0.5f));
}

STARSIFT_BRIGHTNESS_CLONES void luminance_u8(const std::uint8_t* p, int n, float inv_max,
                                             float* lum) {
  for (int x = 0; x < n; ++x) lum[x] = static_cast<float>(p[x]) * inv_max;
}

STARSIFT_BRIGHTNESS_CLONES void luminance_u16(const std::uint16_t* p, int n, float max,
                                              float inv_max, float* lum) {
  for (int x = 0; x < n; ++x) lum[x] = std::min(static_cast<float>(p[x]), max) * inv_max;
}

STARSIFT_BRIGHTNESS_CLONES void luminance_f32(const float* p, int n, float* lum) {
  for (int x = 0; x < n; ++x) lum[x] = std::min(std::max(0.0f, p[x]), 1.0f);
}

STARSIFT_BRIGHTNESS_CLONES void luminance_colour(const std::uint8_t* p, int n, ColourOrder o,
                                                 float* lum) {
  constexpr float kR = static_cast<float>(kLumaR / 255.0);
  constexpr float kG = static_cast<float>(kLumaG / 255.0);
  constexpr float kB = static_cast<float>(kLumaB / 255.0);
  for (int x = 0; x < n; ++x) {
    const std::uint8_t* px = p + 4 * x;
    lum[x] = kR * static_cast<float>(px[o.r]) + kG * static_cast<float>(px[o.g]) +
             kB * static_cast<float>(px[o.b]);
  }
}

template <class T>
void table_row(const T* p, int n, const float* table, int top, float* out) {
  for (int x = 0; x < n; ++x) out[x] = table[std::min<int>(p[x], top)];
}

STARSIFT_BRIGHTNESS_CLONES void table_u8(const std::uint8_t* p, int n, const float* table, int top,
                                         float* out) {
  table_row(p, n, table, top, out);
}

STARSIFT_BRIGHTNESS_CLONES void table_u16(const std::uint16_t* p, int n, const float* table,
                                          int top, float* out) {
  table_row(p, n, table, top, out);
}

STARSIFT_BRIGHTNESS_CLONES void store_u8(std::uint8_t* dst, const float* value, int n, float lo,
                                         float scale, float max) {
  for (int x = 0; x < n; ++x) {
    dst[x] = static_cast<std::uint8_t>(round_sample((value[x] - lo) * scale, max));
  }
}

STARSIFT_BRIGHTNESS_CLONES void store_u16(std::uint16_t* dst, const float* value, int n, float lo,
                                          float scale, float max) {
  for (int x = 0; x < n; ++x) {
    dst[x] = static_cast<std::uint16_t>(round_sample((value[x] - lo) * scale, max));
  }
}

STARSIFT_BRIGHTNESS_CLONES void store_f32(float* dst, const float* value, int n, float lo,
                                          float scale) {
  for (int x = 0; x < n; ++x) dst[x] = std::min(std::max(0.0f, (value[x] - lo) * scale), 1.0f);
}

// Colour: every channel times Yo / Y; a black pixel (Y = 0) becomes the grey Yo.
STARSIFT_BRIGHTNESS_CLONES void store_colour(const std::uint8_t* src, std::uint8_t* dst,
                                             const float* value, const float* lum, int n, float lo,
                                             float scale, float inv_max) {
  for (int x = 0; x < n; ++x) {
    const float lum_out = std::min(std::max(0.0f, (value[x] - lo) * scale * inv_max), 1.0f);
    const bool black = !(lum[x] > 0.0f);
    const float ratio = black ? 0.0f : lum_out / lum[x];
    const float grey = black ? lum_out * 255.0f : 0.0f;
    for (int c = 0; c < 3; ++c) {
      dst[4 * x + c] = static_cast<std::uint8_t>(
          round_sample(static_cast<float>(src[4 * x + c]) * ratio + grey, 255.0f));
    }
    dst[4 * x + 3] = src[4 * x + 3];
  }
}

}  // namespace

void load_luminance(ConstImageView in, int y, float max, float* lum) {
  const int n = in.width;
  switch (in.format) {
    case PixelFormat::Gray8:
      return luminance_u8(in.row_as<std::uint8_t>(y), n, 1.0f / max, lum);
    case PixelFormat::Gray16:
      return luminance_u16(in.row_as<std::uint16_t>(y), n, max, 1.0f / max, lum);
    case PixelFormat::Gray32F:
      return luminance_f32(in.row_as<float>(y), n, lum);
    default:
      return luminance_colour(in.row_as<std::uint8_t>(y), n, colour_order(in.format), lum);
  }
}

STARSIFT_BRIGHTNESS_CLONES void log2_luminance(const float* lum, int n, float* log2_lum) {
  for (int x = 0; x < n; ++x) log2_lum[x] = brightness_math::log2_approx(lum[x]);
}

void log2_by_table(ConstImageView in, int y, const float* table, int top, float* log2_lum) {
  if (in.format == PixelFormat::Gray8) {
    table_u8(in.row_as<std::uint8_t>(y), in.width, table, top, log2_lum);
  } else {
    table_u16(in.row_as<std::uint16_t>(y), in.width, table, top, log2_lum);
  }
}

STARSIFT_BRIGHTNESS_CLONES void local_correct(const float* log2_lum, const float* blur,
                                              float strength, int n, float* corrected) {
  const float twice = 2.0f * strength;
  for (int x = 0; x < n; ++x) {
    const float exponent = brightness_math::exp2_approx(twice * blur[x] - strength);
    corrected[x] = brightness_math::exp2_approx(exponent * log2_lum[x]);
  }
}

STARSIFT_BRIGHTNESS_CLONES void blend(const float* corrected, const float* lum, float alpha,
                                      float max, int n, float* value) {
  const float a = alpha * max;
  const float b = (1.0f - alpha) * max;
  for (int x = 0; x < n; ++x) value[x] = a * corrected[x] + b * lum[x];
}

void count_values(const float* value, int n, int top, std::uint32_t* counts) {
  const auto max = static_cast<float>(top);
  for (int x = 0; x < n; ++x) ++counts[static_cast<std::int32_t>(round_sample(value[x], max))];
}

void store_row(ConstImageView in, ImageView out, int y, const float* value, const float* lum,
               float lo, float scale, float max) {
  const int n = in.width;
  switch (in.format) {
    case PixelFormat::Gray8:
      return store_u8(out.row_as<std::uint8_t>(y), value, n, lo, scale, max);
    case PixelFormat::Gray16:
      return store_u16(out.row_as<std::uint16_t>(y), value, n, lo, scale, max);
    case PixelFormat::Gray32F:
      return store_f32(out.row_as<float>(y), value, n, lo, scale);
    default:
      return store_colour(in.row_as<std::uint8_t>(y), out.row_as<std::uint8_t>(y), value, lum, n,
                          lo, scale, 1.0f / max);
  }
}

}  // namespace starsift::brightness_rows
