// SPDX-License-Identifier: LGPL-2.1-or-later
// Reads a FITS file back with cfitsio for the tests: keys, HISTORY cards and pixels.
#pragma once

#include <fitsio.h>

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace starsift::test {

class FitsReader {
 public:
  explicit FitsReader(const std::filesystem::path& path) {
    int status = 0;
    fits_open_diskfile(&f_, path.c_str(), READONLY, &status);
    check(status, "open " + path.string());
  }
  ~FitsReader() {
    int ignored = 0;
    if (f_ != nullptr) fits_close_file(f_, &ignored);
  }
  FitsReader(const FitsReader&) = delete;
  FitsReader& operator=(const FitsReader&) = delete;

  bool has(const char* key) const {
    char card[FLEN_CARD];
    int status = 0;
    fits_read_card(f_, key, card, &status);
    return status == 0;
  }
  std::string text(const char* key) const {  // long strings (CONTINUE) included
    char* value = nullptr;
    int status = 0;
    fits_read_key_longstr(f_, key, &value, nullptr, &status);
    check(status, std::string("read ") + key);
    std::string out = value;
    fits_free_memory(value, &status);
    return out;
  }
  long long integer(const char* key) const {
    LONGLONG value = 0;
    int status = 0;
    fits_read_key_lnglng(f_, key, &value, nullptr, &status);
    check(status, std::string("read ") + key);
    return value;
  }
  double number(const char* key) const {
    double value = 0;
    int status = 0;
    fits_read_key_dbl(f_, key, &value, nullptr, &status);
    check(status, std::string("read ") + key);
    return value;
  }
  bool logical(const char* key) const {
    int value = 0;
    int status = 0;
    fits_read_key_log(f_, key, &value, nullptr, &status);
    check(status, std::string("read ") + key);
    return value != 0;
  }
  // cfitsio's status when reading `key` as a number (VALUE_UNDEFINED for a key without value).
  int number_status(const char* key) const {
    double value = 0;
    int status = 0;
    fits_read_key_dbl(f_, key, &value, nullptr, &status);
    fits_clear_errmsg();
    return status;
  }
  // The text of each HISTORY card, in order.
  std::vector<std::string> history() const {
    int count = 0, more = 0, status = 0;
    fits_get_hdrspace(f_, &count, &more, &status);
    std::vector<std::string> cards;
    for (int i = 1; i <= count; ++i) {
      char card[FLEN_CARD];
      fits_read_record(f_, i, card, &status);
      const std::string text = card;
      if (text.rfind("HISTORY ", 0) == 0) {
        std::string rest = text.substr(8);
        while (!rest.empty() && rest.back() == ' ') rest.pop_back();
        cards.push_back(rest);
      }
    }
    check(status, "read HISTORY");
    return cards;
  }
  int bitpix() const {
    int value = 0, status = 0;
    fits_get_img_type(f_, &value, &status);
    check(status, "read BITPIX");
    return value;
  }
  int equivalent_type() const {  // USHORT_IMG for BITPIX 16 with BZERO 32768
    int value = 0, status = 0;
    fits_get_img_equivtype(f_, &value, &status);
    check(status, "read the type");
    return value;
  }
  std::vector<long> axes() const {
    int naxis = 0, status = 0;
    fits_get_img_dim(f_, &naxis, &status);
    std::vector<long> n(static_cast<std::size_t>(naxis));
    fits_get_img_size(f_, naxis, n.data(), &status);
    check(status, "read NAXISn");
    return n;
  }
  // Every pixel, row 1 first, as `data_type` (TBYTE, TUSHORT, TFLOAT) in T.
  template <class T>
  std::vector<T> pixels(int data_type) const {
    const auto n = axes();
    std::vector<T> out(static_cast<std::size_t>(n.at(0) * n.at(1)));
    long first[2] = {1, 1};
    int status = 0;
    fits_read_pix(f_, data_type, first, static_cast<LONGLONG>(out.size()), nullptr, out.data(),
                  nullptr, &status);
    check(status, "read the pixels");
    return out;
  }

 private:
  static void check(int status, const std::string& what) {
    if (status == 0) return;
    char text[FLEN_STATUS];
    fits_get_errstatus(status, text);
    throw std::runtime_error("cfitsio cannot " + what + ": " + text);
  }
  fitsfile* f_ = nullptr;
};

}  // namespace starsift::test
