// SPDX-License-Identifier: LGPL-2.1-or-later
#include "detect_frames.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "pipeline/sky/sky_generator.hpp"
#include "plugins/common/result_meta.hpp"

namespace starsift::test {

std::vector<TestImage> sky_frames(int count, int width, int height) {
  starsift::SkyParams p;
  p.width = width;
  p.height = height;
  p.star_density = 0.0;
  p.hot_pixel_fraction = 0.0;
  p.jitter = 0.0;
  p.movers = 3;
  p.mover_snr_min = 25;
  p.mover_snr_max = 40;
  p.mover_speed_min = 1.0;
  p.mover_speed_max = 2.0;
  starsift::SkyGenerator sky(p, 2);
  starsift::SkyTruth truth;
  std::vector<TestImage> frames;
  for (int i = 0; i < count; ++i) {
    TestImage frame = make_frame(PixelFormat::Gray16, width, height, 0);
    sky.render(static_cast<std::uint64_t>(i), frame.view(), truth);
    frames.push_back(std::move(frame));
  }
  return frames;
}

TestImage broken_trail_frame(int w, int h, bool star) {
  TestImage frame = make_frame(PixelFormat::Gray16, w, h, 0);
  std::mt19937 rng(11);
  std::normal_distribution<double> noise(0.0, 10.0);
  const double x0 = 30.0, y0 = 60.0, dx = 190.0, dy = 70.0;
  const double length = std::hypot(dx, dy), c = dx / length, s = dy / length;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const double t = (x - x0) * c + (y - y0) * s, d = -(x - x0) * s + (y - y0) * c;
      const bool on = t >= 0.0 && t <= length && (t < 95.0 || t > 107.0);
      const double r2 = (x - 60.0) * (x - 60.0) + (y - 160.0) * (y - 160.0);
      const double v = 1000.0 + noise(rng) +
                       (on ? 400.0 * std::exp(-d * d / (2 * 1.2 * 1.2)) : 0.0) +
                       (star ? 500.0 * std::exp(-r2 / (2 * 1.5 * 1.5)) : 0.0);
      frame.view().row_as<std::uint16_t>(y)[x] = static_cast<std::uint16_t>(std::lround(v));
    }
  }
  return frame;
}

TestImage star_frame(int w, int h, double sky, double noise, std::uint32_t seed,
                     const std::vector<Blob>& stars) {
  TestImage frame = make_frame(PixelFormat::Gray16, w, h, 0);
  draw_blobs(w, h, stars, noise, seed, sky, [&](int x, int y, double v) {
    frame.view().row_as<std::uint16_t>(y)[x] = static_cast<std::uint16_t>(std::lround(v));
  });
  return frame;
}

Detected push_and_pull(GstHarness* harness, GstBuffer* in) {
  REQUIRE(gst_harness_push(harness, in) == GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(harness);
  REQUIRE(out != nullptr);
  const auto catalogue = starsift::gst::find_buffer_result(out, starsift::kCatalogueKind);
  REQUIRE(catalogue.has_value());
  const auto span = catalogue->as<DetectedObject>();
  return {out, {span.begin(), span.end()}};
}

}  // namespace starsift::test
