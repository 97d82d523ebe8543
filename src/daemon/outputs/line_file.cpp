// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/outputs/line_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "pipeline/error.hpp"

namespace starsift::daemon {

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const char* what, int reason) {
  throw Error("file '" + shown_value(path.string(), kMaxShownPathBytes) + "': " + what + ": " +
              std::strerror(reason));
}

// The size the file has when everything after its last newline is cut off.
std::uint64_t complete_size(int fd, std::uint64_t size) {
  char buffer[4096];
  std::uint64_t end = size;
  while (end > 0) {
    const std::uint64_t begin = end > sizeof buffer ? end - sizeof buffer : 0;
    const std::size_t n = static_cast<std::size_t>(end - begin);
    if (::pread(fd, buffer, n, static_cast<off_t>(begin)) != static_cast<ssize_t>(n)) return size;
    for (std::size_t i = n; i > 0; --i) {
      if (buffer[i - 1] == '\n') return begin + i;
    }
    end = begin;
  }
  return 0;
}

}  // namespace

LineFile::LineFile(std::filesystem::path path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(path_, "cannot open", errno);
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int reason = errno;
    ::close(fd_);
    fail(path_, "cannot stat", reason);
  }
  bytes_ = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t complete = complete_size(fd_, bytes_);
  if (complete < bytes_) {
    if (::ftruncate(fd_, static_cast<off_t>(complete)) != 0) {
      const int reason = errno;
      ::close(fd_);
      fail(path_, "cannot cut off a torn last line", reason);
    }
    repaired_ = bytes_ - complete;
    bytes_ = complete;
  }
}

LineFile::~LineFile() {
  if (fd_ >= 0) ::close(fd_);
}

void LineFile::append(std::string_view line) {
  std::size_t done = 0;
  int reason = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      reason = n < 0 ? errno : ENOSPC;
      break;
    }
  }
  if (done == line.size()) {
    bytes_ += line.size();
    return;
  }
  // Part of the line went in: cut it off again so the file ends on a newline.
  if (done > 0 && ::ftruncate(fd_, static_cast<off_t>(bytes_)) != 0) {
    // Nothing more can be done here; reopening the file repairs it (complete_size()).
  }
  fail(path_, "cannot write", reason);
}

void LineFile::sync() {
  if (::fdatasync(fd_) != 0) fail(path_, "cannot sync", errno);
}

}  // namespace starsift::daemon
