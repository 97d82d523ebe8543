// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/outputs/clock_source.hpp"

#include <system_error>

namespace starsift::daemon {

std::string find_time_service(const std::filesystem::path& run_dir) {
  struct Marker {
    const char* file;
    const char* service;
  };
  // Checked in this order: a host runs one of them; if several left files, the first wins.
  static constexpr Marker kMarkers[] = {
      {"chrony/chronyd.pid", "chronyd"},
      {"chronyd.pid", "chronyd"},
      {"ntpd.pid", "ntpd"},
      {"systemd/timesync/synchronized", "systemd-timesyncd"},
  };
  for (const Marker& m : kMarkers) {
    std::error_code ec;
    if (std::filesystem::exists(run_dir / m.file, ec)) return m.service;
  }
  return {};
}

}  // namespace starsift::daemon
