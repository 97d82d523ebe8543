// SPDX-License-Identifier: LGPL-2.1-or-later
// The CPU labelling against a flood fill: the same components, numbered in raster order of
// their first pixels, for 4 and 8 connectivity, odd shapes and padded strides.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "detect/label_masks.hpp"
#include "pipeline/detect/labels.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

constexpr std::uint32_t kPadding = 0xDEADBEEF;

// Labels `m` into rows of `width + pad` words; checks the padding was left alone.
std::vector<std::uint32_t> label(const Mask& m, Connectivity c, std::uint32_t& count, int pad,
                                 std::vector<std::uint32_t>& parent) {
  const std::ptrdiff_t stride = m.width + pad;
  std::vector<std::uint32_t> padded(static_cast<std::size_t>(stride) * m.height, kPadding);
  count = label_reference(m.bytes.data(), m.stride, m.width, m.height, c, padded.data(), stride,
                          parent);
  std::vector<std::uint32_t> out(static_cast<std::size_t>(m.width) * m.height);
  for (int y = 0; y < m.height; ++y) {
    for (int x = 0; x < m.width; ++x) out[y * m.width + x] = padded[y * stride + x];
    for (int x = m.width; x < stride; ++x) REQUIRE(padded[y * stride + x] == kPadding);
  }
  return out;
}

}  // namespace

TEST_CASE("label_reference equals a flood fill", "[labels]") {
  std::vector<std::uint32_t> parent;  // reused across sizes, as a stage would
  int cases = 0;
  for (const Mask& m : small_masks())
    for (Connectivity c : {Connectivity::Four, Connectivity::Eight})
      for (int pad : {0, 7}) {
        std::uint32_t expected_count = 0, count = 0;
        const auto expected = flood_fill_labels(m, c, expected_count);
        const auto got = label(m, c, count, pad, parent);
        INFO(m.name << " " << m.width << "x" << m.height << " connectivity " << static_cast<int>(c)
                    << " pad " << pad);
        REQUIRE(count == expected_count);
        REQUIRE(got == expected);
        ++cases;
      }
  REQUIRE(cases > 200);
}

TEST_CASE("label ids follow the raster order of first pixels", "[labels]") {
  std::vector<std::uint32_t> parent;
  const Mask m = random_mask(211, 157, 0.45, 5);
  for (Connectivity c : {Connectivity::Four, Connectivity::Eight}) {
    std::uint32_t count = 0;
    const auto got = label(m, c, count, 0, parent);
    // The first pixel carrying each new id, in raster order, meets ids 1, 2, 3, ...
    std::uint32_t next = 1;
    for (std::uint32_t id : got)
      if (id != 0) {
        REQUIRE(id <= next);
        if (id == next) ++next;
      }
    REQUIRE(next == count + 1);
  }
}

TEST_CASE("4 and 8 connectivity differ where only corners touch", "[labels]") {
  std::vector<std::uint32_t> parent;
  std::uint32_t four = 0, eight = 0;
  const Mask board = checkerboard(10, 10);
  label(board, Connectivity::Four, four, 0, parent);
  label(board, Connectivity::Eight, eight, 0, parent);
  REQUIRE(four == 50);  // every foreground square alone
  REQUIRE(eight == 1);  // all joined through corners

  const Mask s = spiral(33);
  label(s, Connectivity::Four, four, 0, parent);
  REQUIRE(four == 1);
}

TEST_CASE("label_reference: an empty frame has no components", "[labels]") {
  std::vector<std::uint32_t> parent;
  std::uint8_t mask = 1;
  std::uint32_t labels = 7;
  REQUIRE(label_reference(&mask, 1, 0, 5, Connectivity::Eight, &labels, 1, parent) == 0);
  REQUIRE(label_reference(&mask, 1, 5, 0, Connectivity::Four, &labels, 1, parent) == 0);
  REQUIRE(labels == 7);
}
