// SPDX-License-Identifier: LGPL-2.1-or-later
// What stays put on the sensor from frame to frame: the sky background with its linear
// gradient, and the hot pixels at positions fixed by the seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pipeline/sky/sky_params.hpp"

namespace starsift::sky {

class SkyBackground {
 public:
  explicit SkyBackground(const SkyParams& params);

  // The sky in e-/px at (x, y), clamped to the frame (hot pixels not included).
  double sky_at(double x, double y) const noexcept;

  // Adds the sky of row y to `row` (width floats).
  void add_sky(int y, float* row) const noexcept;
  // Adds the hot pixels of row y to `row` (width floats).
  void add_hot_pixels(int y, float* row) const noexcept;

  // Linear indices (y * width + x) of the hot pixels, ascending.
  const std::vector<std::size_t>& hot_pixels() const noexcept { return hot_; }

 private:
  int width_;
  int height_;
  // sky(x, y) = sky0_ + slope_x_ * x + slope_y_ * y
  double sky0_ = 0.0;
  double slope_x_ = 0.0;
  double slope_y_ = 0.0;
  float hot_level_ = 0.0f;
  std::vector<std::size_t> hot_;
  std::vector<std::size_t> hot_row_start_;  // hot_[hot_row_start_[y] .. hot_row_start_[y + 1])
};

}  // namespace starsift::sky
