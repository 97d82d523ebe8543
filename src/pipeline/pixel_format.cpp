// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/pixel_format.hpp"

#include <array>
#include <cmath>

#include "pipeline/error.hpp"

namespace starsift {

namespace {
// Indexed by PixelFormat; the static_assert below keeps it in step with the enum.
constexpr std::array<FormatInfo, 7> kFormats{{
    {"GRAY8", 1, 1, 1, false},
    {"GRAY16_LE", 1, 1, 2, false},
    {"GRAY32F", 1, 1, 4, true},
    {"RGBA", 4, 3, 1, false},
    {"BGRA", 4, 3, 1, false},
    {"RGBx", 4, 3, 1, false},
    {"BGRx", 4, 3, 1, false},
}};
static_assert(static_cast<int>(PixelFormat::Bgrx) + 1 == kFormats.size());
}  // namespace

const FormatInfo& format_info(PixelFormat format) noexcept {
  return kFormats[static_cast<int>(format)];
}

std::string_view to_string(PixelFormat format) noexcept {
  return format_info(format).name;
}

std::string pixel_format_names() {
  std::string names;
  for (const auto& f : kFormats) {
    if (!names.empty()) names += ", ";
    names += f.name;
  }
  return names;
}

PixelFormat parse_pixel_format(std::string_view name) {
  for (std::size_t i = 0; i < kFormats.size(); ++i) {
    if (kFormats[i].name == name) return static_cast<PixelFormat>(i);
  }
  if (name == "GRAY16") return PixelFormat::Gray16;
  throw Error("unknown pixel format '" + shown_value(name) + "'", pixel_format_names());
}

int default_bit_depth(PixelFormat format) noexcept {
  return format_info(format).bytes_per_sample * 8;
}

void FrameShape::validate() const {
  if (width < 1 || height < 1) {
    throw Error("frame size " + std::to_string(width) + "x" + std::to_string(height) + " is empty",
                "width and height >= 1");
  }
  constexpr int kMaxSide = 1 << 16;
  if (width > kMaxSide || height > kMaxSide) {
    throw Error(
        "frame size " + std::to_string(width) + "x" + std::to_string(height) + " is too large",
        "width and height <= 65536");
  }
  if (significance.present() &&
      (!std::isfinite(significance.offset) || !std::isfinite(significance.gain))) {
    throw Error("significance scale (offset " + std::to_string(significance.offset) + ", gain " +
                    std::to_string(significance.gain) + ")",
                "a finite offset and a finite gain other than 0");
  }
  const int natural = default_bit_depth(format);
  if (format == PixelFormat::Gray16) {
    if (bit_depth < 1 || bit_depth > 16) {
      throw Error("bit depth " + std::to_string(bit_depth) + " for GRAY16_LE", "1..16");
    }
  } else if (bit_depth != natural) {
    throw Error("bit depth " + std::to_string(bit_depth) + " for " + std::string(to_string(format)),
                std::to_string(natural));
  }
}

}  // namespace starsift
