// SPDX-License-Identifier: LGPL-2.1-or-later
// Command-line parsing shared by the subcommands: flags with values, ranges, clear errors.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "pipeline/backend.hpp"
#include "pipeline/error.hpp"

namespace starsift::app {

// A mistake on the command line: the tool prints it with a hint to --help and exits 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

// Walks the arguments of a subcommand. Accepts "--flag value" and "--flag=value".
class ArgReader {
 public:
  explicit ArgReader(std::span<char* const> args) : args_(args) {}

  bool done() const noexcept { return index_ >= args_.size(); }

  // The next flag name (e.g. "--size"); a value given as "--size=5" is kept for value().
  std::string_view next_flag();

  // The value of the flag just read; throws UsageError when it is missing.
  std::string_view value();
  // The same, for a flag naming a path: also refuses an empty value.
  std::string path_value();

 private:
  std::span<char* const> args_;
  std::size_t index_ = 0;
  std::string_view flag_;
  std::string_view inline_value_;
  bool has_inline_value_ = false;
};

// Parses an integer in [min, max]; throws UsageError naming the flag, the text and the range.
int parse_int(std::string_view flag, std::string_view text, int min, int max);

// Parses an unsigned 64-bit integer (a seed); throws UsageError naming the flag.
std::uint64_t parse_u64(std::string_view flag, std::string_view text);

// The largest CUDA device id a --device-id flag accepts.
inline constexpr int kMaxDeviceId = 1023;

// Parses a --backend value (auto, cuda, cpu); throws UsageError naming the flag and the text.
Backend parse_backend_flag(std::string_view flag, std::string_view text);

}  // namespace starsift::app
