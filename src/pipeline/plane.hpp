// SPDX-License-Identifier: LGPL-2.1-or-later
// A float image on the host that owns its pixels: residuals, noise variances, matched-filter
// outputs (detection, the quality benchmark). Rows are packed (stride = width floats), so a
// plane is also a GRAY32F view. Interior: the rectangle of a frame a detector scans and a
// score looks at, a border left out.
#pragma once

#include <cstddef>
#include <vector>

#include "pipeline/image.hpp"

namespace starsift {

class Plane {
 public:
  Plane() = default;
  Plane(int width, int height, float value = 0.0f)
      : width_(width), height_(height), data_(static_cast<std::size_t>(width) * height, value) {}

  int width() const noexcept { return width_; }
  int height() const noexcept { return height_; }
  std::size_t size() const noexcept { return data_.size(); }

  float* data() noexcept { return data_.data(); }
  const float* data() const noexcept { return data_.data(); }
  float* row(int y) noexcept { return data_.data() + static_cast<std::ptrdiff_t>(y) * width_; }
  const float* row(int y) const noexcept {
    return data_.data() + static_cast<std::ptrdiff_t>(y) * width_;
  }
  float& at(int x, int y) noexcept { return row(y)[x]; }
  float at(int x, int y) const noexcept { return row(y)[x]; }

  void fill(float value) { data_.assign(data_.size(), value); }

  ImageView view() noexcept {
    return {reinterpret_cast<std::byte*>(data_.data()), width_, height_,
            static_cast<std::ptrdiff_t>(width_ * sizeof(float)), PixelFormat::Gray32F};
  }
  ConstImageView view() const noexcept {
    return {reinterpret_cast<const std::byte*>(data_.data()), width_, height_,
            static_cast<std::ptrdiff_t>(width_ * sizeof(float)), PixelFormat::Gray32F};
  }

 private:
  int width_ = 0;
  int height_ = 0;
  std::vector<float> data_;
};

// The pixels a detector scans and a score looks at: [border, width - border) x [border, height -
// border).
struct Interior {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // half-open

  static Interior of(int width, int height, int border) {
    return {border, border, width - border, height - border};
  }
  bool contains(double x, double y) const noexcept {
    return x >= x0 - 0.5 && x < x1 - 0.5 && y >= y0 - 0.5 && y < y1 - 0.5;
  }
  long long pixels() const noexcept {
    return x1 > x0 && y1 > y0 ? static_cast<long long>(x1 - x0) * (y1 - y0) : 0;
  }
};

}  // namespace starsift
