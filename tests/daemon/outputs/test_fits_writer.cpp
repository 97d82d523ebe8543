// SPDX-License-Identifier: LGPL-2.1-or-later
// FITS frames: written by cfitsio, read back by cfitsio here (and by astropy in
// test_fits_astropy.cpp), every sample bit for bit and every header key checked; what is left
// when writing fails or the process is killed mid-write.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <ctime>
#include <limits>

#include "daemon/outputs/fits_writer.hpp"
#include "fits_frames.hpp"
#include "fits_reader.hpp"
#include "outputs_support.hpp"
#include "pipeline/error.hpp"

using namespace starsift;
using namespace starsift::daemon;
using starsift::test::FitsReader;
using starsift::test::TempDir;
using starsift::test::TestFrame;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path().filename());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("fits frame: GRAY8 is BITPIX 8, every byte as it was") {
  TempDir tmp;
  const TestFrame<std::uint8_t> frame = test::gray8_frame(37, 23);
  const fs::path path = write_fits_frame(tmp.path(), test::fits_frame(frame), test::pipeline_info(),
                                         test::clock(), {.sync = false});
  CHECK(path == tmp.path() / "fits" / "20261125T013000.123456Z_42.fits");
  FitsReader fits(path);
  CHECK(fits.bitpix() == BYTE_IMG);
  CHECK(fits.axes() == std::vector<long>{37, 23});
  CHECK(fits.pixels<std::uint8_t>(TBYTE) == frame.packed());
}

TEST_CASE("fits frame: GRAY16 is BITPIX 16 with BZERO 32768, every value as it was") {
  TempDir tmp;
  const TestFrame<std::uint16_t> frame = test::gray16_frame(37, 23);
  const fs::path path = write_fits_frame(tmp.path(), test::fits_frame(frame), test::pipeline_info(),
                                         test::clock(), {.sync = false});
  FitsReader fits(path);
  CHECK(fits.bitpix() == SHORT_IMG);
  CHECK(fits.equivalent_type() == USHORT_IMG);
  CHECK(fits.number("BZERO") == 32768.0);
  CHECK(fits.number("BSCALE") == 1.0);
  const auto values = fits.pixels<std::uint16_t>(TUSHORT);
  CHECK(values == frame.packed());
  // The extremes are among them.
  CHECK(values[0] == 0);
  CHECK(values[1] == 65535);
  CHECK(values[2] == 32767);
  CHECK(values[3] == 32768);
}

TEST_CASE("fits frame: GRAY32F is BITPIX -32, every bit as it was (NaN, -0, inf, subnormal)") {
  TempDir tmp;
  const TestFrame<float> frame = test::gray32f_frame(37, 23);
  const fs::path path = write_fits_frame(tmp.path(), test::fits_frame(frame), test::pipeline_info(),
                                         test::clock(), {.sync = false});
  FitsReader fits(path);
  CHECK(fits.bitpix() == FLOAT_IMG);
  const auto values = fits.pixels<float>(TFLOAT);
  const auto want = frame.packed();
  REQUIRE(values.size() == want.size());
  CHECK(std::memcmp(values.data(), want.data(), want.size() * sizeof(float)) == 0);
  CHECK(std::isnan(values[0]));
  CHECK(std::signbit(values[1]));
}

TEST_CASE("fits frame: a 1x1 frame") {
  TempDir tmp;
  const TestFrame<std::uint16_t> frame = test::gray16_frame(1, 1);
  FitsReader fits(write_fits_frame(tmp.path(), test::fits_frame(frame), test::pipeline_info(),
                                   test::clock(), {.sync = false}));
  CHECK(fits.axes() == std::vector<long>{1, 1});
  CHECK(fits.pixels<std::uint16_t>(TUSHORT) == frame.packed());
}

TEST_CASE("fits frame: the header says when, what, how and how good the clock was") {
  TempDir tmp;
  const TestFrame<std::uint16_t> frame = test::gray16_frame(8, 4);
  FitsFrame f = test::fits_frame(frame);
  f.significance = {32768.0, 1000.0};
  const FitsPipelineInfo info = test::pipeline_info();
  const ClockState clock = test::clock();
  FitsReader fits(write_fits_frame(tmp.path(), f, info, clock));  // synced, as in service

  CHECK(fits.text("DATE-OBS") == "2026-11-25T01:30:00.123456");
  CHECK(fits.text("TIMESYS") == "UTC");
  CHECK(fits.number("MJD-OBS") == Approx(61369.0625014289).epsilon(1e-15));
  CHECK(fits.number("EXPTIME") == 0.04);
  CHECK(fits.text("INSTRUME") == info.source);  // longer than one card: CONTINUE
  CHECK(info.source.size() > 68);
  CHECK(fits.text("PIPELINE") == "roof-east");
  CHECK(fits.integer("FRAMENUM") == 42);
  CHECK(fits.text("CREATOR") == std::string("starsift ") + STARSIFT_PROJECT_VERSION);
  CHECK(fits.has("DATE"));

  CHECK(fits.logical("CLKSYNC"));
  CHECK(fits.text("CLKSTATE") == "ok");
  CHECK(fits.integer("CLKESTER") == 412);
  CHECK(fits.integer("CLKMAXER") == 28000);
  CHECK(fits.integer("CLKOFFS") == -1500);
  CHECK(fits.text("CLKSRC") == "chronyd");
  CHECK(fits.text("CLOCK") == clock_json(clock));

  CHECK(fits.number("SIGOFFS") == 32768.0);
  CHECK(fits.number("SIGGAIN") == 1000.0);

  const auto cards = fits.history();
  REQUIRE(cards.size() == 5);
  CHECK(cards[0] == "starsift chain: 4 YAML lines, '| ' starts one, '+ ' goes on");
  CHECK(cards[1] == "| stages:");
  CHECK(cards[2] == "|   - whiten: {history: 20, output: significance}");
  CHECK(cards[4] == "|       threshold: 5");
}

TEST_CASE("fits frame: an unknown exposure, an unreadable clock, no significance") {
  TempDir tmp;
  const TestFrame<std::uint8_t> frame = test::gray8_frame(4, 4);
  FitsFrame f = test::fits_frame(frame);
  f.exposure_s = std::numeric_limits<double>::quiet_NaN();
  ClockState unreadable;
  unreadable.error = "ntp_adjtime (read only): Operation not permitted";
  FitsReader fits(
      write_fits_frame(tmp.path(), f, test::pipeline_info(), unreadable, {.sync = false}));
  CHECK(fits.has("EXPTIME"));
  CHECK(fits.number_status("EXPTIME") == VALUE_UNDEFINED);
  CHECK_FALSE(fits.logical("CLKSYNC"));
  CHECK(fits.text("CLKSTATE") == "unknown");
  CHECK_FALSE(fits.has("CLKESTER"));
  CHECK(fits.text("CLOCK") == clock_json(unreadable));
  CHECK_FALSE(fits.has("SIGOFFS"));
}

TEST_CASE("fits frame: non-ASCII text is made FITS-safe") {
  TempDir tmp;
  const TestFrame<std::uint8_t> frame = test::gray8_frame(4, 4);
  FitsPipelineInfo info = test::pipeline_info();
  info.source = "caméra\tsud";
  info.chain_yaml = "# ciel nocturne: é\nstages: []\n";
  FitsReader fits(
      write_fits_frame(tmp.path(), test::fits_frame(frame), info, test::clock(), {.sync = false}));
  CHECK(fits.text("INSTRUME") == "cam??ra sud");
  CHECK(fits.history().at(1) == "| # ciel nocturne: ??");
}

TEST_CASE("fits frame: only the final file is left, and the name is the UTC time and number") {
  TempDir tmp;
  const TestFrame<std::uint16_t> frame = test::gray16_frame(16, 8);
  FitsFrame f = test::fits_frame(frame);
  write_fits_frame(tmp.path(), f, test::pipeline_info(), test::clock());
  f.frame_number = 43;
  f.utc_us += 40000;
  write_fits_frame(tmp.path(), f, test::pipeline_info(), test::clock());
  CHECK(files_in(tmp.path() / "fits") == std::vector<fs::path>{"20261125T013000.123456Z_42.fits",
                                                               "20261125T013000.163456Z_43.fits"});
}

TEST_CASE("fits frame: errors name the file and cfitsio's reason, and leave nothing") {
  TempDir tmp;
  const TestFrame<std::uint16_t> frame = test::gray16_frame(8, 4);
  const FitsFrame f = test::fits_frame(frame);
  const fs::path final_path = tmp.path() / "fits" / "20261125T013000.123456Z_42.fits";

  SECTION("cfitsio cannot create the file") {
    // A directory where the temporary file goes: cfitsio's create fails.
    fs::create_directories(final_path.string() + ".part");
    try {
      write_fits_frame(tmp.path(), f, test::pipeline_info(), test::clock(), {.sync = false});
      FAIL("written");
    } catch (const Error& e) {
      CHECK_THAT(std::string(e.what()),
                 Catch::StartsWith("FITS frame '" + final_path.string() + "': cannot create " +
                                   final_path.filename().string() + ".part: ") &&
                     Catch::Contains("(cfitsio status 105"));
    }
    CHECK_FALSE(fs::exists(final_path));
  }
  SECTION("the fits directory is a file") {
    starsift::test::write_file(tmp.path() / "fits", "in the way");
    CHECK_THROWS_WITH(
        write_fits_frame(tmp.path(), f, test::pipeline_info(), test::clock(), {.sync = false}),
        Catch::Contains("exists and is not a directory"));
  }
  SECTION("a format FITS frames do not take") {
    FitsFrame rgba = f;
    rgba.image.format = PixelFormat::Rgba;
    try {
      write_fits_frame(tmp.path(), rgba, test::pipeline_info(), test::clock(), {.sync = false});
      FAIL("written");
    } catch (const Error& e) {
      CHECK(e.problem() == "FITS frame: format RGBA cannot be written");
      CHECK(e.allowed() == "GRAY8, GRAY16_LE, GRAY32F");
    }
    CHECK_FALSE(fs::exists(tmp.path() / "fits"));
  }
}

TEST_CASE("fits frame: a process killed while writing leaves no half .fits") {
  TempDir tmp;
  const TestFrame<std::uint16_t> frame = test::gray16_frame(512, 512);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    FitsFrame f = test::fits_frame(frame);
    for (int i = 0; i < 100000; ++i) {
      f.frame_number = static_cast<std::uint64_t>(i);
      try {
        write_fits_frame(tmp.path(), f, test::pipeline_info(), test::clock(), {.sync = false});
      } catch (...) {
        ::_exit(3);
      }
    }
    ::_exit(0);
  }
  // Killed mid-way through some frame: after the first files are there, at an arbitrary point.
  for (int i = 0; i < 2000 && !fs::exists(tmp.path() / "fits" / "20261125T013000.123456Z_3.fits");
       ++i) {
    ::usleep(1000);
  }
  ::usleep(7919);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFSIGNALED(status));

  int complete = 0, parts = 0;
  for (const auto& e : fs::directory_iterator(tmp.path() / "fits")) {
    if (e.path().extension() == ".part") {
      ++parts;
      continue;
    }
    REQUIRE(e.path().extension() == ".fits");
    FitsReader fits(e.path());
    CHECK(fits.pixels<std::uint16_t>(TUSHORT) == frame.packed());
    ++complete;
  }
  CHECK(complete >= 4);
  CHECK(parts <= 1);  // at most the one being written when the process died
}
