// SPDX-License-Identifier: LGPL-2.1-or-later
// The frames and metadata the FITS tests write: every format with padded rows, extreme
// values in the first samples, fixed metadata.
#pragma once

#include <sys/timex.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <limits>
#include <vector>

#include "daemon/outputs/fits_writer.hpp"

namespace starsift::test {

template <class T>
struct TestFrame {
  int width = 0;
  int height = 0;
  std::ptrdiff_t stride = 0;  // bytes; rows padded with 0xAB bytes that must not be written
  PixelFormat format = PixelFormat::Gray8;
  std::vector<std::byte> bytes;

  T at(int x, int y) const {
    T v;
    std::memcpy(&v, bytes.data() + y * stride + x * static_cast<std::ptrdiff_t>(sizeof(T)),
                sizeof(T));
    return v;
  }
  std::vector<T> packed() const {  // row 0 first, no padding
    std::vector<T> out;
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) out.push_back(at(x, y));
    }
    return out;
  }
  ConstImageView view() const { return {bytes.data(), width, height, stride, format}; }
};

// `values` first (row 0 onwards), then `pattern(i)` for the i-th sample.
template <class T, class Pattern>
TestFrame<T> make_frame(int width, int height, PixelFormat format, std::vector<T> values,
                        Pattern pattern) {
  TestFrame<T> f;
  f.width = width;
  f.height = height;
  f.format = format;
  f.stride = static_cast<std::ptrdiff_t>(width * sizeof(T) + 6);
  f.bytes.assign(static_cast<std::size_t>(f.stride * height), std::byte{0xAB});
  std::size_t i = 0;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x, ++i) {
      const T v = i < values.size() ? values[i] : pattern(i);
      std::memcpy(f.bytes.data() + y * f.stride + x * static_cast<std::ptrdiff_t>(sizeof(T)), &v,
                  sizeof(T));
    }
  }
  return f;
}

inline TestFrame<std::uint8_t> gray8_frame(int width, int height) {
  return make_frame<std::uint8_t>(width, height, PixelFormat::Gray8, {0, 255, 127, 128},
                                  [](std::size_t i) { return static_cast<std::uint8_t>(i * 37); });
}

inline TestFrame<std::uint16_t> gray16_frame(int width, int height) {
  return make_frame<std::uint16_t>(
      width, height, PixelFormat::Gray16, {0, 65535, 32767, 32768, 1, 65534},
      [](std::size_t i) { return static_cast<std::uint16_t>(i * 2654435761u >> 7); });
}

inline TestFrame<float> gray32f_frame(int width, int height) {
  using L = std::numeric_limits<float>;
  float payload_nan;  // a NaN with a payload of its own: bits must survive, not just NaN-ness
  const std::uint32_t bits = 0x7fc12345u;
  std::memcpy(&payload_nan, &bits, sizeof bits);
  return make_frame<float>(width, height, PixelFormat::Gray32F,
                           {payload_nan, -0.0f, L::infinity(), -L::infinity(), L::denorm_min(),
                            L::max(), L::lowest(), L::min(), 1.0f / 3.0f},
                           [](std::size_t i) { return (static_cast<float>(i) - 300.0f) * 0.37f; });
}

inline std::int64_t frame_utc_us() {
  std::tm tm{};
  tm.tm_year = 2026 - 1900;
  tm.tm_mon = 10;
  tm.tm_mday = 25;
  tm.tm_hour = 1;
  tm.tm_min = 30;
  return static_cast<std::int64_t>(timegm(&tm)) * 1000000 + 123456;
}

template <class T>
daemon::FitsFrame fits_frame(const TestFrame<T>& frame) {
  daemon::FitsFrame f;
  f.image = frame.view();
  f.utc_us = frame_utc_us();
  f.frame_number = 42;
  f.exposure_s = 0.04;
  return f;
}

inline daemon::FitsPipelineInfo pipeline_info() {
  return {"roof-east",
          "aravis: The Imaging Source DMK 33GX174 (serial 41910123) at 192.168.40.17, "
          "GRAY16 1920x1200",
          "stages:\n  - whiten: {history: 20, output: significance}\n  - detect:\n"
          "      threshold: 5\n"};
}

inline daemon::ClockState clock() {
  struct timex tx {};
  tx.status = STA_NANO;
  tx.esterror = 412;
  tx.maxerror = 28000;
  tx.offset = -1500;
  daemon::ClockState c = daemon::clock_state_from_timex(tx, TIME_OK);
  c.source = "chronyd";
  return c;
}

}  // namespace starsift::test
