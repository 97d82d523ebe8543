// SPDX-License-Identifier: LGPL-2.1-or-later
// The host clock's synchronisation state as the kernel keeps it. The service that steers the
// clock (chrony, ntpd, systemd-timesyncd) tells the kernel whether the clock is synchronised
// and how large its error is; reading that back costs one system call, ntp_adjtime() with
// modes 0, which changes nothing. Outputs record it beside each frame's UTC (docs/outputs.md,
// "The host clock").
#pragma once

#include <sys/timex.h>

#include <cstdint>
#include <filesystem>
#include <string>

namespace starsift::daemon {

struct ClockState {
  bool readable = false;          // false: the kernel could not be asked; `error` says why
  std::string error;              // why not (empty when readable)
  int kernel_state = TIME_ERROR;  // ntp_adjtime()'s return: TIME_OK ... TIME_ERROR
  int status = 0;                 // the kernel's STA_* bits
  // The kernel's own verdict: STA_UNSYNC clear and not TIME_ERROR. The kernel sets STA_UNSYNC
  // itself once max_error passes 16 s, i.e. when nobody has steered the clock for a long time.
  bool synchronised = false;
  std::int64_t est_error_us = -1;  // estimated error, as the steering service last set it
  std::int64_t max_error_us = -1;  // maximum error: grows by 500 µs per second until reset
  std::int64_t offset_ns = 0;      // offset the kernel is still slewing away (0 under chrony)
  double frequency_ppm = 0.0;      // frequency correction applied to the clock
  bool pps = false;                // disciplined by a PPS signal (STA_PPSSIGNAL and STA_PPSTIME)
  std::string source;              // "pps", "chronyd", "ntpd", "systemd-timesyncd"; "" unknown
};

// The record for what ntp_adjtime() returned (`kernel_state`) and filled in (`tx`). Pure: the
// tests feed it crafted structs. `source` is "pps" when the kernel says so, else empty.
ClockState clock_state_from_timex(const struct timex& tx, int kernel_state);

// Asks the kernel now (read-only) and names the steering service from the files under
// `run_dir` (find_time_service()). Never throws: a failure is a record with readable false.
// About 25 µs, mostly the stat(2)s of the probe: read it once a second or so and hand the
// record to every line and frame of that second, rather than once per frame.
ClockState read_clock_state(const std::filesystem::path& run_dir = "/run");

// "ok", "leap-insert", "leap-delete", "leap-in-progress", "leap-wait", "error", "unknown".
const char* kernel_state_name(int kernel_state) noexcept;

// Appends the record as one JSON object, e.g.
// {"synchronised":true,"state":"ok","est_error_us":412,"max_error_us":28000,"offset_ns":0,
//  "freq_ppm":-12.5,"pps":false,"source":"chronyd"}
// and for an unreadable clock {"synchronised":false,"state":"unknown","error":"..."}.
void append_clock_json(std::string& out, const ClockState& state);
std::string clock_json(const ClockState& state);

}  // namespace starsift::daemon
