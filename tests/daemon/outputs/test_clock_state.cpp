// SPDX-License-Identifier: LGPL-2.1-or-later
// The host clock's state: crafted kernel records, its JSON, the real kernel, the service probe.
#include <catch2/catch.hpp>

#include "daemon/outputs/clock_source.hpp"
#include "daemon/outputs/clock_state.hpp"
#include "outputs_support.hpp"

using namespace starsift::daemon;
using starsift::test::TempDir;

namespace {

// What chronyd leaves in the kernel once synchronised: nanosecond units, no PLL offset (it
// slews by frequency), the errors it estimated.
struct timex synchronised_by_chrony() {
  struct timex tx {};
  tx.status = STA_NANO;
  tx.esterror = 412;
  tx.maxerror = 28000;
  tx.offset = 0;
  tx.freq = -819200;  // -12.5 ppm with 16 fraction bits
  return tx;
}

}  // namespace

TEST_CASE("clock state: a clock chrony keeps is synchronised, with its errors") {
  const ClockState s = clock_state_from_timex(synchronised_by_chrony(), TIME_OK);
  CHECK(s.readable);
  CHECK(s.synchronised);
  CHECK(s.kernel_state == TIME_OK);
  CHECK(s.est_error_us == 412);
  CHECK(s.max_error_us == 28000);
  CHECK(s.offset_ns == 0);
  CHECK(s.frequency_ppm == -12.5);
  CHECK_FALSE(s.pps);
  CHECK(s.source.empty());  // the kernel does not say who steers it
}

TEST_CASE("clock state: STA_UNSYNC or TIME_ERROR means not synchronised") {
  struct timex tx = synchronised_by_chrony();
  tx.status |= STA_UNSYNC;
  tx.maxerror = 16000000;
  ClockState s = clock_state_from_timex(tx, TIME_ERROR);
  CHECK_FALSE(s.synchronised);
  CHECK(s.max_error_us == 16000000);
  CHECK(std::string(kernel_state_name(s.kernel_state)) == "error");

  // The flag clear but the kernel still in error: PPS time asked for with no PPS signal.
  tx = synchronised_by_chrony();
  tx.status |= STA_PPSTIME;
  s = clock_state_from_timex(tx, TIME_ERROR);
  CHECK_FALSE(s.synchronised);
  CHECK_FALSE(s.pps);
}

TEST_CASE("clock state: a leap second announced keeps the clock synchronised") {
  const ClockState s = clock_state_from_timex(synchronised_by_chrony(), TIME_INS);
  CHECK(s.synchronised);
  CHECK(std::string(kernel_state_name(s.kernel_state)) == "leap-insert");
}

TEST_CASE("clock state: the offset is in ns with STA_NANO, in µs without") {
  struct timex tx = synchronised_by_chrony();
  tx.offset = -1500;
  CHECK(clock_state_from_timex(tx, TIME_OK).offset_ns == -1500);
  tx.status &= ~STA_NANO;
  tx.offset = 250;
  CHECK(clock_state_from_timex(tx, TIME_OK).offset_ns == 250000);
}

TEST_CASE("clock state: a PPS-disciplined clock names pps as its source") {
  struct timex tx = synchronised_by_chrony();
  tx.status |= STA_PPSSIGNAL | STA_PPSTIME;
  const ClockState s = clock_state_from_timex(tx, TIME_OK);
  CHECK(s.pps);
  CHECK(s.source == "pps");
  CHECK(s.synchronised);
}

TEST_CASE("clock state: the JSON record") {
  ClockState s = clock_state_from_timex(synchronised_by_chrony(), TIME_OK);
  s.source = "chronyd";
  CHECK(clock_json(s) ==
        R"({"synchronised":true,"state":"ok","est_error_us":412,"max_error_us":28000,)"
        R"("offset_ns":0,"freq_ppm":-12.5,"pps":false,"source":"chronyd"})");

  ClockState unreadable;
  unreadable.error = "ntp_adjtime: \"denied\"\n";
  CHECK(clock_json(unreadable) ==
        R"({"synchronised":false,"state":"unknown","error":"ntp_adjtime: \"denied\"\n"})");
}

TEST_CASE("clock state: the real kernel agrees with a direct ntp_adjtime") {
  const ClockState s = read_clock_state();
  struct timex tx {};
  const int state = ::ntp_adjtime(&tx);
  if (state < 0) {  // a sandbox that forbids the call: the record says so, it does not throw
    CHECK_FALSE(s.readable);
    CHECK(s.error.find("ntp_adjtime") == 0);
    return;
  }
  REQUIRE(s.readable);
  CHECK(s.error.empty());
  CHECK(s.synchronised == ((tx.status & STA_UNSYNC) == 0 && state != TIME_ERROR));
  CHECK((s.status & STA_UNSYNC) == (tx.status & STA_UNSYNC));
  CHECK(s.est_error_us >= 0);
  CHECK(s.max_error_us >= 0);
}

TEST_CASE("clock source: named by the file its service leaves under /run") {
  TempDir run;
  CHECK(find_time_service(run.path()).empty());

  std::filesystem::create_directories(run.path() / "systemd/timesync");
  starsift::test::write_file(run.path() / "systemd/timesync/synchronized", "");
  CHECK(find_time_service(run.path()) == "systemd-timesyncd");

  starsift::test::write_file(run.path() / "ntpd.pid", "812\n");
  CHECK(find_time_service(run.path()) == "ntpd");

  std::filesystem::create_directories(run.path() / "chrony");
  starsift::test::write_file(run.path() / "chrony/chronyd.pid", "640\n");
  CHECK(find_time_service(run.path()) == "chronyd");

  // read_clock_state() takes it from there unless the kernel says pps.
  const ClockState s = read_clock_state(run.path());
  if (s.readable && !s.pps) CHECK(s.source == "chronyd");
}
