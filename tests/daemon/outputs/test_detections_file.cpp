// SPDX-License-Identifier: LGPL-2.1-or-later
// detections.jsonl: a file per night, siftdetect's lines plus fps and clock, read back by
// Python's json module; appended after a restart; errors named.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <ctime>
#include <limits>

#include "daemon/outputs/detections_file.hpp"
#include "outputs_support.hpp"
#include "pipeline/error.hpp"

using namespace starsift;
using namespace starsift::daemon;
using starsift::test::read_file;
using starsift::test::TempDir;
namespace fs = std::filesystem;

namespace {

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

ClockState synchronised_clock() {
  struct timex tx {};
  tx.status = STA_NANO;
  tx.esterror = 412;
  tx.maxerror = 28000;
  ClockState clock = clock_state_from_timex(tx, TIME_OK);
  clock.source = "chronyd";
  return clock;
}

constexpr const char* kClockJson =
    R"({"synchronised":true,"state":"ok","est_error_us":412,"max_error_us":28000,"offset_ns":0,)"
    R"("freq_ppm":0,"pps":false,"source":"chronyd"})";

// Each line of `path` parsed by Python's json (NaN and Infinity refused, as JSON has neither),
// one summary line out per record.
std::string parsed_by_python(const fs::path& path) {
  const std::string script =
      "import json, sys\n"
      "def refuse(name): raise ValueError('not JSON: ' + name)\n"
      "for line in open(sys.argv[1], encoding='utf-8'):\n"
      "    r = json.loads(line, parse_constant=refuse)\n"
      "    c = r['clock']\n"
      "    print(r['frame'], r['utc'], r['fps'], c['synchronised'], c['state'],\n"
      "          c.get('est_error_us'), len(r['objects']), len(r['tracks']))\n";
  const auto result = starsift::test::run_command(starsift::test::python3() + " -c " +
                                                  starsift::test::shell_quote(script) + " " +
                                                  starsift::test::shell_quote(path.string()));
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  return result.output;
}

}  // namespace

TEST_CASE("detections line: siftdetect's record with fps and clock added") {
  std::string line;
  append_detections_line(line, {7, 280000000, utc_us(2026, 11, 25, 20, 0, 0, 123456), {}, 0, {}},
                         24.98, synchronised_clock());
  CHECK(line == std::string(R"({"frame":7,"pts_ns":280000000,"utc":"2026-11-25T20:00:00.123456Z",)"
                            R"("overflow":0,"objects":[],"tracks":[],"fps":24.98,"clock":)") +
                    kClockJson + "}\n");

  // The same frame through siftdetect's own function: every one of its fields, unchanged.
  std::string siftdetect;
  append_detections_json(siftdetect,
                         {7, 280000000, utc_us(2026, 11, 25, 20, 0, 0, 123456), {}, 0, {}});
  CHECK(line.substr(0, siftdetect.size() - 2) == siftdetect.substr(0, siftdetect.size() - 2));

  // The rate measured to 0.001; none yet (0, NaN) is null.
  line.clear();
  append_detections_line(line, {1, -1, 0, {}, 0, {}}, 24.9812345, synchronised_clock());
  CHECK_THAT(line, Catch::Contains(R"("fps":24.981,)"));
  for (const double none : {0.0, std::numeric_limits<double>::quiet_NaN()}) {
    line.clear();
    append_detections_line(line, {1, -1, 0, {}, 0, {}}, none, synchronised_clock());
    CHECK_THAT(line, Catch::Contains(R"("fps":null,)"));
  }
}

TEST_CASE("detections file: one file per night, lines Python's json reads") {
  TempDir tmp;
  const NightLayout layout{tmp.path(), NightClock::Utc};
  std::array<DetectedObject, 2> objects{};
  objects[0].id = 1;
  objects[0].x = 12.5f;
  objects[1].id = 2;
  objects[1].x = std::numeric_limits<float>::quiet_NaN();  // written as null
  std::array<Track, 1> tracks{};
  tracks[0].id = 0;
  tracks[0].state = TrackState::Confirmed;

  ClockState unsynchronised = synchronised_clock();
  unsynchronised.synchronised = false;
  unsynchronised.kernel_state = TIME_ERROR;
  {
    DetectionsFile file(layout, "roof", {.sync_interval = std::chrono::milliseconds(0)});
    file.write({1, 0, utc_us(2026, 11, 25, 20, 0, 0), objects, 0, tracks}, 25.0,
               synchronised_clock());
    file.write({2, 40000000, utc_us(2026, 11, 26, 11, 59, 59, 999999), {}, 0, {}}, 24.98,
               unsynchronised);
    CHECK(file.path() == tmp.path() / "roof/2026-11-25/detections.jsonl");
    CHECK(file.night() == "2026-11-25");
    file.write({3, 80000000, utc_us(2026, 11, 26, 12, 0, 0), {}, 0, {}}, 24.98,
               synchronised_clock());
    CHECK(file.path() == tmp.path() / "roof/2026-11-26/detections.jsonl");
    CHECK(file.lines() == 3);
    CHECK(file.syncs() == 3);  // sync interval 0: after every line
  }
  CHECK(parsed_by_python(tmp.path() / "roof/2026-11-25/detections.jsonl") ==
        "1 2026-11-25T20:00:00.000000Z 25 True ok 412 2 1\n"
        "2 2026-11-26T11:59:59.999999Z 24.98 False error 412 0 0\n");
  CHECK(parsed_by_python(tmp.path() / "roof/2026-11-26/detections.jsonl") ==
        "3 2026-11-26T12:00:00.000000Z 24.98 True ok 412 0 0\n");

  // An unreadable clock is recorded as such, and still parses.
  ClockState unknown;
  unknown.error = "ntp_adjtime (read only): Operation not permitted";
  {
    DetectionsFile file(layout, "roof");
    file.write({4, -1, utc_us(2026, 11, 26, 13, 0, 0), {}, 0, {}}, 0.0, unknown);
  }
  CHECK(parsed_by_python(tmp.path() / "roof/2026-11-26/detections.jsonl") ==
        "3 2026-11-26T12:00:00.000000Z 24.98 True ok 412 0 0\n"
        "4 2026-11-26T13:00:00.000000Z None False unknown None 0 0\n");
}

TEST_CASE("detections file: a restart appends; a torn last line is cut first") {
  TempDir tmp;
  const NightLayout layout{tmp.path(), NightClock::Utc};
  const auto night = utc_us(2026, 11, 25, 21, 0, 0);
  {
    DetectionsFile file(layout, "roof");
    file.write({1, -1, night, {}, 0, {}}, 25.0, synchronised_clock());
    file.write({2, -1, night + 40000, {}, 0, {}}, 25.0, synchronised_clock());
    CHECK(file.syncs() == 1);  // the first line; the second came within the sync interval
  }
  const fs::path path = tmp.path() / "roof/2026-11-25/detections.jsonl";
  const std::string two_lines = read_file(path);
  // A power cut in the middle of a line:
  starsift::test::write_file(path, two_lines + "{\"frame\":3,\"pts_ns\":nu");
  {
    DetectionsFile file(layout, "roof");
    file.write({4, -1, night + 120000, {}, 0, {}}, 25.0, synchronised_clock());
  }
  const std::string text = read_file(path);
  CHECK(text.substr(0, two_lines.size()) == two_lines);
  CHECK(parsed_by_python(path) ==
        "1 2026-11-25T21:00:00.000000Z 25 True ok 412 0 0\n"
        "2 2026-11-25T21:00:00.040000Z 25 True ok 412 0 0\n"
        "4 2026-11-25T21:00:00.120000Z 25 True ok 412 0 0\n");
}

TEST_CASE("detections file: a night directory that cannot be made is named, then retried") {
  TempDir tmp;
  const NightLayout layout{tmp.path(), NightClock::Utc};
  starsift::test::write_file(tmp.path() / "roof", "in the way");
  DetectionsFile file(layout, "roof");
  const auto night = utc_us(2026, 11, 25, 21, 0, 0);
  try {
    file.write({1, -1, night, {}, 0, {}}, 25.0, synchronised_clock());
    FAIL("written");
  } catch (const Error& e) {
    CHECK_THAT(e.problem(), Catch::Contains("'" + (tmp.path() / "roof").string() +
                                            "' exists and is not a directory"));
  }
  CHECK(file.lines() == 0);
  fs::remove(tmp.path() / "roof");
  file.write({2, -1, night, {}, 0, {}}, 25.0, synchronised_clock());
  CHECK(file.lines() == 1);
  CHECK(fs::exists(tmp.path() / "roof/2026-11-25/detections.jsonl"));
}

TEST_CASE("detections file: a pipeline name that is not one directory is refused at once") {
  CHECK_THROWS_AS(DetectionsFile({"/tmp", NightClock::Utc}, "../up"), Error);
}
