// SPDX-License-Identifier: LGPL-2.1-or-later
// `starsift demo`: a synthetic noisy star field, median-filtered, with numbers and a picture.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

#include "pipeline/backend.hpp"
#include "pipeline/border.hpp"

namespace starsift::app {

struct DemoOptions {
  std::filesystem::path out_dir = "out";
  int size = 5;  // median window side
  BorderMode border = BorderMode::Reflect101;
  int frames = 8;
  int width = 1024;
  int height = 1024;
  Backend backend = Backend::Auto;
  int device_id = 0;
  std::uint64_t seed = 1;
};

// Parses the demo's arguments (everything after "demo"). Throws UsageError naming the flag
// and the allowed values. Sets `help` and returns defaults when --help is given.
DemoOptions parse_demo_options(std::span<char* const> args, bool& help);

void print_demo_help();

// Runs the demo; returns the process exit status. Throws Error on failures.
int run_demo(const DemoOptions& options);

}  // namespace starsift::app
