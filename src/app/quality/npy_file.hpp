// SPDX-License-Identifier: LGPL-2.1-or-later
// NumPy's .npy format (version 1.0) for 2-D images, so that outside tools (bench/peers/) read
// what the harness computes with numpy.load(): a 10-byte preamble (magic, version, header
// length), a Python-literal header padded with spaces to a multiple of 64 bytes and ending in a
// newline, then the pixels in C order (row after row), little-endian.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/plane.hpp"

namespace starsift::quality {

// Preamble and header for an array of `height` rows of `width` elements of type `descr`
// (NumPy's type string: "<f4", "|u1").
std::string npy_header(std::string_view descr, int width, int height);

// `plane` as float32 ("<f4"), shape (height, width). Throws Error when the file cannot be
// written.
void write_npy(const std::filesystem::path& path, const Plane& plane);

// `bytes` (width * height, rows packed) as uint8 ("|u1"), shape (height, width).
void write_npy(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes, int width,
               int height);

}  // namespace starsift::quality
