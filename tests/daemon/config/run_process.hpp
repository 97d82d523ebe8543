// SPDX-License-Identifier: LGPL-2.1-or-later
// Runs a program as a child process and collects what it writes, with a time limit: the tests
// of `starsift validate` run the real binary.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace starsift::test {

struct ProcessResult {
  int exit_code = -1;  // the exit status; -1 when it was killed (by a signal or the limit)
  bool timed_out = false;
  std::string out;  // everything written to stdout
  std::string err;  // everything written to stderr
};

// Runs argv[0] (a path) with `argv`; kills it after `limit`. Throws std::runtime_error when
// it cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds limit);

}  // namespace starsift::test
