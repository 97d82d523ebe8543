// SPDX-License-Identifier: LGPL-2.1-or-later
// `starsift validate`, the real binary run as a process: what it prints and its exit status
// for valid, invalid and unreadable files and for usage mistakes.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "config_support.hpp"
#include "run_process.hpp"

using namespace starsift::daemon;
using namespace starsift::daemon::test;
using starsift::test::ProcessResult;
using starsift::test::run_process;

namespace {

// The binary's path: $STARSIFT_CLI, set by CTest to $<TARGET_FILE:starsift>.
std::string starsift_binary() {
  const char* path = std::getenv("STARSIFT_CLI");
  REQUIRE(path != nullptr);
  REQUIRE(std::filesystem::is_regular_file(path));
  return path;
}

ProcessResult run_starsift(std::vector<std::string> args) {
  args.insert(args.begin(), starsift_binary());
  const ProcessResult result = run_process(args, std::chrono::seconds(30));
  INFO("stdout:\n" << result.out << "stderr:\n" << result.err);
  REQUIRE_FALSE(result.timed_out);
  return result;
}

}  // namespace

TEST_CASE("starsift validate: a valid file", "[daemon][config][validate]") {
  TempDir dir;
  const auto good = dir.write("good.yaml", kSkyPipeline +
                                               "  - name: north\n"
                                               "    source: {aravis: }\n"
                                               "    chain: [{whiten: }]\n");
  const ProcessResult result = run_starsift({"validate", good.string()});
  CHECK(result.exit_code == 0);
  CHECK(result.out == good.string() + ": ok (2 pipelines: sky, north)\n");
  CHECK(result.err.empty());
}

TEST_CASE("starsift validate: every problem, one per line, exit status 2",
          "[daemon][config][validate]") {
  TempDir dir;
  const auto bad = dir.write("bad.yaml",
                             "log: {level: loud}\n"
                             "pipelines:\n"
                             "  - name: sky\n"
                             "    source: {sky: {fwhm: 0.1}}\n"
                             "    chain:\n"
                             "      - median: {size: 4}\n");
  const ProcessResult result = run_starsift({"validate", bad.string()});
  CHECK(result.exit_code == 2);
  CHECK(result.out.empty());
  const std::string file = bad.string();
  CHECK(result.err ==
        file +
            ":1:14: log.level: unknown level 'loud'; allowed: trace, debug, info, warn, "
            "error, critical\n" +
            file + ":4:26: pipelines[0].source.sky.fwhm: 0.1 is not allowed; allowed: 0.5..20\n" +
            file +
            ":6:24: pipelines[0].chain[0].median.size: 4 is not allowed; allowed: odd "
            "values 3..31\n");
}

TEST_CASE("starsift validate: several files, one bad, one unreadable",
          "[daemon][config][validate]") {
  TempDir dir;
  const auto good = dir.write("good.yaml", kSkyPipeline);
  const auto bad = dir.write("bad.yaml", "pipelines: []\n");
  const auto missing = dir.path() / "missing.yaml";
  const ProcessResult result =
      run_starsift({"validate", good.string(), bad.string(), missing.string()});
  CHECK(result.exit_code == 2);
  CHECK(result.out == good.string() + ": ok (1 pipeline: sky)\n");
  CHECK(result.err == bad.string() +
                          ":1:12: pipelines: a config needs at least one pipeline; allowed: a "
                          "sequence of 1 to 64 pipelines, each a map with name, source and "
                          "chain\n" +
                          missing.string() +
                          ": cannot read the config file: No such file or directory; allowed: a "
                          "regular file of at most 1048576 bytes (1 MiB)\n");
}

TEST_CASE("starsift validate: the shipped demo", "[daemon][config][validate]") {
  const std::string demo = std::string(STARSIFT_SOURCE_DIR) + "/config/demo.yaml";
  const ProcessResult result = run_starsift({"validate", demo});
  CHECK(result.exit_code == 0);
  CHECK(result.out == demo + ": ok (1 pipeline: sky)\n");
}

TEST_CASE("starsift validate: usage", "[daemon][config][validate]") {
  SECTION("no file: a usage error, as the tool's others") {
    const ProcessResult result = run_starsift({"validate"});
    CHECK(result.exit_code == 2);
    CHECK_THAT(result.err, Catch::StartsWith("starsift validate: no config file given"));
    CHECK_THAT(result.err, Catch::Contains("Run 'starsift validate --help'"));
  }
  SECTION("an unknown option") {
    const ProcessResult result = run_starsift({"validate", "--strict", "a.yaml"});
    CHECK(result.exit_code == 2);
    CHECK_THAT(result.err, Catch::StartsWith("starsift validate: unknown option '--strict'"));
  }
  SECTION("--help") {
    const ProcessResult result = run_starsift({"validate", "--help"});
    CHECK(result.exit_code == 0);
    CHECK_THAT(result.out, Catch::StartsWith("usage: starsift validate FILE..."));
    CHECK_THAT(result.out, Catch::Contains("FILE:LINE:COLUMN: KEY: PROBLEM"));
  }
  SECTION("listed in starsift --help") {
    const ProcessResult result = run_starsift({"--help"});
    CHECK(result.exit_code == 0);
    CHECK_THAT(result.out, Catch::Contains("\n  validate   check starsiftd config files"));
  }
  SECTION("a file named after --") {
    TempDir dir;
    const auto odd = dir.write("--odd.yaml", kSkyPipeline);
    const ProcessResult result = run_starsift({"validate", "--", odd.string()});
    CHECK(result.exit_code == 0);
  }
}
