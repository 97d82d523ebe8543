// SPDX-License-Identifier: LGPL-2.1-or-later
#include <catch2/catch.hpp>

#include <climits>
#include <cstdint>
#include <limits>
#include <string>

#include "pipeline/backend.hpp"
#include "pipeline/error.hpp"
#include "pipeline/frame_memory.hpp"
#include "pipeline/host_frame.hpp"
#include "pipeline/pixel_format.hpp"
#include "pipeline/sample_key.hpp"

using namespace starsift;

TEST_CASE("pixel formats parse and describe themselves", "[formats]") {
  REQUIRE(parse_pixel_format("GRAY8") == PixelFormat::Gray8);
  REQUIRE(parse_pixel_format("GRAY16_LE") == PixelFormat::Gray16);
  REQUIRE(parse_pixel_format("BGRx") == PixelFormat::Bgrx);
  REQUIRE(bytes_per_pixel(PixelFormat::Gray16) == 2);
  REQUIRE(bytes_per_pixel(PixelFormat::Rgba) == 4);
  REQUIRE(format_info(PixelFormat::Rgbx).color_channels == 3);
  REQUIRE_THROWS_WITH(parse_pixel_format("NV12"),
                      Catch::Contains("NV12") && Catch::Contains("GRAY8, GRAY16_LE"));
}

TEST_CASE("frame shapes reject impossible sizes and bit depths", "[formats]") {
  REQUIRE_NOTHROW(FrameShape{1, 1, PixelFormat::Gray16, 12}.validate());
  REQUIRE_THROWS_WITH((FrameShape{0, 5, PixelFormat::Gray8, 8}.validate()),
                      Catch::Contains(">= 1"));
  REQUIRE_THROWS_WITH((FrameShape{4, 4, PixelFormat::Gray16, 17}.validate()),
                      Catch::Contains("1..16"));
  REQUIRE_THROWS_WITH((FrameShape{4, 4, PixelFormat::Gray8, 12}.validate()),
                      Catch::Contains("allowed: 8"));
}

TEST_CASE("float keys follow IEEE totalOrder", "[formats]") {
  const float ordered[] = {-std::numeric_limits<float>::infinity(),
                           -1e30f,
                           -1.0f,
                           -1e-40f,
                           -0.0f,
                           0.0f,
                           1e-40f,
                           1.0f,
                           1e30f,
                           std::numeric_limits<float>::infinity()};
  for (std::size_t i = 1; i < std::size(ordered); ++i) {
    REQUIRE(float_to_key(ordered[i - 1]) < float_to_key(ordered[i]));
  }
  REQUIRE(float_to_key(std::numeric_limits<float>::quiet_NaN()) > float_to_key(ordered[9]));
  REQUIRE(float_to_key(-std::numeric_limits<float>::quiet_NaN()) < float_to_key(ordered[0]));
  for (float f : ordered) REQUIRE(key_to_float(float_to_key(f)) == f);
}

TEST_CASE("backends parse; cpu always resolves; auto never throws", "[backend]") {
  REQUIRE(parse_backend("cuda") == Backend::Cuda);
  REQUIRE_THROWS_WITH(parse_backend("gpu"), Catch::Contains("auto, cuda, cpu"));
  REQUIRE(resolve_backend(Backend::Cpu, 0).backend == Backend::Cpu);
  const BackendChoice a = resolve_backend(Backend::Auto, 0);
  REQUIRE(a.backend != Backend::Auto);
  REQUIRE_FALSE(a.reason.empty());
  REQUIRE_THROWS_WITH(resolve_backend(Backend::Cpu, -1), Catch::Contains("0 or more"));
  if (!cuda_unusable_reason(0).empty()) {
    REQUIRE(a.backend == Backend::Cpu);
    REQUIRE_THROWS_WITH(resolve_backend(Backend::Cuda, 0), Catch::Contains("not usable"));
  }
  REQUIRE_FALSE(cuda_unusable_reason(999).empty());
}

TEST_CASE("a frame that cannot be allocated says what and how big", "[formats]") {
  // Larger than any vector may be: refused before a byte is asked for (the shape is not
  // validated here, which is what lets it be this large).
  HostFrame frame;
  const FrameShape huge{INT_MAX, INT_MAX, PixelFormat::Rgba, 8};
  const std::string bytes = std::to_string(HostFrame::packed_bytes(huge));
  REQUIRE_THROWS_AS(frame.allocate(huge), Error);
  REQUIRE_THROWS_WITH(frame.allocate(huge),
                      Catch::Contains("cannot allocate a 2147483647x2147483647 RGBA host frame") &&
                          Catch::Contains(bytes + " bytes"));
  CHECK(frame.bytes.empty());

  // Frame memory for the GPU's copies: a size whose alignment would wrap around to a few
  // bytes, and one no machine has.
  const std::size_t max = std::numeric_limits<std::size_t>::max();
  REQUIRE_THROWS_WITH(allocate_frame_memory(max),
                      Catch::Contains("cannot allocate " + std::to_string(max) + " bytes"));
  REQUIRE_THROWS_WITH(allocate_frame_memory(max - 10),
                      Catch::Contains("cannot allocate " + std::to_string(max - 10) + " bytes"));
  const std::size_t too_much = std::size_t{1} << 62;
  REQUIRE_THROWS_WITH(allocate_frame_memory(too_much),
                      Catch::Contains("cannot allocate " + std::to_string(too_much) + " bytes") &&
                          Catch::Contains("frame memory"));
}

TEST_CASE("parsed names are cut in messages when long", "[formats]") {
  const std::string long_name(1000, 'q');
  const std::string cut = std::string(kMaxShownValueBytes, 'q') + "\xE2\x80\xA6 (1000 bytes)";
  REQUIRE_THROWS_WITH(
      parse_pixel_format(long_name),
      Catch::Equals("unknown pixel format '" + cut + "'; allowed: " + pixel_format_names()));
  REQUIRE_THROWS_WITH(parse_backend(long_name), Catch::StartsWith("unknown backend '" + cut + "'"));
}
