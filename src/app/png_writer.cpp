// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/png_writer.hpp"

#include <png.h>

#include <string>

#include "pipeline/error.hpp"

namespace starsift::app {

namespace {

void check_format(const std::filesystem::path& path, ConstImageView image, PixelFormat format) {
  if (image.format != format) {
    throw Error(
        "PNG writer: " + path.string() + ": image is " + std::string(to_string(image.format)),
        std::string(to_string(format)));
  }
}

// `format`: PNG_FORMAT_GRAY (8-bit) or PNG_FORMAT_LINEAR_Y (16-bit, written as it is);
// libpng takes the row stride in samples.
void write_png(const std::filesystem::path& path, ConstImageView image, png_uint_32 format) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  png.format = format;
  const auto sample_bytes = static_cast<std::ptrdiff_t>(format_info(image.format).bytes_per_sample);
  const int ok =
      png_image_write_to_file(&png, path.c_str(), /*convert_to_8bit=*/0, image.data,
                              static_cast<png_int_32>(image.stride / sample_bytes), nullptr);
  if (!ok) {
    const std::string reason = png.message[0] != '\0' ? png.message : "unknown libpng error";
    png_image_free(&png);
    throw Error("cannot write " + path.string() + ": " + reason);
  }
}

}  // namespace

void write_png_gray8(const std::filesystem::path& path, ConstImageView image) {
  check_format(path, image, PixelFormat::Gray8);
  write_png(path, image, PNG_FORMAT_GRAY);
}

void write_png_gray16(const std::filesystem::path& path, ConstImageView image) {
  check_format(path, image, PixelFormat::Gray16);
  if (image.stride % 2 != 0) {
    throw Error("PNG writer: " + path.string() + ": odd row stride " +
                    std::to_string(image.stride) + " for 16-bit samples",
                "an even stride");
  }
  write_png(path, image, PNG_FORMAT_LINEAR_Y);
}

}  // namespace starsift::app
