// SPDX-License-Identifier: LGPL-2.1-or-later
// The disk guard on real directories: which nights go, in which order, what is reported and
// logged, and what is never touched. Free space is injected where a test needs it to fall and
// rise on cue; the last cases use the real statvfs.
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>

#include "daemon/outputs/disk_guard.hpp"
#include "outputs_support.hpp"
#include "pipeline/error.hpp"

using namespace starsift::daemon;
using starsift::test::TempDir;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kNightBytes = 100000;

void make_night(const fs::path& state, const std::string& pipeline, const std::string& night,
                std::uint64_t bytes = kNightBytes) {
  const fs::path dir = state / pipeline / night;
  fs::create_directories(dir / "fits");
  std::string data(bytes, 'x');  // written out: a file of this many real bytes, not a hole
  starsift::test::write_file(dir / "detections.jsonl", data);
}

// Bytes the files under `dir` hold (their sizes, not the guard's own measure).
std::uint64_t file_bytes(const fs::path& dir) {
  std::uint64_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && !e.is_symlink()) total += e.file_size();
  }
  return total;
}

// du(1)'s allocated bytes: an independent measure of what removing `dir` frees.
std::uint64_t du_bytes(const fs::path& dir) {
  const auto r = starsift::test::run_command("du -s -B1 " + starsift::test::shell_quote(dir));
  REQUIRE(r.exit_code == 0);
  return std::stoull(r.output);
}

// A disk of `capacity` bytes that holds only the files under `state`.
DiskGuard::FreeSpace fake_disk(std::uint64_t capacity) {
  return [capacity](const fs::path& state) { return capacity - file_bytes(state); };
}

// The state directory of most cases: two pipelines, nights 20-24 November (west from the 21st),
// and things the guard must leave alone.
void make_state(const fs::path& state, const fs::path& outside) {
  for (const char* night : {"2026-11-20", "2026-11-21", "2026-11-22", "2026-11-23", "2026-11-24"}) {
    make_night(state, "east", night);
    if (std::string(night) != "2026-11-20") make_night(state, "west", night);
  }
  starsift::test::write_file(state / "east" / "notes.txt", "kept");
  fs::create_directories(state / "east" / "2026-13-01");    // not a date
  fs::create_directories(state / ".trash" / "2026-11-01");  // hidden: not a pipeline
  make_night(outside, "elsewhere", "2026-11-01");
  fs::create_directory_symlink(outside / "elsewhere", state / "linked");  // never followed
  fs::create_directory_symlink(outside / "elsewhere" / "2026-11-01", state / "west" / "2026-11-02");
}

// Captures what spdlog writes while it lives.
class LogCapture {
 public:
  LogCapture() : old_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text_);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
  }
  ~LogCapture() { spdlog::set_default_logger(old_); }
  std::string text() const { return text_.str(); }

 private:
  std::shared_ptr<spdlog::logger> old_;
  std::ostringstream text_;
};

}  // namespace

TEST_CASE("disk guard: nights listed oldest first across pipelines, nothing else") {
  TempDir tmp;
  make_state(tmp.path() / "state", tmp.path() / "outside");
  const auto nights = list_nights(tmp.path() / "state");
  std::vector<std::string> names;
  for (const auto& n : nights) names.push_back(n.pipeline + "/" + n.night);
  CHECK(names == std::vector<std::string>{"east/2026-11-20", "east/2026-11-21", "west/2026-11-21",
                                          "east/2026-11-22", "west/2026-11-22", "east/2026-11-23",
                                          "west/2026-11-23", "east/2026-11-24", "west/2026-11-24"});
  CHECK(list_nights(tmp.path() / "missing").empty());
}

TEST_CASE("disk guard: below min-free the oldest nights go until there is enough") {
  TempDir tmp;
  const fs::path state = tmp.path() / "state";
  make_state(state, tmp.path() / "outside");
  // 9 nights of 100 kB plus "kept" on a 1 MB disk: 99996 bytes free; 350 kB asked for needs
  // three nights gone.
  const std::uint64_t capacity = 1000000;
  const std::uint64_t before_20 = du_bytes(state / "east/2026-11-20");
  const std::uint64_t before_21 = du_bytes(state / "west/2026-11-21");
  DiskGuard guard(state, {.min_free_bytes = 350000, .keep_nights = 0}, fake_disk(capacity));
  LogCapture log;
  const DiskGuardReport report = guard.enforce("2026-11-24");

  REQUIRE(report.removed.size() == 3);
  CHECK(report.removed[0].path == state / "east/2026-11-20");
  CHECK(report.removed[1].path == state / "east/2026-11-21");
  CHECK(report.removed[2].path == state / "west/2026-11-21");
  CHECK(report.removed[2].pipeline == "west");
  CHECK(report.removed[2].night == "2026-11-21");
  for (const auto& r : report.removed) CHECK(r.reason == "min-free");
  CHECK(report.removed[0].bytes == before_20);
  CHECK(report.removed[2].bytes == before_21);
  CHECK(report.free_bytes == capacity - 6 * kNightBytes - 4);
  CHECK_FALSE(report.short_of_space);
  CHECK(report.failures.empty());

  CHECK_FALSE(fs::exists(state / "east/2026-11-20"));
  CHECK(fs::exists(state / "east/2026-11-22"));
  CHECK(fs::exists(state / "east/notes.txt"));
  CHECK(fs::exists(state / "east/2026-13-01"));
  CHECK(fs::exists(state / ".trash/2026-11-01"));
  CHECK(fs::exists(tmp.path() / "outside/elsewhere/2026-11-01/detections.jsonl"));
  CHECK(fs::is_symlink(state / "west/2026-11-02"));

  // Each removal is logged with its path and bytes.
  const std::string text = log.text();
  CHECK_THAT(text, Catch::Contains("removed night " + (state / "east/2026-11-20").string() + " (" +
                                   std::to_string(before_20) + " bytes, min-free"));
  CHECK_THAT(text, Catch::Contains("removed night " + (state / "west/2026-11-21").string()));

  // Enough space now: a second pass removes nothing.
  CHECK(guard.enforce("2026-11-24").removed.empty());
}

TEST_CASE("disk guard: more than keep-nights nights, the oldest names go in every pipeline") {
  TempDir tmp;
  const fs::path state = tmp.path() / "state";
  make_state(state, tmp.path() / "outside");
  DiskGuard guard(state, {.min_free_bytes = 0, .keep_nights = 2}, fake_disk(1u << 30));
  const DiskGuardReport report = guard.enforce("2026-11-24");
  std::vector<std::string> removed;
  for (const auto& r : report.removed) {
    removed.push_back(r.pipeline + "/" + r.night);
    CHECK(r.reason == "keep-nights");
  }
  CHECK(removed == std::vector<std::string>{"east/2026-11-20", "east/2026-11-21", "west/2026-11-21",
                                            "east/2026-11-22", "west/2026-11-22"});
  std::vector<std::string> left;
  for (const auto& n : list_nights(state)) left.push_back(n.pipeline + "/" + n.night);
  CHECK(left == std::vector<std::string>{"east/2026-11-23", "west/2026-11-23", "east/2026-11-24",
                                         "west/2026-11-24"});

  // With no night being written, the newest may go too.
  DiskGuard one(state, {.min_free_bytes = 0, .keep_nights = 1}, fake_disk(1u << 30));
  CHECK(one.enforce("").removed.size() == 2);
  left.clear();
  for (const auto& n : list_nights(state)) left.push_back(n.pipeline + "/" + n.night);
  CHECK(left == std::vector<std::string>{"east/2026-11-24", "west/2026-11-24"});
}

TEST_CASE("disk guard: the night being written and later ones never go") {
  TempDir tmp;
  const fs::path state = tmp.path() / "state";
  make_state(state, tmp.path() / "outside");
  // No disk could satisfy this: everything older than the night being written goes, no more.
  DiskGuard guard(state, {.min_free_bytes = 1u << 30, .keep_nights = 1}, fake_disk(1000000));
  LogCapture log;
  const DiskGuardReport report = guard.enforce("2026-11-22");
  CHECK(report.removed.size() == 3);  // east 20, east 21, west 21
  CHECK(report.short_of_space);
  for (const char* night : {"east/2026-11-22", "west/2026-11-22", "east/2026-11-24"}) {
    CHECK(fs::exists(state / night));
  }
  CHECK_THAT(log.text(), Catch::Contains("below min-free 1073741824, and nothing more may go"));

  // Still short: said once, not at every pass.
  const DiskGuardReport again = guard.enforce("2026-11-22");
  CHECK(again.removed.empty());
  CHECK(again.short_of_space);
  const std::string text = log.text();
  CHECK(text.find("nothing more may go") == text.rfind("nothing more may go"));
}

TEST_CASE("disk guard: real free space from statvfs") {
  TempDir tmp;
  const fs::path state = tmp.path() / "state";
  make_state(state, tmp.path() / "outside");
  const std::uint64_t free = available_bytes(state);
  CHECK(free > 0);

  // 1 byte free is asked for: there is more, nothing goes.
  DiskGuard easy(state, {.min_free_bytes = 1, .keep_nights = 0});
  CHECK(easy.enforce("2026-11-24").removed.empty());
  CHECK(list_nights(state).size() == 9);

  // More than any disk has: every night before the one being written goes, for real.
  DiskGuard hard(state,
                 {.min_free_bytes = std::numeric_limits<std::uint64_t>::max(), .keep_nights = 0});
  const DiskGuardReport report = hard.enforce("2026-11-24");
  CHECK(report.removed.size() == 7);
  CHECK(report.short_of_space);
  for (const auto& r : report.removed) CHECK(r.bytes >= kNightBytes);
  CHECK(list_nights(state).size() == 2);
  CHECK(fs::exists(state / "east/notes.txt"));
}

TEST_CASE("disk guard: a state directory that cannot be read is an error naming it") {
  try {
    available_bytes("/nonexistent/state");
    FAIL("read");
  } catch (const starsift::Error& e) {
    CHECK(e.problem() ==
          "disk guard: cannot read the free space of '/nonexistent/state': No such file or "
          "directory");
  }
}
