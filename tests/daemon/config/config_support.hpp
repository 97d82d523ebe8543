// SPDX-License-Identifier: LGPL-2.1-or-later
// Shared by the config tests: parsing that must fail, the problems it reports, temporary
// directories.
#pragma once

#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "daemon/config/config_loader.hpp"

namespace starsift::daemon::test {

// The origin the tests' texts are parsed as.
inline constexpr const char* kOrigin = "cfg.yaml";

// A pipeline that is valid as it is, for tests about the rest of the file.
inline const std::string kSkyPipeline =
    "pipelines:\n"
    "  - name: sky\n"
    "    source: {sky: }\n"
    "    chain: [{whiten: }, {detect: }]\n";

// Parses `yaml`, which must be refused, and returns its problems.
inline std::vector<ConfigProblem> problems_of(const std::string& yaml) {
  INFO("YAML:\n" << yaml);
  try {
    const DaemonConfig config = parse_daemon_config(yaml, kOrigin);
    FAIL("accepted, with " << config.pipelines.size() << " pipeline(s)");
  } catch (const ConfigErrors& e) {
    return e.problems();
  }
  return {};
}

// What one problem must say.
struct Expected {
  std::string where;    // "cfg.yaml:3:13"
  std::string key;      // "pipelines[0].depth"; empty for the document
  std::string says;     // part of the problem
  std::string allowed;  // part of the allowed text
};

inline void check_problem(const ConfigProblem& problem, const Expected& expected) {
  INFO("problem: " << problem.str());
  CHECK(problem.where.str() == expected.where);
  CHECK(problem.key == expected.key);
  CHECK_THAT(problem.problem, Catch::Contains(expected.says));
  CHECK_THAT(problem.allowed, Catch::Contains(expected.allowed));
  // The line as printed: place, key, problem, allowed.
  const std::string printed = problem.str();
  CHECK_THAT(printed, Catch::StartsWith(expected.where + ": " +
                                        (expected.key.empty() ? "" : expected.key + ": ")));
  if (!expected.allowed.empty()) CHECK_THAT(printed, Catch::Contains("; allowed: "));
}

// `yaml` must be refused with exactly one problem, `expected`.
inline void require_refused(const std::string& yaml, const Expected& expected) {
  INFO("YAML:\n" << yaml);
  const std::vector<ConfigProblem> problems = problems_of(yaml);
  for (const ConfigProblem& problem : problems) UNSCOPED_INFO("got: " << problem.str());
  REQUIRE(problems.size() == 1);
  check_problem(problems.front(), expected);
}

// A fresh directory, removed with what it holds.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "starsift-config-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const noexcept { return path_; }

  // Writes `text` to the file `name` in this directory and returns its path.
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const std::filesystem::path file = path_ / name;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary);
    out << text;
    REQUIRE(out.good());
    return file;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace starsift::daemon::test
