// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace starsift {

namespace {

std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "it is a directory";
  if (S_ISFIFO(mode)) return "it is a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "it is a character device";
  if (S_ISBLK(mode)) return "it is a block device";
  if (S_ISSOCK(mode)) return "it is a socket";
  return "it is not a regular file";
}

// Closes the descriptor on every way out.
struct FileDescriptor {
  explicit FileDescriptor(int descriptor) : fd(descriptor) {}
  ~FileDescriptor() { ::close(fd); }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int fd;
};

}  // namespace

std::optional<std::string> read_regular_file(const std::string& path, std::size_t max_bytes,
                                             std::string& reason) {
  const auto refuse = [&](std::string why) -> std::optional<std::string> {
    reason = std::move(why);
    return std::nullopt;
  };
  // Judged by stat() before opening: opening a FIFO waits for a writer, and reading a device
  // such as /dev/zero never ends.
  struct stat before {};
  if (::stat(path.c_str(), &before) != 0) return refuse(std::strerror(errno));
  if (!S_ISREG(before.st_mode)) return refuse(file_kind(before.st_mode));
  if (static_cast<std::uintmax_t>(before.st_size) > max_bytes) {
    return refuse("it has " + std::to_string(before.st_size) + " bytes");
  }
  // O_NONBLOCK: should the path have become a FIFO since stat(), open() still returns, and
  // fstat() below refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return refuse(std::strerror(errno));
  const FileDescriptor file{fd};
  struct stat opened {};
  if (::fstat(fd, &opened) != 0) return refuse(std::strerror(errno));
  if (!S_ISREG(opened.st_mode)) return refuse(file_kind(opened.st_mode));
  // Up to one byte past the limit, so a file that grew since stat() is refused too.
  std::string text(max_bytes + 1, '\0');
  std::size_t size = 0;
  while (size < text.size()) {
    const ssize_t n = ::read(fd, text.data() + size, text.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return refuse(std::strerror(errno));
    if (n == 0) break;
    size += static_cast<std::size_t>(n);
  }
  if (size > max_bytes) return refuse("it has more than " + std::to_string(max_bytes) + " bytes");
  text.resize(size);
  return text;
}

}  // namespace starsift
