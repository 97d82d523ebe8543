// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/runtime/notifier.hpp"

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

#include <cstdlib>
#include <cstring>
#include <ctime>

namespace starsift::daemon {

Notifier::Notifier() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  enabled_ = socket != nullptr && socket[0] != '\0';
  std::uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
    watchdog_ = std::chrono::microseconds(usec);
  }
}

void Notifier::send(const std::string& state) {
  if (!enabled_) return;
  const int result = sd_notify(0, state.c_str());
  if (result < 0) {
    spdlog::warn("sd_notify({}): {}", state.substr(0, state.find('\n')), std::strerror(-result));
  }
}

void Notifier::ready() {
  send("READY=1");
}

void Notifier::reloading() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const auto usec = static_cast<unsigned long long>(ts.tv_sec) * 1000000ULL +
                    static_cast<unsigned long long>(ts.tv_nsec) / 1000ULL;
  send("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec));
}

void Notifier::stopping() {
  send("STOPPING=1");
}

void Notifier::status(const std::string& line) {
  send("STATUS=" + line);
}

void Notifier::watchdog() {
  send("WATCHDOG=1");
}

}  // namespace starsift::daemon
