// SPDX-License-Identifier: LGPL-2.1-or-later
// A live view's picture (view_render.hpp) and the stamp that measures its latency
// (view_stamp.hpp): the stretch as the preview's, fitted at most once a second, the marks
// drawn, GRAY8 and GRAY16 alike; a stamp reads back as written and a damaged one is refused.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>

#include "app/host_image.hpp"
#include "app/stretch.hpp"
#include "daemon/runtime/view_render.hpp"
#include "daemon/stream/view_stamp.hpp"
#include "pipeline/error.hpp"

using namespace starsift;
using namespace starsift::daemon;

namespace {

// A noisy sky at 1000 ± 30 with one bright star at (20, 20).
app::HostImage sky16(int width, int height, unsigned seed, int level = 1000) {
  app::HostImage image(width, height, PixelFormat::Gray16);
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(level, 30.0);
  const ImageView v = image.view();
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      v.row_as<std::uint16_t>(y)[x] = static_cast<std::uint16_t>(noise(rng));
    }
  }
  v.row_as<std::uint16_t>(20)[20] = 40000;
  return image;
}

}  // namespace

TEST_CASE("a live view is the preview's stretch, applied through a table", "[view]") {
  const app::HostImage frame = sky16(64, 48, 1);
  app::HostImage expected(64, 48, PixelFormat::Gray8);
  app::apply_stretch(app::fit_asinh_stretch(frame.cview()), frame.cview(), expected.view());
  app::HostImage out(64, 48, PixelFormat::Gray8);
  ViewRenderer renderer;
  renderer.render(frame.cview(), {}, {}, 0, out.view());
  for (int y = 0; y < 48; ++y) {
    for (int x = 0; x < 64; ++x) {
      REQUIRE(out.cview().row_as<std::uint8_t>(y)[x] ==
              expected.cview().row_as<std::uint8_t>(y)[x]);
    }
  }
  CHECK(out.cview().row_as<std::uint8_t>(20)[20] == 255);  // the star's core is white
}

TEST_CASE("the stretch is fitted again after a second, or at once for a new size", "[view]") {
  ViewRenderer renderer;
  app::HostImage out(64, 48, PixelFormat::Gray8);
  const app::HostImage dim = sky16(64, 48, 2, 1000);
  const app::HostImage bright = sky16(64, 48, 3, 3000);  // the sky brightens (dawn)
  renderer.render(dim.cview(), {}, {}, 0, out.view());
  const int dim_grey = out.cview().row_as<std::uint8_t>(5)[5];
  // Within the second, the dim sky's stretch is kept: the bright sky's background is near
  // white.
  renderer.render(bright.cview(), {}, {}, 500'000, out.view());
  CHECK(out.cview().row_as<std::uint8_t>(5)[5] > dim_grey + 100);
  // After it, the stretch follows the sky: its background is grey again.
  renderer.render(bright.cview(), {}, {}, 1'000'000, out.view());
  CHECK(std::abs(out.cview().row_as<std::uint8_t>(5)[5] - dim_grey) < 60);
  // Another size is fitted at once.
  app::HostImage small(32, 24, PixelFormat::Gray8);
  const app::HostImage dim_small = sky16(32, 24, 4, 1000);
  renderer.render(dim_small.cview(), {}, {}, 1'100'000, small.view());
  CHECK(small.cview().row_as<std::uint8_t>(5)[5] < 255);
}

TEST_CASE("GRAY8 frames are stretched as GRAY16 times 257; others are refused", "[view]") {
  const app::HostImage wide = sky16(40, 30, 5);
  app::HostImage narrow(40, 30, PixelFormat::Gray8);
  for (int y = 0; y < 30; ++y) {
    for (int x = 0; x < 40; ++x) {
      narrow.view().row_as<std::uint8_t>(y)[x] =
          static_cast<std::uint8_t>(wide.cview().row_as<std::uint16_t>(y)[x] / 257);
    }
  }
  app::HostImage widened(40, 30, PixelFormat::Gray16);
  for (int y = 0; y < 30; ++y) {
    for (int x = 0; x < 40; ++x) {
      widened.view().row_as<std::uint16_t>(y)[x] =
          static_cast<std::uint16_t>(narrow.cview().row_as<std::uint8_t>(y)[x] * 257);
    }
  }
  app::HostImage a(40, 30, PixelFormat::Gray8), b(40, 30, PixelFormat::Gray8);
  ViewRenderer r8, r16;
  r8.render(narrow.cview(), {}, {}, 0, a.view());
  r16.render(widened.cview(), {}, {}, 0, b.view());
  for (int y = 0; y < 30; ++y) {
    for (int x = 0; x < 40; ++x) {
      REQUIRE(a.cview().row_as<std::uint8_t>(y)[x] == b.cview().row_as<std::uint8_t>(y)[x]);
    }
  }
  app::HostImage rgba(4, 4, PixelFormat::Gray32F);
  CHECK_THROWS_AS(r8.render(rgba.cview(), {}, {}, 0, a.view()), Error);
}

TEST_CASE("the detections view marks objects and movers", "[view]") {
  const app::HostImage frame = sky16(64, 64, 6);
  app::HostImage out(64, 64, PixelFormat::Gray8);
  DetectedObject object{};
  object.xmin = 30;
  object.ymin = 30;
  object.xmax = 33;
  object.ymax = 34;
  Track mover{};
  mover.x = 15.0f;
  mover.y = 45.0f;
  ViewRenderer renderer;
  renderer.render(frame.cview(), std::span<const DetectedObject>(&object, 1),
                  std::span<const Track>(&mover, 1), 0, out.view());
  const auto at = [&](int x, int y) { return out.cview().row_as<std::uint8_t>(y)[x]; };
  // The box is the bounding box grown by 2 px; the ring has a 9 px radius.
  for (int x = 28; x <= 35; ++x) CHECK(at(x, 28) == 255);
  for (int y = 28; y <= 36; ++y) CHECK(at(35, y) == 255);
  CHECK(at(24, 45) == 255);
  CHECK(at(15, 36) == 255);
}

TEST_CASE("a view stamp reads back as written; a damaged one is refused", "[view]") {
  app::HostImage picture(384, 32, PixelFormat::Gray8);
  const std::uint64_t value = 1795000000123456ULL;  // a UTC in microseconds
  REQUIRE(write_view_stamp(picture.view(), value));
  CHECK(read_view_stamp(picture.cview()) == value);
  CHECK(read_view_stamp(picture.cview()) != value + 1);
  // One cell flipped: the check no longer matches.
  const int cell = 384 / kStampBits;
  for (int y = 0; y < kStampCellHeight; ++y) {
    auto* row = picture.view().row_as<std::uint8_t>(y);
    for (int x = 10 * cell; x < 11 * cell; ++x) row[x] = static_cast<std::uint8_t>(255 - row[x]);
  }
  CHECK_FALSE(read_view_stamp(picture.cview()).has_value());
  // Too narrow a picture holds none.
  app::HostImage narrow(200, 32, PixelFormat::Gray8);
  CHECK_FALSE(write_view_stamp(narrow.view(), value));
  CHECK_FALSE(read_view_stamp(narrow.cview()).has_value());
}
