// SPDX-License-Identifier: LGPL-2.1-or-later
// Writes greyscale PNG files (8- and 16-bit) through libpng.
#pragma once

#include <filesystem>

#include "pipeline/image.hpp"

namespace starsift::app {

// Writes a GRAY8 image to `path` (any stride). Throws Error naming the file and the reason.
void write_png_gray8(const std::filesystem::path& path, ConstImageView image);

// Writes a GRAY16 image to `path` as a 16-bit greyscale PNG holding the samples exactly (any
// stride; the stride must be a whole number of samples). Throws Error like write_png_gray8.
void write_png_gray16(const std::filesystem::path& path, ConstImageView image);

}  // namespace starsift::app
