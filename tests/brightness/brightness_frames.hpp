// SPDX-License-Identifier: LGPL-2.1-or-later
// Frames for the brightness tests: TestImage (tests/support/test_image.hpp) with samples
// written and read as numbers in the format's units, and the reference on a small pool.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>

#include "pipeline/brightness/params.hpp"
#include "pipeline/brightness/reference.hpp"
#include "pipeline/thread_pool.hpp"
#include "support/test_image.hpp"

namespace starsift::test {

inline void set_value(TestImage& img, int x, int y, int c, double value) {
  std::byte* p = img.sample_ptr(x, y, c);
  switch (format_info(img.format).bytes_per_sample) {
    case 1:
      *p = static_cast<std::byte>(static_cast<std::uint8_t>(value));
      break;
    case 2: {
      const auto v = static_cast<std::uint16_t>(value);
      std::memcpy(p, &v, 2);
      break;
    }
    default: {
      const auto v = static_cast<float>(value);
      std::memcpy(p, &v, 4);
    }
  }
}

inline double value_at(const TestImage& img, int x, int y, int c) {
  const std::byte* p = const_cast<TestImage&>(img).sample_ptr(x, y, c);
  switch (format_info(img.format).bytes_per_sample) {
    case 1:
      return std::to_integer<std::uint8_t>(*p);
    case 2: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    default: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
  }
}

// Every colour sample of `img` set by `value(x, y, c)`; alpha (byte 3) set to a pattern of
// its own, so a filter that touches it shows.
template <class Value>
void fill_with(TestImage& img, Value&& value) {
  const FormatInfo& info = format_info(img.format);
  for (int y = 0; y < img.height; ++y) {
    for (int x = 0; x < img.width; ++x) {
      for (int c = 0; c < info.color_channels; ++c) set_value(img, x, y, c, value(x, y, c));
      for (int c = info.color_channels; c < info.channels; ++c) {
        set_value(img, x, y, c, (x * 7 + y * 13) % 256);
      }
    }
  }
}

// Uniform random samples 0..max (GRAY32F: 0..1).
inline void fill_random(TestImage& img, double max, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const bool is_float = format_info(img.format).is_float;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  fill_with(img, [&](int, int, int) {
    return is_float ? unit(rng) : static_cast<double>(rng() % static_cast<unsigned>(max + 1));
  });
}

// The brightness tests' worker threads, shared by every file that includes this one.
inline ThreadPool& pool() {
  static ThreadPool threads(2);
  return threads;
}

inline TestImage reference_of(const BrightnessParams& params, const FrameShape& shape,
                              const TestImage& in) {
  TestImage out(in.width, in.height, in.format);
  brightness_reference(params, shape, in.cview(), out.view(), pool());
  return out;
}

inline FrameShape shape_of(const TestImage& img, int bit_depth = 0) {
  return {img.width, img.height, img.format,
          bit_depth > 0 ? bit_depth : default_bit_depth(img.format)};
}

}  // namespace starsift::test
