// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/sky/sky_background.hpp"

#include <algorithm>
#include <cmath>

#include "pipeline/sky/sky_random.hpp"

namespace starsift::sky {

namespace {
constexpr double kRadiansPerDegree = 3.141592653589793 / 180.0;
}  // namespace

SkyBackground::SkyBackground(const SkyParams& params)
    : width_(params.width), height_(params.height) {
  // The gradient runs along the angle's direction; `extent` is how far apart the frame's
  // first and last pixel centres are along it, so the sky changes by sky_gradient *
  // sky_level over the frame and equals sky_level at the centre.
  const double c = std::cos(params.sky_gradient_angle * kRadiansPerDegree);
  const double s = std::sin(params.sky_gradient_angle * kRadiansPerDegree);
  const double extent = std::fabs((width_ - 1) * c) + std::fabs((height_ - 1) * s);
  const double per_px = extent > 0.0 ? params.sky_level * params.sky_gradient / extent : 0.0;
  slope_x_ = per_px * c;
  slope_y_ = per_px * s;
  sky0_ = params.sky_level - slope_x_ * 0.5 * (width_ - 1) - slope_y_ * 0.5 * (height_ - 1);

  // Hot pixels: drawn uniformly once from the seed; a position drawn twice counts once.
  const std::size_t area = static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_);
  const auto count = static_cast<std::size_t>(std::llround(params.hot_pixel_fraction * area));
  hot_level_ = static_cast<float>(params.hot_pixel_level);
  SkyRng rng = SkyRng::stream(params.seed, Stream::HotPixels);
  hot_.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    hot_.push_back(std::min(area - 1, static_cast<std::size_t>(rng.uniform() * area)));
  }
  std::sort(hot_.begin(), hot_.end());
  hot_.erase(std::unique(hot_.begin(), hot_.end()), hot_.end());
  hot_row_start_.resize(static_cast<std::size_t>(height_) + 1);
  for (int y = 0; y <= height_; ++y) {
    hot_row_start_[y] = static_cast<std::size_t>(
        std::lower_bound(hot_.begin(), hot_.end(), static_cast<std::size_t>(y) * width_) -
        hot_.begin());
  }
}

double SkyBackground::sky_at(double x, double y) const noexcept {
  x = std::clamp(x, 0.0, static_cast<double>(width_ - 1));
  y = std::clamp(y, 0.0, static_cast<double>(height_ - 1));
  return sky0_ + slope_x_ * x + slope_y_ * y;
}

void SkyBackground::add_sky(int y, float* row) const noexcept {
  const double start = sky0_ + slope_y_ * y;
  for (int x = 0; x < width_; ++x) row[x] += static_cast<float>(start + slope_x_ * x);
}

void SkyBackground::add_hot_pixels(int y, float* row) const noexcept {
  const std::size_t row_start = static_cast<std::size_t>(y) * width_;
  for (std::size_t i = hot_row_start_[y]; i < hot_row_start_[y + 1]; ++i) {
    row[hot_[i] - row_start] += hot_level_;
  }
}

}  // namespace starsift::sky
