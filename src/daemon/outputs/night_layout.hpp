// SPDX-License-Identifier: LGPL-2.1-or-later
// Where a pipeline's files go: <state>/<pipeline>/<night>/, one directory per night.
//
// A night is named by the date on which it starts, as observers name it (RMS does the same):
// it runs from 12:00 to 11:59:59.999999 the next day, on the host's local clock or on UTC
// (`NightClock`). A frame taken at 03:10 on 26 November belongs to the night "2026-11-25".
// Local noon is found on the local calendar, so the days on which daylight saving time starts
// or ends still turn at 12:00 on the clock (docs/outputs.md, "Nights").
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace starsift::daemon {

enum class NightClock {
  Local,  // the host's time zone (TZ, /etc/localtime): the evening an observer means
  Utc,    // UTC: the same night names on every host whatever its zone
};

std::string_view to_string(NightClock clock) noexcept;  // "local", "utc"
// Throws Error naming the value and the accepted names.
NightClock parse_night_clock(std::string_view name);

// The night that holds the instant `utc_us` (microseconds since 1970-01-01 UTC): the date, on
// `clock`, of the last 12:00 at or before it, as "YYYY-MM-DD".
std::string night_name(std::int64_t utc_us, NightClock clock);

// True for names night_name() can return ("YYYY-MM-DD", a real date): the disk guard touches
// only directories named so.
bool is_night_name(std::string_view name) noexcept;

// Throws Error unless `name` can be one directory name: not empty, no '/', no NUL, not
// starting with '.' (".", ".." and hidden names are refused).
void check_pipeline_name(std::string_view name);

// Creates `dir` and each missing parent. Throws Error naming the first path that cannot be made
// and why: it exists and is not a directory, permission denied (with what would allow it), or
// the system's reason. A symbolic link to a directory counts as a directory.
void ensure_directory(const std::filesystem::path& dir);

struct NightLayout {
  std::filesystem::path state_dir;
  NightClock clock = NightClock::Local;

  std::string night_of(std::int64_t utc_us) const { return night_name(utc_us, clock); }
  // <state>/<pipeline>/<night>; checks the pipeline name, creates nothing.
  std::filesystem::path night_dir(std::string_view pipeline, std::string_view night) const;
  // The same, created when missing (ensure_directory()).
  std::filesystem::path ensure_night_dir(std::string_view pipeline, std::string_view night) const;
};

}  // namespace starsift::daemon
