// SPDX-License-Identifier: LGPL-2.1-or-later
#include "support/fake_camera_network.hpp"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace starsift::test {

namespace {

bool write_file(const char* path, const std::string& text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

// Unprivileged: a user namespace in which this user is root, mapped to itself, and in it the
// network namespace.
bool unshare_as_user() {
  const uid_t uid = ::getuid();
  const gid_t gid = ::getgid();
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) return false;
  return write_file("/proc/self/setgroups", "deny") &&
         write_file("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") &&
         write_file("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1");
}

bool loopback_up() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  bool up = ::ioctl(fd, SIOCGIFFLAGS, &request) == 0;
  if (up) {
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
    up = ::ioctl(fd, SIOCSIFFLAGS, &request) == 0;
  }
  ::close(fd);
  return up;
}

}  // namespace

std::string isolate_loopback() {
  if (::unshare(CLONE_NEWNET) != 0) {
    const int error = errno;
    if (!unshare_as_user()) {
      return std::string("the host's loopback, shared (no network namespace of its own: ") +
             std::strerror(error) + ")";
    }
  }
  if (!loopback_up()) {
    return std::string("a private network namespace whose loopback would not come up: ") +
           std::strerror(errno);
  }
  return "a private network namespace: its own loopback, 127.0.0.1";
}

}  // namespace starsift::test
