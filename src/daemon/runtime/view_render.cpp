// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/runtime/view_render.hpp"

#include "app/detection_marks.hpp"
#include "app/stretch.hpp"
#include "pipeline/error.hpp"

namespace starsift::daemon {

namespace {
constexpr int kValues = 65536;
}  // namespace

ViewRenderer::ViewRenderer()
    : table_(kValues), ramp_(kValues, 1, PixelFormat::Gray16), widened_(1, 1, PixelFormat::Gray16) {
  auto* ramp = ramp_.view().row_as<std::uint16_t>(0);
  for (int v = 0; v < kValues; ++v) ramp[v] = static_cast<std::uint16_t>(v);
}

void ViewRenderer::refit(ConstImageView frame) {
  app::AsinhStretch stretch;
  if (frame.format == PixelFormat::Gray16) {
    stretch = app::fit_asinh_stretch(frame);
  } else {
    // The fit reads GRAY16: the frame widened into a buffer kept for the next fit.
    if (widened_.width() != frame.width || widened_.height() != frame.height) {
      widened_ = app::HostImage(frame.width, frame.height, PixelFormat::Gray16);
    }
    const ImageView wide = widened_.view();
    for (int y = 0; y < frame.height; ++y) {
      const auto* in = frame.row_as<std::uint8_t>(y);
      auto* o = wide.row_as<std::uint16_t>(y);
      for (int x = 0; x < frame.width; ++x) o[x] = static_cast<std::uint16_t>(in[x] * 257);
    }
    stretch = app::fit_asinh_stretch(widened_.cview());
  }
  const ImageView table{reinterpret_cast<std::byte*>(table_.data()), kValues, 1, kValues,
                        PixelFormat::Gray8};
  app::apply_stretch(stretch, ramp_.cview(), table);
}

void ViewRenderer::render(ConstImageView frame, std::span<const DetectedObject> objects,
                          std::span<const Track> movers, std::int64_t now_us, ImageView out) {
  if (frame.format != PixelFormat::Gray8 && frame.format != PixelFormat::Gray16) {
    throw Error("live view: a " + std::string(to_string(frame.format)) + " frame",
                "GRAY8 or GRAY16 frames");
  }
  const bool changed = frame.width != width_ || frame.height != height_ || frame.format != format_;
  if (!fitted_ || changed || now_us - fitted_us_ >= kRefitUs) {
    refit(frame);
    fitted_ = true;
    fitted_us_ = now_us;
    width_ = frame.width;
    height_ = frame.height;
    format_ = frame.format;
  }
  const std::uint8_t* table = table_.data();
  for (int y = 0; y < frame.height; ++y) {
    auto* o = out.row_as<std::uint8_t>(y);
    if (frame.format == PixelFormat::Gray16) {
      const auto* in = frame.row_as<std::uint16_t>(y);
      for (int x = 0; x < frame.width; ++x) o[x] = table[in[x]];
    } else {
      const auto* in = frame.row_as<std::uint8_t>(y);
      for (int x = 0; x < frame.width; ++x) o[x] = table[in[x] * 257];
    }
  }
  app::draw_detection_marks(out, objects, movers);
}

}  // namespace starsift::daemon
