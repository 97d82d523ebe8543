// SPDX-License-Identifier: LGPL-2.1-or-later
// FITS frames read by a second reader, astropy: pixels bit for bit, header values, the chain.
// Hidden from the default run ([.astropy]): ctest runs it as starsift_daemon_outputs_astropy,
// which reports it skipped where python3-astropy is not installed.
#include <catch2/catch.hpp>

#include "daemon/outputs/fits_writer.hpp"
#include "fits_frames.hpp"
#include "outputs_support.hpp"

using namespace starsift;
using namespace starsift::daemon;
using starsift::test::TempDir;
using starsift::test::TestFrame;
namespace fs = std::filesystem;

namespace {

// The JSON text of a string.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// Writes `frame` as FITS, the expectation beside it, and runs read_fits_astropy.py on them.
template <class T>
void check_with_astropy(const TestFrame<T>& frame, const char* dtype, const FitsFrame& f,
                        const std::string& extra_header) {
  TempDir tmp;
  const FitsPipelineInfo info = test::pipeline_info();
  const ClockState clock = test::clock();
  const fs::path path = write_fits_frame(tmp.path(), f, info, clock);

  const auto values = frame.packed();  // little-endian hosts: memory order is the raw file's
  test::write_file(
      tmp.path() / "expected.raw",
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
  const std::string expect =
      std::string("{\"dtype\":\"") + dtype + "\",\"width\":" + std::to_string(frame.width) +
      ",\"height\":" + std::to_string(frame.height) + ",\"chain\":" + quoted(info.chain_yaml) +
      ",\"header\":{"
      "\"DATE-OBS\":\"2026-11-25T01:30:00.123456\",\"TIMESYS\":\"UTC\","
      "\"INSTRUME\":" +
      quoted(info.source) + ",\"PIPELINE\":\"roof-east\",\"FRAMENUM\":42," +
      "\"CREATOR\":\"starsift " STARSIFT_PROJECT_VERSION
      "\","
      "\"CLKSYNC\":true,\"CLKSTATE\":\"ok\",\"CLKESTER\":412,\"CLKMAXER\":28000,"
      "\"CLKOFFS\":-1500,\"CLKSRC\":\"chronyd\",\"CLOCK\":" +
      quoted(clock_json(clock)) + extra_header + "}}";
  test::write_file(tmp.path() / "expected.json", expect);

  const auto result = test::run_command(
      test::python3() + " " + test::shell_quote(STARSIFT_TEST_DIR "/read_fits_astropy.py") + " " +
      test::shell_quote(path.string()) + " " +
      test::shell_quote((tmp.path() / "expected.raw").string()) + " " +
      test::shell_quote((tmp.path() / "expected.json").string()));
  INFO(result.output);
  CHECK(result.exit_code == 0);
  CHECK(result.output == "ok\n");
}

}  // namespace

TEST_CASE("fits frame read by astropy: GRAY8", "[.astropy]") {
  const auto frame = test::gray8_frame(37, 23);
  check_with_astropy(frame, "uint8", test::fits_frame(frame), ",\"BITPIX\":8,\"EXPTIME\":0.04");
}

TEST_CASE("fits frame read by astropy: GRAY16 as unsigned, significance scale", "[.astropy]") {
  const auto frame = test::gray16_frame(37, 23);
  FitsFrame f = test::fits_frame(frame);
  f.significance = {32768.0, 1000.0};
  check_with_astropy(frame, "uint16", f,
                     ",\"BITPIX\":16,\"BZERO\":32768,\"SIGOFFS\":32768.0,\"SIGGAIN\":1000.0");
}

TEST_CASE("fits frame read by astropy: GRAY32F bit for bit, exposure unknown", "[.astropy]") {
  const auto frame = test::gray32f_frame(37, 23);
  FitsFrame f = test::fits_frame(frame);
  f.exposure_s = std::numeric_limits<double>::quiet_NaN();
  check_with_astropy(frame, "float32", f, ",\"BITPIX\":-32,\"EXPTIME\":null");
}
