// Writes 8-bit greyscale PNG files through libpng.
#pragma once

#include <filesystem>

#include "pipeline/image.hpp"

namespace starsift::app {

// Writes a GRAY8 image to `path` (any stride). Throws Error naming the file and the reason.
void write_png_gray8(const std::filesystem::path& path, ConstImageView image);

}  // namespace starsift::app
