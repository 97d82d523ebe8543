// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/outputs/clock_state.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

#include "daemon/outputs/clock_source.hpp"
#include "daemon/outputs/json_text.hpp"

namespace starsift::daemon {

namespace {

template <class Number>
void put_number(std::string& s, Number v) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, v).ptr;
  s.append(buffer, end);
}

}  // namespace

const char* kernel_state_name(int kernel_state) noexcept {
  switch (kernel_state) {
    case TIME_OK:
      return "ok";
    case TIME_INS:
      return "leap-insert";
    case TIME_DEL:
      return "leap-delete";
    case TIME_OOP:
      return "leap-in-progress";
    case TIME_WAIT:
      return "leap-wait";
    case TIME_ERROR:
      return "error";
    default:
      return "unknown";
  }
}

ClockState clock_state_from_timex(const struct timex& tx, int kernel_state) {
  ClockState s;
  s.readable = true;
  s.kernel_state = kernel_state;
  s.status = tx.status;
  s.synchronised = (tx.status & STA_UNSYNC) == 0 && kernel_state != TIME_ERROR;
  s.est_error_us = tx.esterror;
  s.max_error_us = tx.maxerror;
  // STA_NANO: the kernel speaks nanoseconds; otherwise microseconds.
  s.offset_ns = (tx.status & STA_NANO) != 0 ? static_cast<std::int64_t>(tx.offset)
                                            : static_cast<std::int64_t>(tx.offset) * 1000;
  // ppm with a 16-bit binary fraction; kept to 0.001 ppm, which is all it is good for.
  s.frequency_ppm = std::round(static_cast<double>(tx.freq) / 65536.0 * 1000.0) / 1000.0;
  s.pps = (tx.status & STA_PPSSIGNAL) != 0 && (tx.status & STA_PPSTIME) != 0;
  if (s.pps) s.source = "pps";
  return s;
}

ClockState read_clock_state(const std::filesystem::path& run_dir) {
  struct timex tx {};
  tx.modes = 0;  // read only: nothing is changed, no privilege needed
  const int result = ::ntp_adjtime(&tx);
  if (result < 0) {
    const int reason = errno;
    ClockState s;
    s.error = std::string("ntp_adjtime (read only): ") + std::strerror(reason);
    if (reason == EPERM) {
      s.error += " (systemd's ProtectClock=yes denies even this read; leave it off in the unit)";
    }
    return s;
  }
  ClockState s = clock_state_from_timex(tx, result);
  if (s.source.empty()) s.source = find_time_service(run_dir);
  return s;
}

void append_clock_json(std::string& s, const ClockState& c) {
  s += "{\"synchronised\":";
  s += c.synchronised ? "true" : "false";
  s += ",\"state\":\"";
  s += c.readable ? kernel_state_name(c.kernel_state) : "unknown";
  s += '"';
  if (!c.readable) {
    s += ",\"error\":";
    append_json_string(s, c.error);
    s += '}';
    return;
  }
  s += ",\"est_error_us\":";
  put_number(s, c.est_error_us);
  s += ",\"max_error_us\":";
  put_number(s, c.max_error_us);
  s += ",\"offset_ns\":";
  put_number(s, c.offset_ns);
  s += ",\"freq_ppm\":";
  put_number(s, c.frequency_ppm);
  s += ",\"pps\":";
  s += c.pps ? "true" : "false";
  s += ",\"source\":";
  append_json_string(s, c.source);
  s += '}';
}

std::string clock_json(const ClockState& state) {
  std::string s;
  append_clock_json(s, state);
  return s;
}

}  // namespace starsift::daemon
