// SPDX-License-Identifier: LGPL-2.1-or-later
// A file of whole lines, only ever appended to. Each line reaches the file whole or not at all
// (what a failed write(2), e.g. on a full disk, stored of it is cut off again), so neither a
// failed write nor a crash of the process leaves half a line: once append() returns, the line
// is the kernel's. Only a power cut can lose what the kernel had not yet stored (sync() bounds
// that), and it can leave a torn last line: opening the file again cuts such a tail back to the
// last newline, so the file holds complete lines only.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

namespace starsift::daemon {

class LineFile {
 public:
  // Opens `path` for appending, creating it (mode 0644) when missing. Throws Error naming the
  // file and the reason.
  explicit LineFile(std::filesystem::path path);
  ~LineFile();  // closes without syncing: call sync() first where it matters
  LineFile(const LineFile&) = delete;
  LineFile& operator=(const LineFile&) = delete;

  // Appends `line`, which ends with '\n'. Throws Error naming the file and the reason; the file
  // is then as it was before.
  void append(std::string_view line);
  // fdatasync(2): what was appended is on the disk. Throws Error naming the file.
  void sync();

  const std::filesystem::path& path() const noexcept { return path_; }
  std::uint64_t bytes() const noexcept { return bytes_; }
  // Bytes of a torn last line cut off when the file was opened (0 almost always).
  std::uint64_t repaired_bytes() const noexcept { return repaired_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::uint64_t bytes_ = 0;
  std::uint64_t repaired_ = 0;
};

}  // namespace starsift::daemon
