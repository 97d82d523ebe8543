// SPDX-License-Identifier: LGPL-2.1-or-later
// The one error type of starsift: every message says what is wrong and what is allowed.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace starsift {

class Error : public std::runtime_error {
 public:
  // `problem`: what is wrong, naming the key/property and the value received.
  // `allowed`: what would have been accepted (a range, a list); may be empty for
  // failures that have no "allowed" side (a GPU fault, a file that cannot be read).
  Error(std::string problem, std::string allowed = {});

  const std::string& problem() const noexcept { return problem_; }
  const std::string& allowed() const noexcept { return allowed_; }

 private:
  std::string problem_;
  std::string allowed_;
};

// The most of a value that a message repeats: a refused property or YAML value may be
// megabytes long, and a message that echoes it whole is unreadable and as large.
inline constexpr std::size_t kMaxShownValueBytes = 64;
// File paths are shown whole up to PATH_MAX: only a longer one, which no file has, is cut.
inline constexpr std::size_t kMaxShownPathBytes = 4096;

// `value` as messages show it: whole when it has at most `max_bytes` bytes; otherwise its
// first `max_bytes` bytes (fewer when that would split a UTF-8 character), then
// "… (N bytes)" with N its full size. Every message that echoes a value takes it from here.
std::string shown_value(std::string_view value, std::size_t max_bytes = kMaxShownValueBytes);

}  // namespace starsift
