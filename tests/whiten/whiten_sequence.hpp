// SPDX-License-Identifier: LGPL-2.1-or-later
// Runs whitening over generated frame sequences and measures the residuals: shared by the
// whitening tests and the hidden measurements that chose the defaults.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <utility>
#include <vector>

#include "pipeline/thread_pool.hpp"
#include "pipeline/whiten/reference.hpp"
#include "support/star_scene.hpp"
#include "support/test_image.hpp"

namespace starsift::test {

// The whitening modes most tests exercise: shift none, fit current, reject mask, float history
// (the defaults were these before the measured best became the default: docs/whitening.md,
// "Defaults"). Tests of a mode start from here and set what they test.
inline WhitenParams classic_params() {
  WhitenParams p;
  p.shift = WhitenShift::None;
  p.fit = WhitenFit::Current;
  p.reject = WhitenReject::Mask;
  p.history_format = WhitenHistoryFormat::Float;
  p.output = WhitenOutput::Residual;
  return p;
}

// A point-like object crossing the field: at frame t >= first it is at start + (t - first) *
// velocity, with the scene's PSF.
struct Mover {
  int first = 0;
  double x = 0.0, y = 0.0;
  double vx = 0.0, vy = 0.0;
  double peak = 0.0;
  int last = 1 << 30;

  bool present(int t) const { return t >= first && t <= last; }
  double x_at(int t) const { return x + (t - first) * vx; }
  double y_at(int t) const { return y + (t - first) * vy; }
};

// Frames of a star field seen through noise, jitter, changing transparency, with movers.
struct SkySequence {
  StarScene scene;
  double noise = 10.0;  // Gaussian sigma (ADU)
  double jitter = 0.0;  // each frame but the first moves by up to +-jitter px per axis
  std::vector<std::pair<double, double>> shifts;  // per-frame shifts (replace the jitter)
  double transparency = 0.0;  // relative rms of a per-frame scale of stars and sky
  std::vector<Mover> movers;
  // Hot pixels: fixed camera pixels (y * width + x) that read hot_level ADU more in every
  // frame, whatever the pointing.
  std::vector<std::size_t> hot_pixels;
  double hot_level = 0.0;
  std::uint32_t seed = 1;
  PixelFormat format = PixelFormat::Gray32F;
  int bit_depth = 32;

  FrameShape shape() const { return {scene.width, scene.height, format, bit_depth}; }

  std::pair<double, double> shift(int t) const {
    if (!shifts.empty()) return shifts[t % shifts.size()];
    if (jitter == 0.0 || t == 0) return {0.0, 0.0};
    std::mt19937 rng(seed * 104729u + static_cast<std::uint32_t>(t));
    std::uniform_real_distribution<double> j(-jitter, jitter);
    const double dx = j(rng);
    return {dx, j(rng)};
  }

  // The noiseless frame t (stars, sky, movers), on the camera grid.
  Plane clean(int t) const {
    const auto [dx, dy] = shift(t);
    Plane p = scene.render(dx, dy);
    for (const Mover& m : movers) {
      if (m.present(t)) add_gaussian(p, m.x_at(t), m.y_at(t), m.peak, scene.psf_sigma);
    }
    if (transparency > 0.0) {
      std::mt19937 rng(seed * 7919u + static_cast<std::uint32_t>(t));
      std::normal_distribution<double> scale(1.0, transparency);
      const double s = scale(rng);
      for (float& v : p.pixels) v = static_cast<float>(v * s);
    }
    for (const std::size_t i : hot_pixels) p.pixels[i] += static_cast<float>(hot_level);
    return p;
  }

  TestImage frame(int t) const {
    Plane p = clean(t);
    std::mt19937 rng(seed * 31337u + static_cast<std::uint32_t>(t));
    add_noise(p, noise, rng);
    return to_image(p, format, bit_depth);
  }
};

// `count` distinct hot pixels of a width x height frame at seeded places.
inline std::vector<std::size_t> random_pixels(int width, int height, int count,
                                              std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, static_cast<std::size_t>(width) * height - 1);
  std::vector<std::size_t> out;
  while (static_cast<int>(out.size()) < count) {
    const std::size_t i = pick(rng);
    if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
  }
  return out;
}

// Every frame's output (as a plane: GRAY32F outputs as they are, integer outputs as their
// values) and stats.
struct WhitenRun {
  std::vector<Plane> out;
  std::vector<WhitenStats> stats;
};

// Whitens frames 0..count-1 made by `frame(t)` (already in the input format).
inline WhitenRun run_whiten(const WhitenParams& params, const FrameShape& shape, int count,
                            const std::function<TestImage(int)>& frame) {
  static ThreadPool pool(2);
  WhitenState state(params, shape);
  WhitenRun run;
  const FrameShape out_shape = state.output_shape();
  for (int t = 0; t < count; ++t) {
    const TestImage in = frame(t);
    TestImage out(out_shape.width, out_shape.height, out_shape.format);
    state.process(in.cview(), out.view(), pool);
    run.out.push_back(to_plane(out));
    run.stats.push_back(state.last_stats());
  }
  return run;
}

// Mean and standard deviation over the pixels at least `margin` from the edges.
struct Moments {
  double mean = 0.0;
  double std = 0.0;
};
inline Moments moments(const Plane& plane, int margin = 0) {
  double sum = 0.0, sum2 = 0.0;
  long long count = 0;
  for (int y = margin; y < plane.height - margin; ++y)
    for (int x = margin; x < plane.width - margin; ++x) {
      const double v = plane.at(x, y);
      sum += v;
      sum2 += v * v;
      ++count;
    }
  const double mean = sum / count;
  return {mean, std::sqrt(std::max(0.0, sum2 / count - mean * mean))};
}

// The largest |value| within `radius` px of (cx, cy).
inline double peak_near(const Plane& plane, double cx, double cy, int radius) {
  double best = 0.0;
  const int x0 = static_cast<int>(std::lround(cx)), y0 = static_cast<int>(std::lround(cy));
  for (int y = y0 - radius; y <= y0 + radius; ++y)
    for (int x = x0 - radius; x <= x0 + radius; ++x) {
      if (x < 0 || y < 0 || x >= plane.width || y >= plane.height) continue;
      best = std::max(best, static_cast<double>(std::abs(plane.at(x, y))));
    }
  return best;
}

// The most negative value within `radius` px of (cx, cy) (0 when none is negative).
inline double trough_near(const Plane& plane, double cx, double cy, int radius) {
  double worst = 0.0;
  const int x0 = static_cast<int>(std::lround(cx)), y0 = static_cast<int>(std::lround(cy));
  for (int y = y0 - radius; y <= y0 + radius; ++y)
    for (int x = x0 - radius; x <= x0 + radius; ++x) {
      if (x < 0 || y < 0 || x >= plane.width || y >= plane.height) continue;
      worst = std::min(worst, static_cast<double>(plane.at(x, y)));
    }
  return worst;
}

}  // namespace starsift::test
