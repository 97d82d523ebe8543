// `starsift quality`'s command line.
#pragma once

#include <filesystem>
#include <span>

#include "app/quality/config.hpp"

namespace starsift::app {

struct QualityOptions {
  std::filesystem::path out_dir = "quality";
  quality::QualityConfig config;
  unsigned threads = 0;  // 0: one per hardware thread
};

// Parses the arguments after "quality". Throws UsageError naming the flag and what is
// allowed. Sets `help` and returns defaults when --help is given.
QualityOptions parse_quality_options(std::span<char* const> args, bool& help);

void print_quality_help();

}  // namespace starsift::app
