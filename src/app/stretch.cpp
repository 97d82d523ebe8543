// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/stretch.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "pipeline/error.hpp"

namespace starsift::app {

namespace {

// Percentiles the fit reads from the histogram.
constexpr double kBlackQuantile = 0.0005;
constexpr double kMedianQuantile = 0.5;
constexpr double kWhiteQuantile = 0.9999;
// The softening is this fraction of (median - black): the sky sits in the linear part of
// asinh, stars in the logarithmic part.
constexpr double kSofteningFraction = 1.0;

void check_gray16(ConstImageView v, const char* what) {
  if (v.format != PixelFormat::Gray16) {
    throw Error(std::string("stretch: ") + what + " is " + std::string(to_string(v.format)),
                "GRAY16");
  }
}

}  // namespace

AsinhStretch fit_asinh_stretch(ConstImageView frame) {
  check_gray16(frame, "input");
  std::vector<std::uint64_t> histogram(65536, 0);
  for (int y = 0; y < frame.height; ++y) {
    const auto* row = frame.row_as<std::uint16_t>(y);
    for (int x = 0; x < frame.width; ++x) ++histogram[row[x]];
  }
  const double total = static_cast<double>(frame.width) * frame.height;
  auto quantile = [&](double q) {
    const auto target = static_cast<std::uint64_t>(q * total);
    std::uint64_t seen = 0;
    for (std::size_t v = 0; v < histogram.size(); ++v) {
      seen += histogram[v];
      if (seen > target) return static_cast<double>(v);
    }
    return 65535.0;
  };
  AsinhStretch s;
  s.black = quantile(kBlackQuantile);
  const double median = quantile(kMedianQuantile);
  s.white = std::max(quantile(kWhiteQuantile), median + 1.0);
  s.softening = std::max(1.0, kSofteningFraction * (median - s.black));
  return s;
}

void apply_stretch(const AsinhStretch& s, ConstImageView in, ImageView out) {
  check_gray16(in, "input");
  if (out.format != PixelFormat::Gray8 || out.width != in.width || out.height != in.height) {
    throw Error("stretch: output must be GRAY8 of the input's size", "GRAY8, same size");
  }
  // One table for every 16-bit value: 64 K asinh calls instead of one per pixel.
  std::vector<std::uint8_t> table(65536);
  const double scale = 1.0 / std::asinh((s.white - s.black) / s.softening);
  for (std::size_t v = 0; v < table.size(); ++v) {
    const double t = std::asinh((static_cast<double>(v) - s.black) / s.softening) * scale;
    table[v] = static_cast<std::uint8_t>(std::lround(255.0 * std::clamp(t, 0.0, 1.0)));
  }
  for (int y = 0; y < in.height; ++y) {
    const auto* src = in.row_as<std::uint16_t>(y);
    auto* dst = out.row_as<std::uint8_t>(y);
    for (int x = 0; x < in.width; ++x) dst[x] = table[src[x]];
  }
}

}  // namespace starsift::app
