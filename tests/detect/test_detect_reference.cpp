// SPDX-License-Identifier: LGPL-2.1-or-later
// Detection on the CPU: each object's record against a direct computation over its pixels,
// the background mesh against a known sky, the synthetic sky's movers recovered, capacity
// overflow, empty frames, min-area, flags, the stage's result, and the YAML entry.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "pipeline/chain/chain_config.hpp"
#include "pipeline/chain/chain_stages.hpp"
#include "pipeline/detect/detect_stage.hpp"
#include "pipeline/detect/reference.hpp"
#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/error.hpp"
#include "pipeline/sky/sky_generator.hpp"
#include "sky/sky_test_support.hpp"
#include "support/blob_frame.hpp"
#include "support/test_image.hpp"

using namespace starsift;
using namespace starsift::test;
using Catch::Matchers::Contains;

namespace {

DetectParams significance_params(double threshold) {
  DetectParams p;
  p.background = DetectBackground::None;
  p.filter = DetectFilter::None;
  p.threshold = threshold;
  p.min_area = 1;
  return p;
}

}  // namespace

TEST_CASE("the significance is each pixel's filter sum, taps in raster order, bit for bit",
          "[detect][reference]") {
  // The reference filters a tap at a time over whole rows (so that the loop vectorises); each
  // pixel must still be the sum from 0 of its in-frame taps times (value - background), in the
  // taps' raster order, over sigma times the kernel's norm: the CUDA kernel's arithmetic.
  const int w = 61, h = 23;
  const TestImage in = blob_frame(w, h, {{10.3, 12.7, 1.5, 40}, {0.4, 3, 1.3, 30}}, 2.0, 5);
  for (const DetectFilter filter : {DetectFilter::Default, DetectFilter::Gaussian}) {
    for (const double fwhm : {2.0, 4.5}) {
      DetectParams p = significance_params(3.0);
      p.background = DetectBackground::Mesh;
      p.mesh = 16;
      p.filter = filter;
      p.fwhm = fwhm;
      DetectState state(p, {w, h, PixelFormat::Gray32F, 32});
      std::vector<DetectedObject> records(100);
      TestImage out(w, h, PixelFormat::Gray32F);
      state.process(in.cview(), out.view(), records, shared_thread_pool());
      const DetectKernel k = detect_kernel(p);
      const int r = k.radius;
      const auto norm = static_cast<float>(k.norm);
      REQUIRE(r >= 1);
      auto residual = [&](int x, int y) {
        return in.cview().row_as<float>(y)[x] - state.background().at(x, y);
      };
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
          float f = 0.0f;
          for (int dy = -r; dy <= r; ++dy)
            for (int dx = -r; dx <= r; ++dx) {
              if (y + dy < 0 || y + dy >= h || x + dx < 0 || x + dx >= w) continue;
              f += k.taps[static_cast<std::size_t>(dy + r) * (2 * r + 1) + dx + r] *
                   residual(x + dx, y + dy);
            }
          INFO("radius " << r << " at " << x << "," << y);
          REQUIRE(state.significance().at(x, y) == f / (state.sigma().at(x, y) * norm));
        }
      if (filter == DetectFilter::Default) break;  // fwhm applies to the Gaussian only
    }
  }
}

TEST_CASE("each record equals a direct computation over its object's pixels",
          "[detect][reference]") {
  const int w = 97, h = 61;
  const TestImage in = blob_frame(
      w, h,
      {{10.3, 12.7, 1.5, 40}, {50.0, 30.0, 2.5, 25}, {80.6, 50.2, 1.2, 60}, {0.4, 30, 1.3, 30}},
      0.3, 7);
  const DetectParams p = significance_params(3.0);
  DetectState state(p, {w, h, PixelFormat::Gray32F, 32});
  std::vector<DetectedObject> records(100);
  TestImage out(w, h, PixelFormat::Gray32F);
  const DetectCounts counts = state.process(in.cview(), out.view(), records, shared_thread_pool());
  REQUIRE(counts.objects >= 4);
  CHECK(counts.overflow == 0);
  CHECK(out.same_pixels(in));  // output: input
  const auto& labels = state.labels();
  for (std::uint32_t k = 0; k < counts.objects; ++k) {
    const DetectedObject& o = records[k];
    INFO("object " << o.id);
    CHECK(o.id == k + 1);
    // Direct: every pixel of this label.
    double f = 0, fx = 0, fy = 0, n = 0;
    int xmin = w, xmax = -1, ymin = h, ymax = -1;
    float peak = -1e30f;
    int first = -1;
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        if (labels[static_cast<std::size_t>(y) * w + x] != o.id) continue;
        if (first < 0) first = y * w + x;
        const float v = in.cview().row_as<float>(y)[x];
        f += v, fx += v * x, fy += v * y, ++n;
        xmin = std::min(xmin, x), xmax = std::max(xmax, x);
        ymin = std::min(ymin, y), ymax = std::max(ymax, y);
        peak = std::max(peak, v);
        CHECK(state.significance().at(x, y) > 3.0f);
      }
    }
    CHECK(o.npix == static_cast<std::uint32_t>(n));
    CHECK(o.xmin == xmin);
    CHECK(o.xmax == xmax);
    CHECK(o.ymin == ymin);
    CHECK(o.ymax == ymax);
    CHECK(o.flux == Approx(f).epsilon(1e-5));
    CHECK(o.flux_err == Approx(std::sqrt(n)).epsilon(1e-6));  // sigma 1
    CHECK(o.x == Approx(fx / f).margin(1e-4));
    CHECK(o.y == Approx(fy / f).margin(1e-4));
    CHECK(o.peak == peak);
    CHECK(((o.flags & kObjectTouchesEdge) != 0) ==
          (xmin == 0 || ymin == 0 || xmax == w - 1 || ymax == h - 1));
    if (k > 0) CHECK(first > static_cast<int>(records[k - 1].ymin) * 0);  // raster order below
  }
  // Dense ids in raster order of the first pixel.
  std::vector<int> first_of(counts.objects + 1, -1);
  for (int i = 0; i < w * h; ++i) {
    const std::uint32_t l = labels[i];
    if (l != 0 && first_of[l] < 0) first_of[l] = i;
  }
  for (std::uint32_t k = 2; k <= counts.objects; ++k) CHECK(first_of[k] > first_of[k - 1]);
  // The round blob: a ~ b ~ its sigma over the pixels above threshold (less than sigma), the
  // centroid within a few hundredths of a pixel of the truth.
  const auto near = [&](double x, double y) {
    for (std::uint32_t k = 0; k < counts.objects; ++k) {
      if (std::hypot(records[k].x - x, records[k].y - y) < 0.5) return &records[k];
    }
    return static_cast<DetectedObject*>(nullptr);
  };
  const DetectedObject* b = near(50.0, 30.0);
  REQUIRE(b != nullptr);
  CHECK(std::hypot(b->x - 50.0, b->y - 30.0) < 0.05);
  CHECK(b->elongation == Approx(1.0).margin(0.15));
  CHECK(b->x_err > 0.0f);
  CHECK(b->x_err < 0.1f);
  CHECK((b->flags & kObjectTouchesEdge) == 0);
  const DetectedObject* edge = near(0.4, 30.0);
  REQUIRE(edge != nullptr);
  CHECK((edge->flags & kObjectTouchesEdge) != 0);
}

TEST_CASE("a streak is one object with its length and angle", "[detect][reference]") {
  // A uniform trail of 60 px at 30 degrees, 1.2 px wide (a mover at 60 px/frame).
  const int w = 128, h = 96;
  TestImage in(w, h, PixelFormat::Gray32F);
  const double angle = 30.0 * M_PI / 180.0, length = 60.0, cx = 64.2, cy = 47.6;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      double v = 0.0;
      for (int s = 0; s <= 600; ++s) {
        const double t = -0.5 + s / 600.0;
        const double px = cx + t * length * std::cos(angle), py = cy + t * length * std::sin(angle);
        const double r2 = (x - px) * (x - px) + (y - py) * (y - py);
        v += std::exp(-r2 / (2 * 1.2 * 1.2)) * 0.05;
      }
      in.view().row_as<float>(y)[x] = static_cast<float>(v);
    }
  }
  DetectParams p = significance_params(0.5);
  DetectState state(p, {w, h, PixelFormat::Gray32F, 32});
  std::vector<DetectedObject> records(10);
  TestImage out(w, h, PixelFormat::Gray32F);
  const DetectCounts counts = state.process(in.cview(), out.view(), records, shared_thread_pool());
  REQUIRE(counts.objects == 1);
  const DetectedObject& o = records[0];
  CHECK(o.theta == Approx(angle).margin(0.01));
  CHECK(o.length == Approx(length).epsilon(0.1));  // the threshold trims the ends
  CHECK(o.elongation > 10.0f);
  CHECK(std::hypot(o.x - cx, o.y - cy) < 0.2);
  CHECK(std::hypot(o.x_end - o.x_start, o.y_end - o.y_start) == Approx(o.length).epsilon(1e-4));
}

TEST_CASE("capacity: the objects beyond max-objects are counted, never written",
          "[detect][reference]") {
  const int w = 64, h = 64;
  TestImage in(w, h, PixelFormat::Gray32F);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      in.view().row_as<float>(y)[x] = (x % 4 == 1 && y % 4 == 1) ? 10.0f : 0.0f;  // 256 dots
    }
  }
  DetectParams p = significance_params(3.0);
  p.max_objects = 100;
  DetectState state(p, {w, h, PixelFormat::Gray32F, 32});
  std::vector<DetectedObject> records(100);
  TestImage out(w, h, PixelFormat::Gray32F);
  DetectCounts counts = state.process(in.cview(), out.view(), records, shared_thread_pool());
  CHECK(counts.objects == 100);
  CHECK(counts.overflow == 156);
  CHECK(records[99].id == 100);
  CHECK((records[0].flags & kObjectSingular) != 0);  // one pixel
  CHECK(records[0].a > 0.0f);

  // min-area drops them all; an empty frame gives nothing.
  p.min_area = 2;
  state.set_params(p);
  counts = state.process(in.cview(), out.view(), records, shared_thread_pool());
  CHECK(counts.objects == 0);
  CHECK(counts.overflow == 0);
  TestImage empty(w, h, PixelFormat::Gray32F);
  counts = state.process(empty.cview(), out.view(), records, shared_thread_pool());
  CHECK(counts.objects == 0);
}

TEST_CASE("the background mesh follows a sky with a gradient", "[detect][reference]") {
  SkyParams sp = flat_sky(256, 192);
  sp.sky_gradient = 0.5;  // fraction across the frame
  SkyGenerator sky(sp, 2);
  SkyTruth truth;
  const TestImage frame = render_frame(sky, 0, PixelFormat::Gray16, truth);
  DetectParams p;
  p.mesh = 32;
  DetectState state(p, {256, 192, PixelFormat::Gray16, 16});
  std::vector<DetectedObject> records(64);
  TestImage out(256, 192, PixelFormat::Gray16);
  const DetectCounts counts =
      state.process(frame.cview(), out.view(), records, shared_thread_pool());
  // On pure noise a 5 sigma threshold of the filtered frame finds (nearly) nothing.
  CHECK(counts.objects <= 1);
  for (int y = 16; y < 192; y += 40) {
    for (int x = 16; x < 256; x += 40) {
      const double expected_adu = sky.sky_at(x, y) / sp.gain + sp.bias;
      const double sigma_adu = sky.background_sigma(x, y) / sp.gain;
      INFO("x " << x << " y " << y);
      CHECK(state.background().at(x, y) == Approx(expected_adu).margin(0.5 * sigma_adu));
      CHECK(state.sigma().at(x, y) == Approx(sigma_adu).epsilon(0.1));
    }
  }
}

TEST_CASE("the synthetic sky's movers are recovered", "[detect][reference]") {
  SkyParams sp = flat_sky(384, 256);
  sp.movers = 6;
  sp.mover_snr_min = 20;
  sp.mover_snr_max = 40;
  sp.mover_speed_min = 0.5;
  sp.mover_speed_max = 1.0;
  SkyGenerator sky(sp, 2);
  SkyTruth truth;
  const TestImage frame = render_frame(sky, 3, PixelFormat::Gray16, truth);
  DetectParams p;
  DetectState state(p, {384, 256, PixelFormat::Gray16, 16});
  std::vector<DetectedObject> records(64);
  TestImage out(384, 256, PixelFormat::Gray16);
  const DetectCounts counts =
      state.process(frame.cview(), out.view(), records, shared_thread_pool());
  int found = 0, inside = 0;
  double worst = 0.0;
  for (const MoverTruth& m : truth.movers) {
    if (m.x < 4 || m.y < 4 || m.x > 380 || m.y > 252) continue;
    ++inside;
    double best = 1e9;
    for (std::uint32_t k = 0; k < counts.objects; ++k) {
      best = std::min(best, std::hypot(records[k].x - m.x, records[k].y - m.y));
    }
    if (best < 0.5) ++found, worst = std::max(worst, best);
  }
  INFO("worst centroid error " << worst << " px");
  CHECK(inside >= 4);
  CHECK(found == inside);
  CHECK(counts.objects == static_cast<std::uint32_t>(inside));  // no false detections
  CHECK(worst < 0.25);
}

TEST_CASE("the detect stage hands back its catalogue through the engine", "[detect][stage]") {
  const BackendChoice cpu{Backend::Cpu, 0, "test"};
  const ChainConfig chain = parse_chain_yaml(
      "[{detect: {background: none, filter: none, threshold: 3, min-area: 1, "
      "max-objects: 2, output: labels}}]",
      "chain property");
  const TestImage in =
      blob_frame(40, 30, {{10, 10, 1.2, 20}, {30, 20, 1.2, 20}, {20, 25, 1, 20}}, 0.0, 1);
  for (int depth : {1, 3}) {
    auto engine = make_streaming_chain(build_chain_stages(chain, cpu), cpu, depth);
    engine->configure({40, 30, PixelFormat::Gray32F, 32});
    REQUIRE(engine->output_shape().format == PixelFormat::Gray16);
    engine->submit(in.cview(), 7);
    const FinishedFrame done = engine->wait_oldest();
    REQUIRE(done.results.size() == 1);
    const FrameResult& r = done.results[0];
    CHECK(r.layout.kind == kCatalogueKind);
    CHECK(r.layout.capacity == 2);
    CHECK(r.header().count == 2);
    CHECK(r.header().overflow == 1);
    const DetectedObject* o = r.view.records<DetectedObject>();
    CHECK(o[0].x == Approx(10).margin(0.01));
    CHECK(o[1].id == 2);
    // The labels frame: the object's id on its centre pixel.
    CHECK(done.output.row_as<std::uint16_t>(10)[10] == 1);
    CHECK(done.output.row_as<std::uint16_t>(0)[0] == 0);
    engine->pop();
  }
}

TEST_CASE("detect in YAML: keys, defaults and refusals", "[detect][chain]") {
  const ChainConfig c = parse_chain_yaml(
      "- detect: {background: global, mesh: 32, filter: gaussian, fwhm: 2.5, threshold: 4, "
      "connectivity: 4, min-area: 2, max-objects: 10, output: overlay}",
      "f.yaml");
  const auto& p = std::get<DetectParams>(c.stages[0].params);
  CHECK(p.background == DetectBackground::Global);
  CHECK(p.fwhm == 2.5);
  CHECK(p.connectivity == Connectivity::Four);
  CHECK(p.output == DetectOutput::Overlay);
  CHECK(std::get<DetectParams>(parse_chain_yaml("- detect:", "f").stages[0].params) ==
        DetectParams{});
  REQUIRE_THROWS_WITH(parse_chain_yaml("- detect: {threshold: 0}", "f.yaml"),
                      Contains("f.yaml:1:") && Contains("threshold"));
  REQUIRE_THROWS_WITH(parse_chain_yaml("- detect: {connectivity: 6}", "f.yaml"),
                      Contains("connectivity") && Contains("4, 8"));
  REQUIRE_THROWS_WITH(parse_chain_yaml("- detect: {fwhm: 9}", "f.yaml"), Contains("fwhm"));
  REQUIRE_THROWS_WITH(parse_chain_yaml("- detect: {output: png}", "f.yaml"),
                      Contains("input, labels, overlay"));
  // Caps: detect reads grey frames and GRAY32F; the overlay is GRAY8.
  CHECK(chain_output_format(c, PixelFormat::Gray16) == PixelFormat::Gray8);
  CHECK_FALSE(chain_output_format(c, PixelFormat::Rgba).has_value());
}

TEST_CASE("the whiten-then-detect example parses and runs", "[detect][chain]") {
  const ChainConfig c =
      load_chain_file(std::string(STARSIFT_SOURCE_DIR) + "/config/examples/whiten-detect.yaml");
  REQUIRE(c.stages.size() == 2);
  const auto& d = std::get<DetectParams>(c.stages[1].params);
  CHECK(d.background == DetectBackground::None);
  CHECK(d.output == DetectOutput::Overlay);
  // GRAY16 in, the overlay out (the snr in between is GRAY32F): a chain GStreamer can carry.
  CHECK(chain_output_format(c, PixelFormat::Gray16) == PixelFormat::Gray8);
  const auto shapes = chain_shapes(c, {640, 480, PixelFormat::Gray16, 12});
  CHECK(shapes[1].format == PixelFormat::Gray32F);
}

TEST_CASE("background auto reads a significance image in an integer format through its scale",
          "[detect][reference]") {
  // The same significance, as GRAY32F (offset 0, gain 1) and as 12-bit samples 2048 + 64 z
  // (whitening's output: significance), z a multiple of 1/64 so both are exact: the filter's
  // sums differ by the factor 64, a power of two, so the masks, and every position and shape,
  // are the same; fluxes and peaks scale by 64.
  const int w = 80, h = 56;
  TestImage z =
      blob_frame(w, h, {{20.2, 14.6, 1.6, 12}, {55.0, 40.3, 2.0, 7}, {70.5, 8.4, 1.3, 9}}, 0.8, 11);
  TestImage scaled(w, h, PixelFormat::Gray16);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      float& v = z.view().row_as<float>(y)[x];
      v = std::clamp(std::round(v * 64.0f) / 64.0f, -32.0f, 31.9f);
      scaled.view().row_as<std::uint16_t>(y)[x] = static_cast<std::uint16_t>(2048.0f + 64.0f * v);
    }
  }
  DetectParams p;  // background auto, the 3 x 3 filter, threshold in sigmas
  FrameShape scaled_shape{w, h, PixelFormat::Gray16, 12};
  scaled_shape.significance = {2048.0, 64.0};
  const DetectBackgroundPlan plan = detect_background_plan(p, scaled_shape);
  CHECK(plan.background == DetectBackground::None);
  CHECK(plan.level == 2048.0f);
  CHECK(plan.noise == 64.0f);
  // Without a scale, auto is the mesh; snr (offset 0, gain 1) is none at 0 and 1.
  CHECK(detect_background_plan(p, {w, h, PixelFormat::Gray16, 12}).background ==
        DetectBackground::Mesh);
  const FrameShape snr_shape{w, h, PixelFormat::Gray32F, 32, {0.0, 1.0}};
  CHECK(detect_background_plan(p, snr_shape) == DetectBackgroundPlan{DetectBackground::None});

  std::vector<DetectedObject> a(64), b(64);
  TestImage out_a(w, h, PixelFormat::Gray32F), out_b(w, h, PixelFormat::Gray16);
  DetectState float_state(p, snr_shape), scaled_state(p, scaled_shape);
  const DetectCounts ca = float_state.process(z.cview(), out_a.view(), a, shared_thread_pool());
  const DetectCounts cb =
      scaled_state.process(scaled.cview(), out_b.view(), b, shared_thread_pool());
  REQUIRE(ca.objects >= 3);
  REQUIRE(cb.objects == ca.objects);
  for (std::uint32_t k = 0; k < ca.objects; ++k) {
    INFO("object " << k + 1);
    CHECK(b[k].npix == a[k].npix);
    CHECK(b[k].x == a[k].x);
    CHECK(b[k].y == a[k].y);
    CHECK(b[k].a == a[k].a);
    CHECK(b[k].flux == Approx(64.0 * a[k].flux).epsilon(1e-6));
    CHECK(b[k].peak == 64.0f * a[k].peak);
  }
}

TEST_CASE("pixels of both signs: unweighted moments, never a NaN ellipse", "[detect][reference]") {
  // A positive flux whose weighted second moments are negative: the ends of a row weigh -4
  // each, the middle +9 (total +1), so sum v x^2 / sum v - xc^2 < 0.
  ObjectSums s;
  add_pixel(s, 10, 5, -4.0f, 1.0f);
  add_pixel(s, 11, 5, 9.0f, 1.0f);
  add_pixel(s, 12, 5, -4.0f, 1.0f);
  const DetectedObject o = finalize_object(s, 1, 64, 64);
  CHECK((o.flags & kObjectNoFlux) != 0);
  CHECK(o.x == Approx(11.0));
  CHECK(o.y == Approx(5.0));
  CHECK(std::isfinite(o.a));
  CHECK(std::isfinite(o.b));
  CHECK(o.a == Approx(std::sqrt(2.0 / 3.0 + 1.0 / 12.0)));  // x2 of 10, 11, 12, plus 1/12
  // A centroid outside the box: a small positive flux from a large positive and a large
  // negative pixel.
  ObjectSums t;
  add_pixel(t, 20, 20, 10.0f, 1.0f);
  add_pixel(t, 21, 20, -9.5f, 1.0f);
  const DetectedObject u = finalize_object(t, 1, 64, 64);
  CHECK((u.flags & kObjectNoFlux) != 0);
  CHECK(u.x == Approx(20.5));
  // Positive pixels keep the weighted moments.
  ObjectSums p;
  add_pixel(p, 3, 3, 1.0f, 1.0f);
  add_pixel(p, 4, 3, 3.0f, 1.0f);
  const DetectedObject q = finalize_object(p, 1, 64, 64);
  CHECK((q.flags & kObjectNoFlux) == 0);
  CHECK(q.x == Approx(3.75));
}
