// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/frame_layout.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "app/quality/matching.hpp"

namespace starsift::quality {

namespace {

// Light below this fraction of the background sigma is taken as no light at all.
constexpr double kQuietLevel = 0.05;
constexpr double kHaloLevel = 0.5;
constexpr double kHotPixelRadius = 3.0;  // px: a hot pixel and the 4 x 4 taps of a resampling
constexpr double kMoverRadiusFwhm = 3.0;

// Wraps onto the field's period [-0.5, side - 0.5), as the sky does.
double wrap(double v, int side) {
  return v - side * std::floor((v + 0.5) / side);
}

// The part of a mover's path a residual may show: the previous frame's streak (a difference
// subtracts it) and this one's.
Streak mover_path(const MoverTruth& m) {
  return {m.x - 1.5 * m.vx, m.y - 1.5 * m.vy, m.x + 0.5 * m.vx, m.y + 0.5 * m.vy};
}

}  // namespace

std::string_view to_string(Place place) noexcept {
  switch (place) {
    case Place::SaturatedStar:
      return "saturated-star";
    case Place::Star:
      return "star";
    case Place::HotPixel:
      return "hot-pixel";
    case Place::Mover:
      return "mover";
    case Place::Clear:
      return "clear";
  }
  return "?";
}

FrameLayout::FrameLayout(const SkyGenerator& sky, const PsfKernel& kernel, int history,
                         double mask_snr)
    : sky_(sky),
      width_(sky.params().width),
      height_(sky.params().height),
      history_(history),
      fwhm_(sky.params().fwhm),
      peak_fraction_(sky.psf().peak_fraction()),
      centre_sigma_e_(sky.background_sigma(0.5 * (width_ - 1), 0.5 * (height_ - 1))),
      mask_snr_(mask_snr),
      saturation_e_((sky.params().max_adu(PixelFormat::Gray16) - sky.params().bias) *
                    sky.params().gain),
      quiet_(static_cast<std::size_t>(width_) * height_, 1),
      star_mask_(quiet_.size(), 0),
      noise_sigma_(width_, height_) {
  for (const StarTruth& s : sky.stars()) {
    reach_.push_back(reach_radius(kernel, s.flux, kQuietLevel * centre_sigma_e_));
    halo_.push_back(reach_radius(kernel, s.flux, kHaloLevel * centre_sigma_e_));
  }
  const double gain = sky.params().gain;
  for (int y = 0; y < height_; ++y) {
    for (int x = 0; x < width_; ++x) noise_sigma_.at(x, y) = sky.background_sigma(x, y) / gain;
  }
}

void FrameLayout::advance(const SkyTruth& truth) {
  shifts_.emplace_front(truth.shift_x, truth.shift_y);
  if (static_cast<int>(shifts_.size()) > history_ + 1) shifts_.pop_back();
  motion_ = 0.0;
  for (const auto& [sx, sy] : shifts_) {
    motion_ = std::max(motion_, std::hypot(sx - truth.shift_x, sy - truth.shift_y));
  }
}

void FrameLayout::paint_disc(std::vector<unsigned char>& mask, int width, int height, double cx,
                             double cy, double radius, unsigned char value) {
  const int x0 = std::max(0, static_cast<int>(std::floor(cx - radius)));
  const int x1 = std::min(width - 1, static_cast<int>(std::ceil(cx + radius)));
  const int y0 = std::max(0, static_cast<int>(std::floor(cy - radius)));
  const int y1 = std::min(height - 1, static_cast<int>(std::ceil(cy + radius)));
  const double r2 = radius * radius;
  for (int y = y0; y <= y1; ++y) {
    for (int x = x0; x <= x1; ++x) {
      if ((x - cx) * (x - cx) + (y - cy) * (y - cy) <= r2) {
        mask[static_cast<std::size_t>(y) * width + x] = value;
      }
    }
  }
}

void FrameLayout::lay_out(const SkyTruth& truth) {
  std::fill(quiet_.begin(), quiet_.end(), 1);
  std::fill(star_mask_.begin(), star_mask_.end(), 0);
  const double margin = motion_ + 1.0;
  stars_.clear();
  const std::vector<StarTruth>& field = sky_.stars();
  for (std::size_t i = 0; i < field.size(); ++i) {
    const double x = wrap(field[i].x + truth.shift_x, width_);
    const double y = wrap(field[i].y + truth.shift_y, height_);
    const double reach = reach_[i] + margin;
    // The field is periodic: a star near an edge also lights the opposite one.
    for (const int dy : {-height_, 0, height_}) {
      for (const int dx : {-width_, 0, width_}) {
        const double cx = x + dx, cy = y + dy;
        if (cx < -reach || cx > width_ - 1 + reach || cy < -reach || cy > height_ - 1 + reach) {
          continue;
        }
        const double sky_e = sky_.sky_at(x, y);
        const double snr = field[i].flux * peak_fraction_ / sky_.background_sigma(x, y);
        const bool saturated = field[i].flux * peak_fraction_ + sky_e >= saturation_e_;
        stars_.push_back({cx, cy, field[i].flux, snr, reach_[i], halo_[i], saturated});
        if (reach_[i] > 0.0) paint_disc(quiet_, width_, height_, cx, cy, reach, 0);
        if (snr >= mask_snr_) {
          paint_disc(star_mask_, width_, height_, cx, cy, halo_[i] + margin, 1);
        }
      }
    }
  }
  for (const std::size_t p : sky_.hot_pixels()) {
    paint_disc(quiet_, width_, height_, static_cast<double>(p % width_),
               static_cast<double>(p / width_), kHotPixelRadius + margin, 0);
  }
  movers_ = truth.movers;
  const double mover_radius = kMoverRadiusFwhm * fwhm_ + margin;
  for (const MoverTruth& m : movers_) {
    const Streak path = mover_path(m);
    const double length = std::hypot(path.x1 - path.x0, path.y1 - path.y0);
    const int steps = std::max(1, static_cast<int>(std::ceil(length)));
    for (int s = 0; s <= steps; ++s) {
      const double t = static_cast<double>(s) / steps;
      paint_disc(quiet_, width_, height_, path.x0 + t * (path.x1 - path.x0),
                 path.y0 + t * (path.y1 - path.y0), mover_radius, 0);
    }
  }
}

Place FrameLayout::classify(double x, double y) const noexcept {
  const double margin = motion_ + 1.0;
  for (const StarSpot& s : stars_) {
    if (s.saturated && std::hypot(x - s.x, y - s.y) <= s.halo + margin) {
      return Place::SaturatedStar;
    }
  }
  for (const StarSpot& s : stars_) {
    if (s.halo > 0.0 && std::hypot(x - s.x, y - s.y) <= s.halo + margin) return Place::Star;
  }
  for (const std::size_t p : sky_.hot_pixels()) {
    const double hx = static_cast<double>(p % width_), hy = static_cast<double>(p / width_);
    if (std::hypot(x - hx, y - hy) <= kHotPixelRadius + margin) return Place::HotPixel;
  }
  if (mover_distance(x, y) <= kMoverRadiusFwhm * fwhm_ + margin) return Place::Mover;
  return Place::Clear;
}

double FrameLayout::mover_distance(double x, double y) const noexcept {
  double nearest = std::numeric_limits<double>::infinity();
  for (const MoverTruth& m : movers_) {
    nearest = std::min(nearest, distance_to_streak(mover_path(m), x, y));
  }
  return nearest;
}

}  // namespace starsift::quality
