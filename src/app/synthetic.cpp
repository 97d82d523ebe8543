// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/synthetic.hpp"

#include <algorithm>
#include <cmath>

#include "app/rng.hpp"
#include "pipeline/error.hpp"

namespace starsift::app {

namespace {

constexpr double kFullScale = 65535.0;
// Stream tags for Rng::derive, so stars, hot pixels and frames never share random numbers.
constexpr std::uint64_t kStarStream = 0x5354415253ull;  // "STARS"
constexpr std::uint64_t kHotStream = 0x484f54ull;       // "HOT"
// Brightest peak drawn; brighter stars would only widen the saturated core.
constexpr double kMaxPeak = 4.0e5;
// A star is drawn out to where it falls below this many ADU (and at most kMaxStarRadius).
constexpr double kStarCutoff = 0.05;
constexpr int kMaxStarRadius = 32;

std::uint16_t to_sample(double v) {
  return static_cast<std::uint16_t>(std::clamp(std::lround(v), 0L, 65535L));
}

void check_gray16(ImageView out, const SkyParams& p) {
  if (out.format != PixelFormat::Gray16 || out.width != p.width || out.height != p.height) {
    throw Error("synthetic sky: output view does not match the sky",
                "GRAY16, " + std::to_string(p.width) + "x" + std::to_string(p.height));
  }
}

}  // namespace

int SkyParams::star_count_for_area() const {
  if (star_count > 0) return star_count;
  const double megapixels = static_cast<double>(width) * height / 1.0e6;
  return std::max(1, static_cast<int>(std::lround(stars_per_megapixel * megapixels)));
}

SyntheticSky::SyntheticSky(const SkyParams& params) : params_(params) {
  const int w = params_.width;
  const int h = params_.height;
  const std::size_t area = static_cast<std::size_t>(w) * h;
  star_count_ = params_.star_count_for_area();

  // Background with a linear gradient.
  clean_.resize(area);
  for (int y = 0; y < h; ++y) {
    const double fy = h > 1 ? static_cast<double>(y) / (h - 1) : 0.0;
    for (int x = 0; x < w; ++x) {
      const double fx = w > 1 ? static_cast<double>(x) / (w - 1) : 0.0;
      clean_[static_cast<std::size_t>(y) * w + x] =
          static_cast<float>(params_.sky_level + params_.gradient_x * fx + params_.gradient_y * fy);
    }
  }

  // Stars: Gaussian PSFs, power-law peaks.
  Rng rng(Rng::derive(params_.seed, kStarStream));
  const double two_s2 = 2.0 * params_.psf_sigma * params_.psf_sigma;
  for (int i = 0; i < star_count_; ++i) {
    const double cx = rng.uniform() * w - 0.5;
    const double cy = rng.uniform() * h - 0.5;
    const double peak = std::min(
        kMaxPeak, params_.min_peak * std::pow(rng.uniform_open(), -1.0 / params_.flux_slope));
    const int radius =
        std::min(kMaxStarRadius,
                 static_cast<int>(std::ceil(std::sqrt(two_s2 * std::log(peak / kStarCutoff)))));
    const int x0 = std::max(0, static_cast<int>(std::floor(cx)) - radius);
    const int x1 = std::min(w - 1, static_cast<int>(std::ceil(cx)) + radius);
    const int y0 = std::max(0, static_cast<int>(std::floor(cy)) - radius);
    const int y1 = std::min(h - 1, static_cast<int>(std::ceil(cy)) + radius);
    for (int y = y0; y <= y1; ++y) {
      for (int x = x0; x <= x1; ++x) {
        const double r2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
        clean_[static_cast<std::size_t>(y) * w + x] +=
            static_cast<float>(peak * std::exp(-r2 / two_s2));
      }
    }
  }

  // What the sensor reads without noise saturates at full scale; the noise follows it.
  sigma_.resize(area);
  const double read2 = params_.read_noise * params_.read_noise;
  for (std::size_t i = 0; i < area; ++i) {
    clean_[i] = static_cast<float>(std::clamp<double>(clean_[i], 0.0, kFullScale));
    sigma_[i] = static_cast<float>(std::sqrt(read2 + clean_[i] / params_.gain));
  }

  // Hot pixels: fixed positions, levels log-uniform in [hot_min, hot_max].
  hot_.assign(area, 0);
  Rng hot_rng(Rng::derive(params_.seed, kHotStream));
  const auto hot_count = static_cast<std::size_t>(std::llround(params_.hot_pixels * area));
  const double log_min = std::log(params_.hot_min);
  const double log_span = std::log(params_.hot_max) - log_min;
  for (std::size_t i = 0; i < hot_count; ++i) {
    const auto index = static_cast<std::size_t>(hot_rng.uniform() * area);
    hot_[index] = to_sample(std::exp(log_min + log_span * hot_rng.uniform()));
  }
}

void SyntheticSky::render_clean(ImageView out) const {
  check_gray16(out, params_);
  for (int y = 0; y < params_.height; ++y) {
    auto* row = out.row_as<std::uint16_t>(y);
    const float* src = clean_.data() + static_cast<std::size_t>(y) * params_.width;
    for (int x = 0; x < params_.width; ++x) row[x] = to_sample(src[x]);
  }
}

void SyntheticSky::render_noisy(int index, ImageView out, ThreadPool& pool) const {
  check_gray16(out, params_);
  const int w = params_.width;
  const double salt_pepper = params_.salt_pepper;
  pool.parallel_for(params_.height, [&](int begin, int end) {
    for (int y = begin; y < end; ++y) {
      // Frame numbers start at 1 in the stream tag: 0 is left to the static parts.
      Rng rng(Rng::derive(params_.seed, static_cast<std::uint64_t>(index) + 1,
                          static_cast<std::uint64_t>(y)));
      auto* row = out.row_as<std::uint16_t>(y);
      const std::size_t base = static_cast<std::size_t>(y) * w;
      for (int x = 0; x < w; ++x) {
        // Both draws happen for every pixel, so each pixel's numbers stay put whatever the
        // parameters.
        const double noise = rng.normal();
        const double u = rng.uniform();
        double v = clean_[base + x] + sigma_[base + x] * noise;
        if (u < salt_pepper) v = u < 0.5 * salt_pepper ? 0.0 : kFullScale;
        if (hot_[base + x] != 0) v = hot_[base + x];
        row[x] = to_sample(v);
      }
    }
  });
}

}  // namespace starsift::app
