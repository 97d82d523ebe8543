// SPDX-License-Identifier: LGPL-2.1-or-later
// The pixel reader's host path (src/cuda/common/pixel_reader.hpp): the same samples the
// kernels read, as float, for every gray format, by compile-time and run-time format.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "cuda/common/pixel_reader.hpp"

using namespace starsift;

TEST_CASE("read_pixel gives each gray format's sample as float", "[pipeline]") {
  const std::uint8_t g8[3] = {0, 17, 255};
  const auto* r8 = reinterpret_cast<const std::byte*>(g8);
  CHECK(read_pixel<PixelFormat::Gray8>(r8, 1) == 17.0f);
  CHECK(read_pixel(r8, 2, PixelFormat::Gray8) == 255.0f);

  const std::uint16_t g16[3] = {0, 4095, 65535};
  const auto* r16 = reinterpret_cast<const std::byte*>(g16);
  CHECK(read_pixel<PixelFormat::Gray16>(r16, 1) == 4095.0f);
  CHECK(read_pixel(r16, 2, PixelFormat::Gray16) == 65535.0f);

  const float g32[3] = {-0.0f, 1.5f, std::numeric_limits<float>::infinity()};
  const auto* r32 = reinterpret_cast<const std::byte*>(g32);
  CHECK(read_pixel<PixelFormat::Gray32F>(r32, 1) == 1.5f);
  CHECK(read_pixel(r32, 2, PixelFormat::Gray32F) == std::numeric_limits<float>::infinity());
  const float zero = read_pixel(r32, 0, PixelFormat::Gray32F);
  std::uint32_t bits = 0;
  std::memcpy(&bits, &zero, sizeof bits);
  CHECK(bits == 0x80000000u);  // -0.0 kept as it is
}

TEST_CASE("read_pixel finds row y through the stride", "[pipeline]") {
  // 3 x 2 GRAY16 with a padded stride of 8 bytes (4 samples a row).
  std::vector<std::uint16_t> frame = {1, 2, 3, 0xdead, 4, 5, 6, 0xbeef};
  const auto* data = reinterpret_cast<const std::byte*>(frame.data());
  CHECK(read_pixel(data, 8, 0, 1, PixelFormat::Gray16) == 4.0f);
  CHECK(read_pixel(data, 8, 2, 1, PixelFormat::Gray16) == 6.0f);
  CHECK(read_pixel(data, 8, 2, 0, PixelFormat::Gray16) == 3.0f);
}

TEST_CASE("read_pixel reads host rows of any alignment", "[pipeline]") {
  // GRAY16 samples 4095 and 17 starting one byte into the buffer (an odd stride's second row).
  const unsigned char bytes[5] = {0xee, 0xff, 0x0f, 0x11, 0x00};
  const auto* row = reinterpret_cast<const std::byte*>(bytes) + 1;
  CHECK(read_pixel<PixelFormat::Gray16>(row, 0) == 4095.0f);
  CHECK(read_pixel(row, 1, PixelFormat::Gray16) == 17.0f);
}
