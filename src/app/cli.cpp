// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/cli.hpp"

#include <charconv>

namespace starsift::app {

std::string_view ArgReader::next_flag() {
  std::string_view arg = args_[index_++];
  has_inline_value_ = false;
  if (arg.starts_with("--")) {
    if (const auto eq = arg.find('='); eq != std::string_view::npos) {
      inline_value_ = arg.substr(eq + 1);
      has_inline_value_ = true;
      arg = arg.substr(0, eq);
    }
  }
  flag_ = arg;
  return flag_;
}

std::string_view ArgReader::value() {
  if (has_inline_value_) {
    has_inline_value_ = false;
    return inline_value_;
  }
  if (done()) throw UsageError(std::string(flag_) + " needs a value");
  return args_[index_++];
}

std::string ArgReader::path_value() {
  const std::string_view text = value();
  if (text.empty()) throw UsageError(std::string(flag_) + " is empty", "a path");
  return std::string(text);
}

int parse_int(std::string_view flag, std::string_view text, int min, int max) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string range = std::to_string(min) + ".." + std::to_string(max);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    throw UsageError(std::string(flag) + " '" + std::string(text) + "' is not allowed",
                     "whole numbers " + range);
  }
  return value;
}

std::uint64_t parse_u64(std::string_view flag, std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw UsageError(std::string(flag) + " '" + std::string(text) + "' is not allowed",
                     "whole numbers 0..18446744073709551615");
  }
  return value;
}

Backend parse_backend_flag(std::string_view flag, std::string_view text) {
  try {
    return parse_backend(text);
  } catch (const Error&) {
    throw UsageError(std::string(flag) + " '" + std::string(text) + "' is not allowed",
                     "auto, cuda, cpu");
  }
}

}  // namespace starsift::app
