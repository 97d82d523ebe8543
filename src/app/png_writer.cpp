#include "app/png_writer.hpp"

#include <png.h>

#include <string>

#include "pipeline/error.hpp"

namespace starsift::app {

void write_png_gray8(const std::filesystem::path& path, ConstImageView image) {
  if (image.format != PixelFormat::Gray8) {
    throw Error(
        "PNG writer: " + path.string() + ": image is " + std::string(to_string(image.format)),
        "GRAY8");
  }
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(image.width);
  png.height = static_cast<png_uint_32>(image.height);
  png.format = PNG_FORMAT_GRAY;
  // For 8-bit samples libpng's row stride (in components) is the byte stride.
  const int ok = png_image_write_to_file(&png, path.c_str(), /*convert_to_8bit=*/0, image.data,
                                         static_cast<png_int_32>(image.stride), nullptr);
  if (!ok) {
    const std::string reason = png.message[0] != '\0' ? png.message : "unknown libpng error";
    png_image_free(&png);
    throw Error("cannot write " + path.string() + ": " + reason);
  }
}

}  // namespace starsift::app
