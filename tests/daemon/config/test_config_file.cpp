// SPDX-License-Identifier: LGPL-2.1-or-later
// Reading a config file: only a regular file of at most 1 MiB, refused before it is opened
// where opening could hang (a FIFO) or never end (a device).
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "config_support.hpp"

using namespace starsift::daemon;
using namespace starsift::daemon::test;

namespace {

// The one problem of a file that cannot be read.
void require_unreadable(const std::filesystem::path& path, const std::string& reason) {
  try {
    load_daemon_config(path);
    FAIL("accepted " << path);
  } catch (const ConfigErrors& e) {
    REQUIRE(e.problems().size() == 1);
    const ConfigProblem& problem = e.problems()[0];
    CHECK(problem.where.str() == path.string());
    CHECK(problem.key.empty());
    CHECK(problem.problem == "cannot read the config file: " + reason);
    CHECK(problem.allowed == "a regular file of at most 1048576 bytes (1 MiB)");
  }
}

}  // namespace

TEST_CASE("a config file is read whole, its problems placed in it", "[daemon][config][file]") {
  TempDir dir;
  const auto good = dir.write("good.yaml", kSkyPipeline);
  CHECK(load_daemon_config(good).pipelines.at(0).name == "sky");

  const auto bad = dir.write("bad.yaml", "log: {level: loud}\n" + kSkyPipeline);
  try {
    load_daemon_config(bad);
    FAIL("accepted");
  } catch (const ConfigErrors& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].where.str() == bad.string() + ":1:14");
  }
}

TEST_CASE("what is not a readable regular file of at most 1 MiB is refused",
          "[daemon][config][file]") {
  TempDir dir;
  SECTION("a missing file") {
    require_unreadable(dir.path() / "none.yaml", "No such file or directory");
  }
  SECTION("a directory") {
    require_unreadable(dir.path(), "it is a directory");
  }
  SECTION("a FIFO, without waiting for a writer") {
    const auto fifo = dir.path() / "fifo.yaml";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    require_unreadable(fifo, "it is a FIFO (named pipe)");
  }
  SECTION("a device that never ends") {
    require_unreadable("/dev/zero", "it is a character device");
  }
  SECTION("a file over 1 MiB") {
    std::string big = kSkyPipeline;
    big += "# " + std::string(kMaxConfigFileBytes, 'x') + "\n";
    const auto path = dir.write("big.yaml", big);
    require_unreadable(path, "it has " + std::to_string(big.size()) + " bytes");
  }
  SECTION("a file of exactly 1 MiB is read") {
    std::string text = kSkyPipeline + "# ";
    text += std::string(kMaxConfigFileBytes - text.size() - 1, 'x') + "\n";
    REQUIRE(text.size() == kMaxConfigFileBytes);
    CHECK(load_daemon_config(dir.write("full.yaml", text)).pipelines.size() == 1);
  }
  SECTION("a file without read permission") {
    const auto path = dir.write("secret.yaml", kSkyPipeline);
    std::filesystem::permissions(path, std::filesystem::perms::none);
    if (::geteuid() == 0) {
      WARN("running as root, which reads any file: permissions not checked");
    } else {
      require_unreadable(path, "Permission denied");
    }
  }
}
