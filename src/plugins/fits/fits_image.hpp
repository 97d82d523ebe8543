// SPDX-License-Identifier: LGPL-2.1-or-later
// Reading FITS frames (cfitsio) for siftfitssrc: the files a pattern names, and one image's
// header and pixels. No GStreamer here.
//
// Rows are read in file order, FITS row 1 into the frame's top row, as starsiftd writes them
// (daemon/outputs/fits_writer.cpp), so a frame written and read back is the same frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace starsift::fits {

// The files `pattern` names, sorted by name: a glob(7) pattern ("night/*.fits"), or one file.
// Throws starsift::Error when nothing matches.
std::vector<std::filesystem::path> files_matching(const std::string& pattern);

// "2026-11-28T01:02:03.456789" (UTC; FITS DATE-OBS, fractional seconds optional) as
// microseconds since the Unix epoch; nullopt when it is not such a date.
std::optional<std::int64_t> parse_fits_utc_us(const std::string& text);

struct FitsImageHeader {
  int width = 0;
  int height = 0;
  int bits = 0;                        // 8 (GRAY8) or 16 (GRAY16_LE)
  std::optional<std::int64_t> utc_us;  // DATE-OBS
  std::optional<double> exposure_s;    // EXPTIME
  bool operator==(const FitsImageHeader&) const = default;
};

// One FITS file's primary image, open until destroyed. The constructor reads the header and
// throws starsift::Error naming the file and what is wrong (not FITS, no 2-D image, a BITPIX
// other than 8 or 16 unsigned).
class FitsImageFile {
 public:
  explicit FitsImageFile(const std::filesystem::path& path);
  ~FitsImageFile();
  FitsImageFile(const FitsImageFile&) = delete;
  FitsImageFile& operator=(const FitsImageFile&) = delete;

  const FitsImageHeader& header() const noexcept { return header_; }
  // The pixels into rows of `stride` bytes at `data` (16 bits: little-endian, as GRAY16_LE).
  // Throws starsift::Error on a short or corrupt file.
  void read_pixels(std::byte* data, std::ptrdiff_t stride) const;

 private:
  void read_header();
  [[noreturn]] void fail(int status, const std::string& what) const;
  std::filesystem::path path_;
  void* fits_ = nullptr;  // fitsfile*: cfitsio stays out of this header
  FitsImageHeader header_;
};

}  // namespace starsift::fits
