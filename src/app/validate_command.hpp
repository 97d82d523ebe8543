// SPDX-License-Identifier: LGPL-2.1-or-later
// `starsift validate FILE...`: checks starsiftd config files as the daemon would at start,
// without starting anything.
#pragma once

#include <span>

namespace starsift::app {

// Exit statuses: every file valid, or some file refused (or unreadable).
inline constexpr int kValidateOk = 0;
inline constexpr int kValidateRefused = 2;

// For each file: "FILE: ok (N pipelines: a, b)" on stdout, or each problem on stderr as
// "FILE:LINE:COLUMN: key: problem; allowed: ...". Returns kValidateOk or kValidateRefused.
// Throws UsageError for no files or an unknown option; prints the help for -h/--help.
int run_validate_command(std::span<char* const> args);

void print_validate_help();

}  // namespace starsift::app
