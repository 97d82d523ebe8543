// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/quality_pictures.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "app/host_image.hpp"
#include "app/label.hpp"
#include "app/png_writer.hpp"
#include "app/quality/methods.hpp"
#include "app/stretch.hpp"

namespace starsift::app {

namespace {

constexpr double kResidualSigmas = 5.0;  // the residual panels span -5..+5 sigma
constexpr double kCircleRadius = 8.0;    // px of the frame
constexpr int kGap = 8;
constexpr std::uint8_t kGapGrey = 128;
constexpr int kZoomSide = 128;  // px of the frame around the zoomed mover
constexpr int kZoomScale = 3;
constexpr int kLabelMargin = 6;

using Panel = std::vector<std::uint8_t>;  // side x side GRAY8

Panel input_panel(const quality::PictureFrame& p, int side) {
  HostImage out(side, side, PixelFormat::Gray8);
  const ConstImageView in{reinterpret_cast<const std::byte*>(p.input.data()), side, side,
                          static_cast<std::ptrdiff_t>(side * sizeof(std::uint16_t)),
                          PixelFormat::Gray16};
  apply_stretch(fit_asinh_stretch(in), in, out.view());
  const ConstImageView v = out.cview();
  Panel panel(static_cast<std::size_t>(side) * side);
  for (int y = 0; y < side; ++y) {
    std::copy_n(v.row_as<std::uint8_t>(y), side, panel.data() + static_cast<std::size_t>(y) * side);
  }
  return panel;
}

Panel residual_panel(const Plane& residual, double sigma) {
  Panel panel(residual.size());
  const double scale = 127.5 / (kResidualSigmas * sigma);
  for (std::size_t i = 0; i < residual.size(); ++i) {
    panel[i] = static_cast<std::uint8_t>(
        std::clamp(std::lround(127.5 + scale * residual.data()[i]), 0L, 255L));
  }
  return panel;
}

// A one-pixel ring, white with a black outline so it shows on any background.
void draw_circle(Panel& panel, int side, double cx, double cy, double radius) {
  const int steps = static_cast<int>(std::ceil(2.0 * 3.141592653589793 * (radius + 1.0) * 2.0));
  for (int s = 0; s < steps; ++s) {
    const double a = 2.0 * 3.141592653589793 * s / steps;
    for (const auto& [r, value] : {std::pair{radius + 1.0, 0}, std::pair{radius, 255}}) {
      const long x = std::lround(cx + r * std::cos(a));
      const long y = std::lround(cy + r * std::sin(a));
      if (x >= 0 && x < side && y >= 0 && y < side) {
        panel[static_cast<std::size_t>(y) * side + x] = static_cast<std::uint8_t>(value);
      }
    }
  }
}

// Panels of `side` x `side` side by side with grey gaps, each labelled.
HostImage montage(const std::vector<Panel>& panels, int side,
                  const std::vector<std::string>& labels) {
  const int n = static_cast<int>(panels.size());
  HostImage image(n * side + (n - 1) * kGap, side, PixelFormat::Gray8);
  ImageView v = image.view();
  for (int y = 0; y < side; ++y) {
    std::uint8_t* row = v.row_as<std::uint8_t>(y);
    std::fill_n(row, v.width, kGapGrey);
    for (int i = 0; i < n; ++i) {
      std::copy_n(panels[static_cast<std::size_t>(i)].data() + static_cast<std::size_t>(y) * side,
                  side, row + i * (side + kGap));
    }
  }
  const int scale = std::clamp(side / 256, 1, 3);
  for (int i = 0; i < n; ++i) {
    const ImageView panel{v.data + static_cast<std::ptrdiff_t>(i) * (side + kGap), side, side,
                          v.stride, PixelFormat::Gray8};
    draw_label(panel, kLabelMargin, kLabelMargin, labels[static_cast<std::size_t>(i)], scale);
  }
  return image;
}

// The crop of `panel` at (x0, y0), kZoomSide square, each pixel kZoomScale times.
Panel zoom(const Panel& panel, int side, int x0, int y0) {
  const int out = kZoomSide * kZoomScale;
  Panel z(static_cast<std::size_t>(out) * out);
  for (int y = 0; y < out; ++y) {
    for (int x = 0; x < out; ++x) {
      z[static_cast<std::size_t>(y) * out + x] =
          panel[static_cast<std::size_t>(y0 + y / kZoomScale) * side + x0 + x / kZoomScale];
    }
  }
  return z;
}

// The mover nearest the frame's centre: the zoom's subject.
const MoverTruth* central_mover(const std::vector<MoverTruth>& movers, int side) {
  const MoverTruth* best = nullptr;
  double best_d = INFINITY;
  for (const MoverTruth& m : movers) {
    const double d = std::hypot(m.x - 0.5 * side, m.y - 0.5 * side);
    if (d < best_d) {
      best = &m;
      best_d = d;
    }
  }
  return best;
}

}  // namespace

std::vector<std::string> write_quality_pictures(const std::vector<quality::PictureFrame>& pictures,
                                                const std::vector<quality::SceneSpec>& scenes,
                                                const std::filesystem::path& dir) {
  std::vector<std::string> written;
  for (std::size_t s = 0; s < pictures.size() && s < scenes.size(); ++s) {
    const quality::PictureFrame& p = pictures[s];
    const int side = static_cast<int>(std::lround(std::sqrt(static_cast<double>(p.input.size()))));
    std::vector<Panel> panels{input_panel(p, side)};
    char cell[64];
    std::snprintf(cell, sizeof cell, " snr %g %g px/frame", p.snr, p.speed);
    std::vector<std::string> labels{scenes[s].name + " frame " + std::to_string(p.frame) + cell};
    for (std::size_t m = 0; m < p.residuals.size(); ++m) {
      panels.push_back(residual_panel(p.residuals[m], p.sigma_adu));
      labels.emplace_back(p.names[m]);
    }
    if (labels.size() > 1) labels[1] += " (-5..5 sigma)";

    // The zoom is cut before the circles are drawn, which are then drawn at its scale.
    const MoverTruth* subject = central_mover(p.movers, side);
    const int zx = std::clamp(static_cast<int>(subject ? subject->x : 0.5 * side) - kZoomSide / 2,
                              0, side - kZoomSide);
    const int zy = std::clamp(static_cast<int>(subject ? subject->y : 0.5 * side) - kZoomSide / 2,
                              0, side - kZoomSide);
    std::vector<Panel> zoomed;
    for (const Panel& panel : panels) zoomed.push_back(zoom(panel, side, zx, zy));
    for (const MoverTruth& m : p.movers) {
      for (Panel& panel : panels) draw_circle(panel, side, m.x, m.y, kCircleRadius);
      for (Panel& panel : zoomed) {
        draw_circle(panel, kZoomSide * kZoomScale, (m.x - zx + 0.5) * kZoomScale - 0.5,
                    (m.y - zy + 0.5) * kZoomScale - 0.5, kCircleRadius * kZoomScale);
      }
    }
    const std::string frame_name = "frame-" + scenes[s].name + ".png";
    const std::string zoom_name = "zoom-" + scenes[s].name + ".png";
    write_png_gray8(dir / frame_name, montage(panels, side, labels).cview());
    write_png_gray8(dir / zoom_name, montage(zoomed, kZoomSide * kZoomScale, labels).cview());
    written.push_back(frame_name);
    written.push_back(zoom_name);
  }
  return written;
}

}  // namespace starsift::app
