// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/validate_command.hpp"

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "app/cli.hpp"
#include "daemon/config/config_loader.hpp"

namespace starsift::app {

namespace {

// "ok (2 pipelines: sky, north)"
std::string summary(const daemon::DaemonConfig& config) {
  const std::size_t count = config.pipelines.size();
  std::string text = "ok (" + std::to_string(count) + (count == 1 ? " pipeline: " : " pipelines: ");
  for (std::size_t i = 0; i < count; ++i) {
    if (i > 0) text += ", ";
    text += config.pipelines[i].name;
  }
  return text + ")";
}

// Checks one file and prints what it found; true when the file is valid.
bool validate_file(const std::string& path) {
  try {
    const daemon::DaemonConfig config = daemon::load_daemon_config(path);
    std::printf("%s: %s\n", path.c_str(), summary(config).c_str());
    return true;
  } catch (const daemon::ConfigErrors& e) {
    for (const daemon::ConfigProblem& problem : e.problems()) {
      std::fprintf(stderr, "%s\n", problem.str().c_str());
    }
  }
  return false;
}

}  // namespace

void print_validate_help() {
  std::printf(
      "usage: starsift validate FILE...\n"
      "\n"
      "Checks starsiftd config files (config/README.md, \"starsiftd\") as the daemon does at\n"
      "start, without starting anything: every problem in every file is reported.\n"
      "\n"
      "For each FILE, on stdout when it is valid:\n"
      "  FILE: ok (N pipelines: NAME, NAME)\n"
      "and otherwise each problem on stderr, in the order of the file:\n"
      "  FILE:LINE:COLUMN: KEY: PROBLEM; allowed: WHAT IS ALLOWED\n"
      "\n"
      "Exit status: 0 when every file is valid, 2 when any is not (or cannot be read).\n");
}

int run_validate_command(std::span<char* const> args) {
  std::vector<std::string> files;
  bool options_done = false;
  for (const char* arg : args) {
    const std::string_view text = arg;
    if (!options_done && (text == "-h" || text == "--help")) {
      print_validate_help();
      return kValidateOk;
    }
    if (!options_done && text == "--") {
      options_done = true;
    } else if (!options_done && text.starts_with("-") && text != "-") {
      throw UsageError("unknown option '" + std::string(text) + "'",
                       "FILE... (a config file path)");
    } else {
      files.emplace_back(text);
    }
  }
  if (files.empty()) throw UsageError("no config file given", "one or more config file paths");
  bool all_valid = true;
  for (const std::string& file : files) all_valid = validate_file(file) && all_valid;
  return all_valid ? kValidateOk : kValidateRefused;
}

}  // namespace starsift::app
