// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/npy_file.hpp"

#include <bit>
#include <fstream>

#include "pipeline/error.hpp"

namespace starsift::quality {

namespace {

static_assert(std::endian::native == std::endian::little,
              "the .npy files are written as little-endian straight from memory");

constexpr std::size_t kPreamble = 10;  // magic (6), version (2), header length (2)
constexpr std::size_t kAlign = 64;

void write_bytes(const std::filesystem::path& path, std::string_view descr, int width, int height,
                 const void* data, std::size_t bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("cannot write " + path.string());
  const std::string header = npy_header(descr, width, height);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  out.close();
  if (!out) throw Error("cannot write " + path.string());
}

}  // namespace

std::string npy_header(std::string_view descr, int width, int height) {
  std::string dict = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" +
                     std::to_string(height) + ", " + std::to_string(width) + "), }";
  // Spaces, then the newline that ends the header, up to the next multiple of 64 bytes.
  const std::size_t unpadded = kPreamble + dict.size() + 1;
  dict.append((kAlign - unpadded % kAlign) % kAlign, ' ');
  dict.push_back('\n');
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(dict.size() & 0xff));
  out.push_back(static_cast<char>((dict.size() >> 8) & 0xff));
  return out + dict;
}

void write_npy(const std::filesystem::path& path, const Plane& plane) {
  write_bytes(path, "<f4", plane.width(), plane.height(), plane.data(),
              plane.size() * sizeof(float));
}

void write_npy(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes, int width,
               int height) {
  if (bytes.size() != static_cast<std::size_t>(width) * static_cast<std::size_t>(height)) {
    throw Error("write_npy: " + std::to_string(bytes.size()) + " bytes for a " +
                std::to_string(width) + " x " + std::to_string(height) + " image");
  }
  write_bytes(path, "|u1", width, height, bytes.data(), bytes.size());
}

}  // namespace starsift::quality
