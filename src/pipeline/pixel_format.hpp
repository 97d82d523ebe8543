// SPDX-License-Identifier: LGPL-2.1-or-later
// Pixel formats starsift processes, and what each one is made of.
#pragma once

#include <string>
#include <string_view>

namespace starsift {

enum class PixelFormat {
  Gray8,    // 8-bit luminance
  Gray16,   // 16-bit little-endian luminance; FrameShape::bit_depth says how many bits are real
  Gray32F,  // 32-bit float luminance (internal: intermediates and float pipelines)
  Rgba,     // 4 x 8 bit, byte 3 is alpha
  Bgra,     // 4 x 8 bit, byte 3 is alpha
  Rgbx,     // 4 x 8 bit, byte 3 is padding
  Bgrx,     // 4 x 8 bit, byte 3 is padding
};

struct FormatInfo {
  std::string_view name;  // as GStreamer spells it (GRAY16 means GRAY16_LE)
  int channels;           // samples per pixel in memory
  int color_channels;     // samples a filter touches (alpha/padding excluded)
  int bytes_per_sample;
  bool is_float;
};

const FormatInfo& format_info(PixelFormat format) noexcept;
inline int bytes_per_pixel(PixelFormat f) noexcept {
  return format_info(f).channels * format_info(f).bytes_per_sample;
}
std::string_view to_string(PixelFormat format) noexcept;

// Parses a GStreamer format name ("GRAY8", "GRAY16_LE", "GRAY32F", "RGBA", ...).
// Throws Error naming the value and the accepted list.
PixelFormat parse_pixel_format(std::string_view name);

// The comma-separated list of every accepted name, for messages.
std::string pixel_format_names();

// What a significance image's samples mean: significance = (sample - offset) / gain, in sigmas
// of the noise. Whitening writes such frames (output: significance, or snr: offset 0, gain 1),
// so detection can threshold whitening's own per-pixel sigma; gain 0: the samples are plain
// intensities.
struct SignificanceScale {
  double offset = 0.0;
  double gain = 0.0;
  bool present() const noexcept { return gain != 0.0; }
  bool operator==(const SignificanceScale&) const = default;
};

// Shape of the frames a stage is configured for.
struct FrameShape {
  int width = 0;
  int height = 0;
  PixelFormat format = PixelFormat::Gray8;
  int bit_depth = 8;  // real bits per sample: 8 for 8-bit formats, 1..16 for Gray16, 32 for float
  SignificanceScale significance{};  // set when the samples are a significance image

  // Throws Error when the size or bit depth is impossible for the format.
  void validate() const;
  bool operator==(const FrameShape&) const = default;
};

// The natural bit depth of a format (16 for Gray16).
int default_bit_depth(PixelFormat format) noexcept;

}  // namespace starsift
