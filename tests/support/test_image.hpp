// SPDX-License-Identifier: LGPL-2.1-or-later
// Owned host images and deterministic fills for tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"
#include "pipeline/sample_key.hpp"

namespace starsift::test {

// A host image whose rows may be padded by `pad_bytes` beyond the row (padded strides).
// Padding bytes are filled with 0xA5 so a filter reading or writing them shows up.
struct TestImage {
  TestImage(int w, int h, PixelFormat f, int pad_bytes = 0)
      : width(w),
        height(h),
        format(f),
        stride(static_cast<std::ptrdiff_t>(w) * bytes_per_pixel(f) + pad_bytes),
        bytes(static_cast<std::size_t>(stride) * h, std::byte{0xA5}) {}

  int width, height;
  PixelFormat format;
  std::ptrdiff_t stride;
  std::vector<std::byte> bytes;

  ImageView view() { return {bytes.data(), width, height, stride, format}; }
  ConstImageView cview() const { return {bytes.data(), width, height, stride, format}; }

  std::byte* sample_ptr(int x, int y, int c) {
    const int bps = format_info(format).bytes_per_sample;
    return bytes.data() + y * stride +
           (static_cast<std::ptrdiff_t>(x) * format_info(format).channels + c) * bps;
  }
  // Writes sample (x, y, c) from an ordered key (the value itself for integer formats).
  void set_key(int x, int y, int c, std::uint32_t key) {
    std::byte* p = sample_ptr(x, y, c);
    switch (format_info(format).bytes_per_sample) {
      case 1:
        *p = static_cast<std::byte>(key);
        break;
      case 2: {
        const auto v = static_cast<std::uint16_t>(key);
        std::memcpy(p, &v, 2);
        break;
      }
      default: {
        const std::uint32_t b = key_to_float_bits(key);
        std::memcpy(p, &b, 4);
      }
    }
  }
  std::uint32_t key(int x, int y, int c) const {
    const std::byte* p = const_cast<TestImage*>(this)->sample_ptr(x, y, c);
    switch (format_info(format).bytes_per_sample) {
      case 1:
        return std::to_integer<std::uint32_t>(*p);
      case 2: {
        std::uint16_t v;
        std::memcpy(&v, p, 2);
        return v;
      }
      default: {
        std::uint32_t b;
        std::memcpy(&b, p, 4);
        return float_bits_to_key(b);
      }
    }
  }
  // Compares pixel bytes only (not the row padding).
  bool same_pixels(const TestImage& o) const {
    if (o.width != width || o.height != height || o.format != format) return false;
    const std::size_t row = static_cast<std::size_t>(width) * bytes_per_pixel(format);
    for (int y = 0; y < height; ++y)
      if (std::memcmp(bytes.data() + y * stride, o.bytes.data() + y * o.stride, row) != 0)
        return false;
    return true;
  }
  // First differing sample as text, for failure messages.
  std::string first_difference(const TestImage& o) const {
    const int ch = format_info(format).channels;
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x)
        for (int c = 0; c < ch; ++c)
          if (key(x, y, c) != o.key(x, y, c)) {
            // A stream, not string operator+: GCC 12 warns falsely (-Wrestrict) on the latter.
            std::ostringstream text;
            text << "(" << x << "," << y << ") ch " << c << ": " << key(x, y, c) << " vs "
                 << o.key(x, y, c);
            return text.str();
          }
    return "none";
  }
};

enum class Fill { Random, Constant, Impulse, Sentinels };

inline const char* to_string(Fill f) {
  switch (f) {
    case Fill::Random:
      return "random";
    case Fill::Constant:
      return "constant";
    case Fill::Impulse:
      return "impulse";
    case Fill::Sentinels:
      return "sentinels";
  }
  return "?";
}

// The largest key of a format's samples (0xff, 0xffff; floats: the key of +NaN).
inline std::uint32_t max_key(PixelFormat f) {
  switch (format_info(f).bytes_per_sample) {
    case 1:
      return 0xffu;
    case 2:
      return 0xffffu;
    default:
      return 0xffffffffu;
  }
}

// A random sample key; for floats mostly ordinary values, sometimes -0, +0, inf, NaN.
inline std::uint32_t random_key(PixelFormat f, std::mt19937& rng) {
  if (!format_info(f).is_float) return rng() & max_key(f);
  const unsigned pick = rng() % 64;
  if (pick == 0) return float_to_key(-0.0f);
  if (pick == 1) return float_to_key(0.0f);
  if (pick == 2) return float_to_key(std::numeric_limits<float>::infinity());
  if (pick == 3) return float_to_key(std::numeric_limits<float>::quiet_NaN());
  std::uniform_real_distribution<float> d(-1000.0f, 1000.0f);
  return float_to_key(d(rng));
}

inline void fill(TestImage& img, Fill how, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const int ch = format_info(img.format).channels;
  const std::uint32_t top = max_key(img.format);
  const std::uint32_t mid = format_info(img.format).is_float ? float_to_key(100.0f) : top / 2;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x)
      for (int c = 0; c < ch; ++c) {
        std::uint32_t k = 0;
        switch (how) {
          case Fill::Random:
            k = random_key(img.format, rng);
            break;
          case Fill::Constant:
            k = mid;
            break;
          case Fill::Impulse: {
            const unsigned r = rng() % 10;  // 20 % salt and pepper on a smooth ramp
            k = r == 0   ? 0u
                : r == 1 ? top
                         : (format_info(img.format).is_float
                                ? float_to_key(static_cast<float>(x + y))
                                : static_cast<std::uint32_t>((x * 3 + y * 5) % (top + 1)));
            break;
          }
          case Fill::Sentinels:
            k = (rng() & 1) ? top : 0u;
            break;
        }
        img.set_key(x, y, c, k);
      }
}

}  // namespace starsift::test
