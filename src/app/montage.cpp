// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/montage.hpp"

#include <algorithm>
#include <cstdint>

#include "app/label.hpp"
#include "app/stretch.hpp"
#include "pipeline/error.hpp"

namespace starsift::app {

namespace {

constexpr int kGap = 8;  // pixels between the halves
constexpr std::uint8_t kGapGrey = 128;
constexpr int kLabelMargin = 8;           // pixels from the panel's corner
constexpr int kPixelsPerFontPixel = 340;  // one font pixel per this many pixels of width

ImageView sub_view(ImageView v, int x, int width) {
  return {v.data + static_cast<std::ptrdiff_t>(x) * bytes_per_pixel(v.format), width, v.height,
          v.stride, v.format};
}

}  // namespace

HostImage make_before_after(ConstImageView before, ConstImageView after,
                            std::string_view before_label, std::string_view after_label) {
  if (before.width != after.width || before.height != after.height) {
    throw Error("before/after picture: the two frames differ in size", "frames of one size");
  }
  const int w = before.width;
  HostImage picture(2 * w + kGap, before.height, PixelFormat::Gray8);
  ImageView all = picture.view();
  for (int y = 0; y < all.height; ++y) {
    std::fill_n(all.row_as<std::uint8_t>(y) + w, kGap, kGapGrey);
  }

  const AsinhStretch stretch = fit_asinh_stretch(after);
  ImageView left = sub_view(all, 0, w);
  ImageView right = sub_view(all, w + kGap, w);
  apply_stretch(stretch, before, left);
  apply_stretch(stretch, after, right);

  const int scale = std::clamp(w / kPixelsPerFontPixel, 1, 4);
  draw_label(left, kLabelMargin, kLabelMargin, before_label, scale);
  draw_label(right, kLabelMargin, kLabelMargin, after_label, scale);
  return picture;
}

}  // namespace starsift::app
