// SPDX-License-Identifier: LGPL-2.1-or-later
// Which service keeps the host clock, told cheaply by the files each one leaves under /run.
#pragma once

#include <filesystem>
#include <string>

namespace starsift::daemon {

// "chronyd" (chrony/chronyd.pid or chronyd.pid), "ntpd" (ntpd.pid: ntp and ntpsec),
// "systemd-timesyncd" (systemd/timesync/synchronized, present once it has synchronised), or ""
// when none is there. A few stat(2) calls; `run_dir` is /run except in tests.
std::string find_time_service(const std::filesystem::path& run_dir = "/run");

}  // namespace starsift::daemon
