// SPDX-License-Identifier: LGPL-2.1-or-later
// Nights: their names at noon on UTC and local clocks (daylight saving included), directories
// made on demand and the errors when they cannot be.
#include <sys/stat.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <ctime>

#include "daemon/outputs/night_layout.hpp"
#include "outputs_support.hpp"
#include "pipeline/error.hpp"

using namespace starsift::daemon;
using starsift::test::TempDir;

namespace {

// µs since 1970 of a UTC calendar time.
std::int64_t utc_us(int year, int month, int day, int hour, int minute, int second,
                    int micros = 0) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  return static_cast<std::int64_t>(timegm(&tm)) * 1000000 + micros;
}

// Sets TZ for the test's duration. POSIX rule strings need no zone files.
class ScopedTimeZone {
 public:
  explicit ScopedTimeZone(const char* tz) {
    const char* old = std::getenv("TZ");
    had_ = old != nullptr;
    if (had_) old_ = old;
    ::setenv("TZ", tz, 1);
    ::tzset();
  }
  ~ScopedTimeZone() {
    if (had_) {
      ::setenv("TZ", old_.c_str(), 1);
    } else {
      ::unsetenv("TZ");
    }
    ::tzset();
  }

 private:
  bool had_ = false;
  std::string old_;
};

}  // namespace

TEST_CASE("night name: a UTC night turns at 12:00:00 UTC") {
  CHECK(night_name(utc_us(2026, 11, 26, 11, 59, 59, 999999), NightClock::Utc) == "2026-11-25");
  CHECK(night_name(utc_us(2026, 11, 26, 12, 0, 0), NightClock::Utc) == "2026-11-26");
  CHECK(night_name(utc_us(2026, 11, 26, 3, 10, 0), NightClock::Utc) == "2026-11-25");
  CHECK(night_name(utc_us(2026, 11, 26, 23, 59, 59), NightClock::Utc) == "2026-11-26");
  // Across a month, a year, a leap day.
  CHECK(night_name(utc_us(2027, 1, 1, 0, 30, 0), NightClock::Utc) == "2026-12-31");
  CHECK(night_name(utc_us(2028, 3, 1, 5, 0, 0), NightClock::Utc) == "2028-02-29");
  // Before 1970: the microseconds round down, not towards zero.
  CHECK(night_name(-1, NightClock::Utc) == "1969-12-31");
  CHECK(night_name(utc_us(1969, 12, 31, 12, 0, 0), NightClock::Utc) == "1969-12-31");
}

TEST_CASE("night name: a local night turns at local noon") {
  const ScopedTimeZone tz("AEST-10");  // UTC+10 all year: local noon is 02:00 UTC
  CHECK(night_name(utc_us(2026, 11, 26, 1, 59, 59, 999999), NightClock::Local) == "2026-11-25");
  CHECK(night_name(utc_us(2026, 11, 26, 2, 0, 0), NightClock::Local) == "2026-11-26");
  // The same instants on UTC belong to other nights.
  CHECK(night_name(utc_us(2026, 11, 26, 2, 0, 0), NightClock::Utc) == "2026-11-25");
}

TEST_CASE("night name: local noon on the days daylight saving time starts and ends") {
  const ScopedTimeZone tz("EST5EDT,M3.2.0,M11.1.0");  // New York's rule
  // 2026-03-08: clocks go from 02:00 EST to 03:00 EDT; noon EDT is 16:00 UTC, not 17:00.
  CHECK(night_name(utc_us(2026, 3, 8, 15, 59, 59), NightClock::Local) == "2026-03-07");
  CHECK(night_name(utc_us(2026, 3, 8, 16, 0, 0), NightClock::Local) == "2026-03-08");
  // 2026-11-01: back from 02:00 EDT to 01:00 EST; noon EST is 17:00 UTC.
  CHECK(night_name(utc_us(2026, 11, 1, 16, 59, 59), NightClock::Local) == "2026-10-31");
  CHECK(night_name(utc_us(2026, 11, 1, 17, 0, 0), NightClock::Local) == "2026-11-01");
  // The repeated hour 01:00-02:00 on that morning belongs to the night before, both times.
  CHECK(night_name(utc_us(2026, 11, 1, 5, 30, 0), NightClock::Local) == "2026-10-31");
  CHECK(night_name(utc_us(2026, 11, 1, 6, 30, 0), NightClock::Local) == "2026-10-31");
}

TEST_CASE("night clock names") {
  CHECK(parse_night_clock("local") == NightClock::Local);
  CHECK(parse_night_clock("utc") == NightClock::Utc);
  CHECK(to_string(NightClock::Utc) == "utc");
  try {
    parse_night_clock("UTC+1");
    FAIL("accepted");
  } catch (const starsift::Error& e) {
    CHECK(e.problem() == "night clock 'UTC+1' is not known");
    CHECK(e.allowed() == "local, utc");
  }
}

TEST_CASE("night names the disk guard recognises") {
  CHECK(is_night_name("2026-11-25"));
  CHECK(is_night_name("2028-02-29"));
  CHECK_FALSE(is_night_name("2026-02-29"));  // not a date
  CHECK_FALSE(is_night_name("2026-13-01"));
  CHECK_FALSE(is_night_name("2026-11-25x"));
  CHECK_FALSE(is_night_name("20261125"));
  CHECK_FALSE(is_night_name("fits"));
  CHECK_FALSE(is_night_name("2026-1a-25"));
}

TEST_CASE("night directory: made on demand under <state>/<pipeline>/<night>") {
  TempDir tmp;
  const NightLayout layout{tmp.path() / "state", NightClock::Utc};
  const auto dir = layout.ensure_night_dir("roof-east", "2026-11-25");
  CHECK(dir == tmp.path() / "state" / "roof-east" / "2026-11-25");
  CHECK(std::filesystem::is_directory(dir));
  // Again: nothing to do, no error.
  CHECK(layout.ensure_night_dir("roof-east", "2026-11-25") == dir);
  // A symbolic link to a directory serves as the state directory.
  std::filesystem::create_directory_symlink(tmp.path() / "state", tmp.path() / "link");
  const NightLayout linked{tmp.path() / "link", NightClock::Utc};
  CHECK(std::filesystem::is_directory(linked.ensure_night_dir("roof-east", "2026-11-26")));
}

TEST_CASE("night directory: a file in the way is named") {
  TempDir tmp;
  starsift::test::write_file(tmp.path() / "roof-east", "not a directory");
  const NightLayout layout{tmp.path(), NightClock::Utc};
  try {
    layout.ensure_night_dir("roof-east", "2026-11-25");
    FAIL("created");
  } catch (const starsift::Error& e) {
    const std::string in_way = (tmp.path() / "roof-east").string();
    CHECK(e.problem() == "directory '" + (tmp.path() / "roof-east/2026-11-25").string() + "': '" +
                             in_way + "' exists and is not a directory");
    CHECK(e.allowed() == "a directory there, or nothing (it is then created)");
  }
}

TEST_CASE("night directory: permission denied is named with what would allow it") {
  if (::geteuid() == 0) {
    WARN("running as root, which writes anywhere: the permission case cannot be made here");
    return;
  }
  TempDir tmp;
  std::filesystem::create_directory(tmp.path() / "state");
  ::chmod((tmp.path() / "state").c_str(), 0555);
  const NightLayout layout{tmp.path() / "state", NightClock::Utc};
  try {
    layout.ensure_night_dir("roof-east", "2026-11-25");
    FAIL("created");
  } catch (const starsift::Error& e) {
    CHECK_THAT(e.problem(),
               Catch::Contains("cannot create") && Catch::Contains("Permission denied"));
    CHECK_THAT(e.allowed(), Catch::Contains("StateDirectory="));
  }
  ::chmod((tmp.path() / "state").c_str(), 0755);
}

TEST_CASE("night directory: pipeline names that are not one directory are refused") {
  const NightLayout layout{"/nonexistent", NightClock::Utc};
  for (const char* bad : {"", ".", "..", ".hidden", "a/b", "../escape"}) {
    INFO(bad);
    CHECK_THROWS_AS(layout.night_dir(bad, "2026-11-25"), starsift::Error);
  }
  CHECK(layout.night_dir("cam 1", "2026-11-25") == "/nonexistent/cam 1/2026-11-25");
}
