// SPDX-License-Identifier: LGPL-2.1-or-later
// `starsift sky`: frames of the synthetic sky (src/pipeline/sky) and their truth, to files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

namespace starsift::app {

enum class SkyFileFormat {
  Png,  // 16-bit greyscale PNG per frame, the ADU exactly
  Raw,  // little-endian uint16 per pixel, rows packed, no header
};

struct SkyCommandOptions {
  std::filesystem::path out_dir = "sky";
  int frames = 10;
  int width = 1024;
  int height = 1024;
  std::uint64_t seed = 1;
  int movers = 8;
  int bit_depth = 12;
  SkyFileFormat format = SkyFileFormat::Png;
};

// Parses the arguments after "sky". Throws UsageError naming the flag and the allowed
// values. Sets `help` and returns defaults when --help is given.
SkyCommandOptions parse_sky_options(std::span<char* const> args, bool& help);

void print_sky_help();

// Writes the frames, OUT/truth.jsonl and OUT/preview.png; returns the exit status. Throws
// Error on failures (a directory or file that cannot be written).
int run_sky_command(const SkyCommandOptions& options);

}  // namespace starsift::app
