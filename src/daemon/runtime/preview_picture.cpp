// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/runtime/preview_picture.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <system_error>
#include <vector>

#include "app/detection_marks.hpp"
#include "app/label.hpp"
#include "app/png_writer.hpp"
#include "app/stretch.hpp"
#include "pipeline/error.hpp"

namespace starsift::daemon {

namespace {

constexpr int kGap = 8;  // pixels between panels
constexpr std::uint8_t kGapGrey = 128;
constexpr int kLabelMargin = 8;
constexpr int kPixelsPerFontPixel = 340;

ImageView panel(ImageView all, int x, int width, int height) {
  return {all.data + static_cast<std::ptrdiff_t>(x), width, height, all.stride, PixelFormat::Gray8};
}

// A GRAY16 copy of a GRAY8 frame (each value times 257), so one stretch serves both formats.
app::HostImage widen(ConstImageView frame) {
  app::HostImage wide(frame.width, frame.height, PixelFormat::Gray16);
  const ImageView out = wide.view();
  for (int y = 0; y < frame.height; ++y) {
    const auto* in = frame.row_as<std::uint8_t>(y);
    auto* o = out.row_as<std::uint16_t>(y);
    for (int x = 0; x < frame.width; ++x) o[x] = static_cast<std::uint16_t>(in[x] * 257);
  }
  return wide;
}

void stretch_into(ConstImageView frame, ImageView out) {
  if (frame.format == PixelFormat::Gray8) {
    const app::HostImage wide = widen(frame);
    app::apply_stretch(app::fit_asinh_stretch(wide.cview()), wide.cview(), out);
    return;
  }
  if (frame.format != PixelFormat::Gray16) {
    throw Error("preview: a " + std::string(to_string(frame.format)) + " frame",
                "GRAY8 or GRAY16 frames");
  }
  app::apply_stretch(app::fit_asinh_stretch(frame), frame, out);
}

}  // namespace

app::HostImage make_preview(ConstImageView raw, ConstImageView whitened,
                            std::span<const DetectedObject> objects,
                            std::span<const Track> movers) {
  const int raw_w = raw.width > 0 ? raw.width : whitened.width;
  const int raw_h = raw.width > 0 ? raw.height : whitened.height;
  const int w = whitened.width;
  const int h = std::max(raw_h, whitened.height);
  app::HostImage picture(raw_w + 2 * w + 2 * kGap, h, PixelFormat::Gray8);
  ImageView all = picture.view();
  for (int y = 0; y < h; ++y) std::fill_n(all.row_as<std::uint8_t>(y), all.width, kGapGrey);

  ImageView left = panel(all, 0, raw_w, raw_h);
  ImageView middle = panel(all, raw_w + kGap, w, whitened.height);
  ImageView right = panel(all, raw_w + w + 2 * kGap, w, whitened.height);
  if (raw.width > 0) stretch_into(raw, left);
  stretch_into(whitened, middle);
  for (int y = 0; y < whitened.height; ++y) {
    std::copy_n(middle.row_as<std::uint8_t>(y), w, right.row_as<std::uint8_t>(y));
  }
  app::draw_detection_marks(right, objects, movers);

  const int scale = std::clamp(w / kPixelsPerFontPixel, 1, 4);
  app::draw_label(left, kLabelMargin, kLabelMargin, raw.width > 0 ? "RAW" : "RAW (NONE YET)",
                  scale);
  app::draw_label(middle, kLabelMargin, kLabelMargin, "WHITENED", scale);
  app::draw_label(
      right, kLabelMargin, kLabelMargin,
      "DETECTIONS " + std::to_string(objects.size()) + " / MOVERS " + std::to_string(movers.size()),
      scale);
  return picture;
}

void write_preview_png(const std::filesystem::path& path, const app::HostImage& picture) {
  std::filesystem::path part = path;
  part += ".part";
  app::write_png_gray8(part, picture.cview());
  std::error_code ec;
  std::filesystem::rename(part, path, ec);
  if (ec) {
    std::filesystem::remove(part, ec);
    throw Error("preview " + path.string() + ": cannot rename " + part.string() +
                " over it: " + ec.message());
  }
}

}  // namespace starsift::daemon
