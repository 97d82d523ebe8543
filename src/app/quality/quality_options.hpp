// SPDX-License-Identifier: LGPL-2.1-or-later
// `starsift quality`'s command line.
#pragma once

#include <filesystem>
#include <span>

#include "app/quality/config.hpp"
#include "pipeline/backend.hpp"

namespace starsift::app {

struct QualityOptions {
  std::filesystem::path out_dir = "quality";
  quality::QualityConfig config;
  unsigned threads = 0;             // 0: one per hardware thread
  Backend backend = Backend::Auto;  // where the whitening stages run, resolved by the command
  int device_id = 0;                // the CUDA device for cuda and auto
};

// Parses the arguments after "quality". Throws UsageError naming the flag and what is
// allowed. Sets `help` and returns defaults when --help is given.
QualityOptions parse_quality_options(std::span<char* const> args, bool& help);

void print_quality_help();

}  // namespace starsift::app
