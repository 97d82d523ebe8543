// SPDX-License-Identifier: LGPL-2.1-or-later
// systemd's notify protocol (sd_notify(3), libsystemd): what a Type=notify service tells the
// service manager. Without NOTIFY_SOCKET (run by hand) every call does nothing.
//
// systemd 252 (Debian 12) has no Type=notify-reload; a reload is announced by hand, as
// sd_notify(3) describes: RELOADING=1 with MONOTONIC_USEC=<CLOCK_MONOTONIC now>, then READY=1
// when it is done.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace starsift::daemon {

class Notifier {
 public:
  Notifier();

  bool enabled() const noexcept { return enabled_; }
  void ready();                          // READY=1
  void reloading();                      // RELOADING=1, MONOTONIC_USEC=...
  void stopping();                       // STOPPING=1
  void status(const std::string& line);  // STATUS=<line>
  void watchdog();                       // WATCHDOG=1
  // The interval at which WATCHDOG=1 must come (WATCHDOG_USEC, for this process); nothing
  // when the watchdog is off.
  std::optional<std::chrono::microseconds> watchdog_interval() const noexcept { return watchdog_; }

 private:
  void send(const std::string& state);
  bool enabled_ = false;
  std::optional<std::chrono::microseconds> watchdog_;
};

}  // namespace starsift::daemon
