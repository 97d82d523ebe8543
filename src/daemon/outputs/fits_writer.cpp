// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/outputs/fits_writer.hpp"

#include <fcntl.h>
#include <fitsio.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <vector>

#include "daemon/outputs/fits_text.hpp"
#include "daemon/outputs/night_layout.hpp"
#include "pipeline/error.hpp"

#ifndef STARSIFT_VERSION
#define STARSIFT_VERSION "unknown"
#endif

namespace starsift::daemon {

namespace fs = std::filesystem;

namespace {

// cfitsio's name for a status and the newest message on its stack ("" when none).
std::string cfitsio_text(int status) {
  char text[FLEN_STATUS] = {};
  fits_get_errstatus(status, text);
  std::string out = std::string(text) + " (cfitsio status " + std::to_string(status);
  char detail[FLEN_ERRMSG] = {};
  if (fits_read_errmsg(detail) != 0 && detail[0] != '\0') out += ": " + std::string(detail);
  fits_clear_errmsg();
  return out + ")";
}

// The file being written: closed, and removed unless renamed, however the writing ends.
class PartFile {
 public:
  explicit PartFile(fs::path final_path) : final_(std::move(final_path)), part_(final_) {
    part_ += ".part";
  }
  ~PartFile() {
    if (fits_ != nullptr) {
      int ignored = 0;
      fits_close_file(fits_, &ignored);
    }
    if (!renamed_) ::unlink(part_.c_str());
  }
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;

  [[noreturn]] void fail(const std::string& what, int status) const {
    throw Error("FITS frame '" + shown_value(final_.string(), kMaxShownPathBytes) + "': cannot " +
                what + ": " + cfitsio_text(status));
  }
  [[noreturn]] void fail_errno(const std::string& what, int reason) const {
    throw Error("FITS frame '" + shown_value(final_.string(), kMaxShownPathBytes) + "': cannot " +
                what + ": " + std::strerror(reason));
  }
  void create() {
    ::unlink(part_.c_str());  // left by a crash: cfitsio refuses to create over a file
    int status = 0;
    // The disk-file call: a path with '[' or '(' is a path, not cfitsio's extended syntax.
    fits_create_diskfile(&fits_, part_.c_str(), &status);
    if (status != 0) fits_ = nullptr;
    check(status, "create " + part_.filename().string());
  }
  // Checks cfitsio's status after a call.
  void check(int status, const std::string& what) const {
    if (status != 0) fail(what, status);
  }

  void close() {
    int status = 0;
    fits_close_file(fits_, &status);
    fits_ = nullptr;
    check(status, "close");
  }

  void sync_part() const {
    const int fd = ::open(part_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || ::fsync(fd) != 0) {
      const int reason = errno;
      if (fd >= 0) ::close(fd);
      fail_errno("sync " + part_.filename().string(), reason);
    }
    ::close(fd);
  }

  void rename(bool sync_directory) {
    if (::rename(part_.c_str(), final_.c_str()) != 0) fail_errno("rename into place", errno);
    renamed_ = true;
    if (!sync_directory) return;
    const int fd = ::open(final_.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
      ::fsync(fd);  // best effort: the file is whole whether or not its name is on disk yet
      ::close(fd);
    }
  }

  fitsfile* fits() const noexcept { return fits_; }
  const fs::path& final_path() const noexcept { return final_; }

 private:
  fs::path final_;
  fs::path part_;
  fitsfile* fits_ = nullptr;
  bool renamed_ = false;
};

struct Layout {
  int image_type;  // cfitsio's: BYTE_IMG, USHORT_IMG (BITPIX 16 with BZERO 32768), FLOAT_IMG
  int data_type;   // the samples in memory: TBYTE, TUSHORT, TFLOAT
};

Layout fits_layout(PixelFormat format) {
  switch (format) {
    case PixelFormat::Gray8:
      return {BYTE_IMG, TBYTE};
    case PixelFormat::Gray16:
      return {USHORT_IMG, TUSHORT};
    case PixelFormat::Gray32F:
      return {FLOAT_IMG, TFLOAT};
    default:
      throw Error("FITS frame: format " + std::string(to_string(format)) + " cannot be written",
                  "GRAY8, GRAY16_LE, GRAY32F");
  }
}

void write_header(PartFile& file, const FitsFrame& frame, const FitsPipelineInfo& info,
                  const ClockState& clock) {
  fitsfile* f = file.fits();
  int status = 0;
  const std::string date_obs = fits_date_obs(frame.utc_us);
  fits_write_key_str(f, "DATE-OBS", date_obs.c_str(), "UTC of the frame's timestamp", &status);
  fits_write_key_str(f, "TIMESYS", "UTC", "time scale of DATE-OBS", &status);
  fits_write_key_fixdbl(f, "MJD-OBS", modified_julian_date(frame.utc_us), 11,
                        "DATE-OBS as a Modified Julian Date", &status);
  if (std::isfinite(frame.exposure_s) && frame.exposure_s >= 0.0) {
    fits_write_key_dbl(f, "EXPTIME", frame.exposure_s, -15, "[s] exposure time", &status);
  } else {
    fits_write_key_null(f, "EXPTIME", "[s] exposure time: not known", &status);
  }
  fits_write_key_longwarn(f, &status);  // LONGSTRN: long strings use CONTINUE cards
  fits_write_key_longstr(f, "INSTRUME", fits_ascii(info.source).c_str(), "the frame's source",
                         &status);
  fits_write_key_longstr(f, "PIPELINE", fits_ascii(info.pipeline).c_str(), "starsiftd pipeline",
                         &status);
  fits_write_key_lng(f, "FRAMENUM", static_cast<LONGLONG>(frame.frame_number),
                     "frame number in the pipeline", &status);
  fits_write_key_str(f, "CREATOR", software_name_and_version(), "software that wrote this file",
                     &status);
  fits_write_date(f, &status);
  file.check(status, "write the header");

  fits_write_key_log(f, "CLKSYNC", clock.synchronised ? 1 : 0,
                     "host clock synchronised (kernel's verdict)", &status);
  fits_write_key_str(f, "CLKSTATE",
                     clock.readable ? kernel_state_name(clock.kernel_state) : "unknown",
                     "host clock: kernel NTP state", &status);
  if (clock.readable) {
    fits_write_key_lng(f, "CLKESTER", clock.est_error_us, "[us] host clock: estimated error",
                       &status);
    fits_write_key_lng(f, "CLKMAXER", clock.max_error_us, "[us] host clock: maximum error",
                       &status);
    fits_write_key_lng(f, "CLKOFFS", clock.offset_ns, "[ns] host clock: offset being slewed",
                       &status);
    fits_write_key_str(f, "CLKSRC", fits_ascii(clock.source).c_str(), "host clock: what steers it",
                       &status);
  }
  fits_write_key_longstr(f, "CLOCK", fits_ascii(clock_json(clock)).c_str(),
                         "host clock state as JSON", &status);
  file.check(status, "write the clock keys");

  if (frame.significance.present()) {
    fits_write_key_dbl(f, "SIGOFFS", frame.significance.offset, -17,
                       "significance = (sample - SIGOFFS) / SIGGAIN", &status);
    fits_write_key_dbl(f, "SIGGAIN", frame.significance.gain, -17,
                       "sample units per sigma of the noise", &status);
    file.check(status, "write the significance scale");
  }

  for (const std::string& card : chain_history_cards(info.chain_yaml)) {
    fits_write_history(f, card.c_str(), &status);
  }
  file.check(status, "write the chain (HISTORY)");
}

// `plane`: the cube's plane (0 for a frame).
void write_pixels(PartFile& file, const ConstImageView& image, int data_type, long plane = 0) {
  std::vector<std::uint16_t> swapped;  // GRAY16 is little-endian; TUSHORT is the host's order
  for (int y = 0; y < image.height; ++y) {
    const void* row = image.row(y);
    if constexpr (std::endian::native == std::endian::big) {
      if (data_type == TUSHORT) {
        swapped.resize(static_cast<std::size_t>(image.width));
        std::memcpy(swapped.data(), row, image.row_bytes());
        for (std::uint16_t& v : swapped) v = static_cast<std::uint16_t>((v >> 8) | (v << 8));
        row = swapped.data();
      }
    }
    LONGLONG first[3] = {1, static_cast<LONGLONG>(y) + 1, static_cast<LONGLONG>(plane) + 1};
    int status = 0;
    // cfitsio takes a non-const pointer but only reads from it.
    fits_write_pixll(file.fits(), data_type, first, image.width, const_cast<void*>(row), &status);
    file.check(status, "write row " + std::to_string(y));
  }
}

// The FRAMES table of a cube: each plane's frame number and UTC.
void write_frames_table(PartFile& file, std::span<const FitsFrame> frames) {
  char framenum[] = "FRAMENUM";
  char date_obs[] = "DATE-OBS";
  char k[] = "K";
  char a26[] = "26A";
  char* names[] = {framenum, date_obs};
  char* forms[] = {k, a26};
  int status = 0;
  fits_create_tbl(file.fits(), BINARY_TBL, static_cast<LONGLONG>(frames.size()), 2, names, forms,
                  nullptr, "FRAMES", &status);
  file.check(status, "create the FRAMES table");
  for (std::size_t i = 0; i < frames.size(); ++i) {
    LONGLONG number = static_cast<LONGLONG>(frames[i].frame_number);
    std::string utc = fits_date_obs(frames[i].utc_us);
    char* text = utc.data();
    const auto row = static_cast<LONGLONG>(i) + 1;
    fits_write_col(file.fits(), TLONGLONG, 1, row, 1, 1, &number, &status);
    fits_write_col(file.fits(), TSTRING, 2, row, 1, 1, &text, &status);
  }
  file.check(status, "write the FRAMES table");
}

}  // namespace

void write_fits_cube(const fs::path& path, std::span<const FitsFrame> frames,
                     const FitsPipelineInfo& info, const ClockState& clock,
                     FitsWriteOptions options) {
  if (frames.empty()) throw Error("FITS cube '" + path.string() + "': no frames");
  const ConstImageView& first = frames.front().image;
  const Layout layout = fits_layout(first.format);
  for (const FitsFrame& f : frames) {
    if (f.image.width != first.width || f.image.height != first.height ||
        f.image.format != first.format || f.image.data == nullptr) {
      throw Error("FITS cube '" + path.string() + "': frames of different sizes or formats",
                  "frames of one size and format");
    }
  }
  ensure_directory(path.parent_path());
  PartFile file(path);
  file.create();
  long axes[3] = {first.width, first.height, static_cast<long>(frames.size())};
  int status = 0;
  fits_create_img(file.fits(), layout.image_type, 3, axes, &status);
  file.check(status, "create the cube");
  write_header(file, frames.front(), info, clock);
  for (std::size_t z = 0; z < frames.size(); ++z) {
    write_pixels(file, frames[z].image, layout.data_type, static_cast<long>(z));
  }
  write_frames_table(file, frames);
  file.close();
  if (options.sync) file.sync_part();
  file.rename(options.sync);
}

const char* software_name_and_version() noexcept {
  return "starsift " STARSIFT_VERSION;
}

fs::path write_fits_frame(const fs::path& night_dir, const FitsFrame& frame,
                          const FitsPipelineInfo& info, const ClockState& clock,
                          FitsWriteOptions options) {
  const Layout layout = fits_layout(frame.image.format);
  if (frame.image.data == nullptr || frame.image.width <= 0 || frame.image.height <= 0) {
    throw Error("FITS frame: an empty image (" + std::to_string(frame.image.width) + "x" +
                    std::to_string(frame.image.height) + ")",
                "a frame of at least 1x1 pixel");
  }
  const fs::path dir = night_dir / "fits";
  ensure_directory(dir);
  PartFile file(dir / fits_frame_file_name(frame.utc_us, frame.frame_number));
  file.create();
  long axes[2] = {frame.image.width, frame.image.height};
  int status = 0;
  fits_create_img(file.fits(), layout.image_type, 2, axes, &status);
  file.check(status, "create the image");
  write_header(file, frame, info, clock);
  write_pixels(file, frame.image, layout.data_type);
  file.close();
  if (options.sync) file.sync_part();
  file.rename(options.sync);
  return file.final_path();
}

}  // namespace starsift::daemon
