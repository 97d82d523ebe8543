// SPDX-License-Identifier: LGPL-2.1-or-later
// Reading a small text file a user names (a chain file, the daemon's config) without being led
// astray by what the path turns out to be: a directory, a FIFO that would wait for a writer, a
// device such as /dev/zero that never ends, or a file far larger than any config.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

namespace starsift {

// The text of `path` if it is a regular file of at most `max_bytes`; else nullopt and `reason`
// says why ("it is a directory", "it has 5000000 bytes", the system's error text). The kind is
// judged by stat() before opening; the file is opened without blocking and judged again by
// fstat() (should the path have become a FIFO since), and read up to one byte past the limit,
// so a file that grew since is refused too.
std::optional<std::string> read_regular_file(const std::string& path, std::size_t max_bytes,
                                             std::string& reason);

// The same, throwing what refuse(reason) returns where the file is refused.
template <class Refuse>
std::string read_regular_file_or(const std::string& path, std::size_t max_bytes,
                                 const Refuse& refuse) {
  std::string reason;
  std::optional<std::string> text = read_regular_file(path, max_bytes, reason);
  if (!text) throw refuse(reason);
  return std::move(*text);
}

}  // namespace starsift
