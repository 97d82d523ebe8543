// SPDX-License-Identifier: LGPL-2.1-or-later
#include "plugins/fits/fits_image.hpp"

#include <fitsio.h>
#include <glob.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <ctime>

#include "pipeline/error.hpp"

namespace starsift::fits {

namespace fs = std::filesystem;

namespace {

fitsfile* as_fits(void* p) {
  return static_cast<fitsfile*>(p);
}

std::string shown_path(const fs::path& path) {
  return "'" + shown_value(path.string(), kMaxShownPathBytes) + "'";
}

std::string cfitsio_text(int status) {
  char text[FLEN_STATUS] = {};
  fits_get_errstatus(status, text);
  return text;
}

}  // namespace

std::vector<fs::path> files_matching(const std::string& pattern) {
  glob_t found{};
  const int result = glob(pattern.c_str(), GLOB_ERR, nullptr, &found);
  std::vector<fs::path> files;
  for (std::size_t i = 0; result == 0 && i < found.gl_pathc; ++i) {
    std::error_code ec;
    if (fs::is_regular_file(found.gl_pathv[i], ec)) files.emplace_back(found.gl_pathv[i]);
  }
  globfree(&found);
  if (files.empty()) {
    throw Error("no FITS file matches " + shown_path(pattern),
                "a file, or a pattern such as /data/night/*.fits naming at least one file");
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::optional<std::int64_t> parse_fits_utc_us(const std::string& text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, status = 0;
  double second = 0.0;
  // Needs the time too: a date alone says nothing about a frame's instant.
  if (text.find('T') == std::string::npos) return std::nullopt;
  if (fits_str2time(const_cast<char*>(text.c_str()), &year, &month, &day, &hour, &minute, &second,
                    &status) != 0) {
    return std::nullopt;
  }
  std::tm t{};
  t.tm_year = year - 1900;
  t.tm_mon = month - 1;
  t.tm_mday = day;
  t.tm_hour = hour;
  t.tm_min = minute;
  t.tm_sec = 0;
  const std::time_t whole = timegm(&t);
  return static_cast<std::int64_t>(whole) * 1'000'000 + std::llround(second * 1e6);
}

FitsImageFile::FitsImageFile(const fs::path& path) : path_(path) {
  fitsfile* f = nullptr;
  int status = 0;
  // The file name as it is: cfitsio's extended syntax ("[1]", "+2") is not wanted here.
  if (fits_open_diskfile(&f, path.c_str(), READONLY, &status) != 0) {
    fail(status, "cannot be opened as FITS");
  }
  fits_ = f;
  try {
    read_header();
  } catch (...) {
    fits_close_file(f, &status);
    fits_ = nullptr;
    throw;
  }
}

void FitsImageFile::read_header() {
  fitsfile* f = as_fits(fits_);
  const fs::path& path = path_;
  int status = 0;
  int bitpix = 0, axes_count = 0;
  long axes[3] = {0, 0, 0};
  if (fits_get_img_param(f, 3, &bitpix, &axes_count, axes, &status) != 0) {
    fail(status, "has no readable image header");
  }
  if (axes_count != 2 && !(axes_count == 3 && axes[2] == 1)) {
    throw Error(
        "FITS file " + shown_path(path) + ": an image of " + std::to_string(axes_count) + " axes",
        "a 2-D image in the primary HDU");
  }
  if (axes[0] < 1 || axes[1] < 1 || axes[0] > 65536 || axes[1] > 65536) {
    throw Error("FITS file " + shown_path(path) + ": an image of " + std::to_string(axes[0]) + "x" +
                    std::to_string(axes[1]),
                "1..65536 pixels a side");
  }
  int equivalent = 0;
  fits_get_img_equivtype(f, &equivalent, &status);
  if (equivalent == BYTE_IMG) {
    header_.bits = 8;
  } else if (equivalent == USHORT_IMG) {
    header_.bits = 16;
  } else {
    throw Error("FITS file " + shown_path(path) + ": BITPIX " + std::to_string(bitpix) +
                    " (equivalent type " + std::to_string(equivalent) + ")",
                "BITPIX 8, or BITPIX 16 with BZERO 32768 (unsigned 16 bits), as cameras write");
  }
  header_.width = static_cast<int>(axes[0]);
  header_.height = static_cast<int>(axes[1]);

  char text[FLEN_VALUE] = {};
  int key_status = 0;
  if (fits_read_key_str(f, "DATE-OBS", text, nullptr, &key_status) == 0) {
    header_.utc_us = parse_fits_utc_us(text);
  }
  key_status = 0;
  double exptime = 0.0;
  if (fits_read_key_dbl(f, "EXPTIME", &exptime, nullptr, &key_status) == 0) {
    header_.exposure_s = exptime;
  }
}

FitsImageFile::~FitsImageFile() {
  int status = 0;
  if (fits_ != nullptr) fits_close_file(as_fits(fits_), &status);
}

void FitsImageFile::read_pixels(std::byte* data, std::ptrdiff_t stride) const {
  const int type = header_.bits == 8 ? TBYTE : TUSHORT;
  for (int y = 0; y < header_.height; ++y) {
    std::byte* row = data + static_cast<std::ptrdiff_t>(y) * stride;
    LONGLONG first[2] = {1, static_cast<LONGLONG>(y) + 1};
    int status = 0;
    int any_null = 0;
    if (fits_read_pixll(as_fits(fits_), type, first, header_.width, nullptr, row, &any_null,
                        &status) != 0) {
      fail(status, "row " + std::to_string(y + 1) + " cannot be read");
    }
    if constexpr (std::endian::native == std::endian::big) {
      if (type == TUSHORT) {
        auto* v = reinterpret_cast<std::uint16_t*>(row);
        for (int x = 0; x < header_.width; ++x)
          v[x] = static_cast<std::uint16_t>((v[x] >> 8) | (v[x] << 8));
      }
    }
  }
}

void FitsImageFile::fail(int status, const std::string& what) const {
  throw Error("FITS file " + shown_path(path_) + " " + what + ": " + cfitsio_text(status));
}

}  // namespace starsift::fits
