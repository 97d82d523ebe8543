// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/outputs/night_layout.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "pipeline/error.hpp"

namespace starsift::daemon {

namespace {

constexpr std::int64_t kMicrosPerSecond = 1000000;

// Floor division: instants before 1970 belong to the second that starts before them.
std::time_t seconds_of(std::int64_t utc_us) {
  std::int64_t s = utc_us / kMicrosPerSecond;
  if (utc_us % kMicrosPerSecond < 0) --s;
  return static_cast<std::time_t>(s);
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

std::string_view to_string(NightClock clock) noexcept {
  return clock == NightClock::Utc ? "utc" : "local";
}

NightClock parse_night_clock(std::string_view name) {
  if (name == "local") return NightClock::Local;
  if (name == "utc") return NightClock::Utc;
  throw Error("night clock '" + shown_value(name) + "' is not known", "local, utc");
}

std::string night_name(std::int64_t utc_us, NightClock clock) {
  using namespace std::chrono;
  const std::time_t seconds = seconds_of(utc_us);
  std::tm tm{};
  if (clock == NightClock::Utc) {
    gmtime_r(&seconds, &tm);
  } else {
    localtime_r(&seconds, &tm);
  }
  // Before noon on the clock: the night began on the previous calendar day. Counted on the
  // calendar, not as 12 hours of UTC, so a 23- or 25-hour day still turns at 12:00.
  sys_days day =
      year_month_day{year{tm.tm_year + 1900}, month{static_cast<unsigned>(tm.tm_mon + 1)},
                     std::chrono::day{static_cast<unsigned>(tm.tm_mday)}};
  if (tm.tm_hour < 12) day -= days{1};
  const year_month_day ymd{day};
  char text[16];
  std::snprintf(text, sizeof text, "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
  return text;
}

bool is_night_name(std::string_view name) noexcept {
  if (name.size() != 10 || name[4] != '-' || name[7] != '-') return false;
  int fields[3] = {0, 0, 0};
  const std::size_t starts[3] = {0, 5, 8}, lengths[3] = {4, 2, 2};
  for (int f = 0; f < 3; ++f) {
    for (std::size_t i = starts[f]; i < starts[f] + lengths[f]; ++i) {
      if (name[i] < '0' || name[i] > '9') return false;
      fields[f] = fields[f] * 10 + (name[i] - '0');
    }
  }
  using namespace std::chrono;
  return year_month_day{year{fields[0]}, month{static_cast<unsigned>(fields[1])},
                        day{static_cast<unsigned>(fields[2])}}
      .ok();
}

void check_pipeline_name(std::string_view name) {
  const bool ok = !name.empty() && name.front() != '.' &&
                  name.find('/') == std::string_view::npos &&
                  name.find('\0') == std::string_view::npos;
  if (!ok) {
    throw Error("pipeline name '" + shown_value(name) + "' cannot name a directory",
                "a name without '/' that does not start with '.'");
  }
}

void ensure_directory(const std::filesystem::path& dir) {
  std::filesystem::path prefix;
  for (const auto& part : dir) {
    prefix /= part;
    const std::string path = prefix.string();
    if (is_directory(path)) continue;
    if (::mkdir(path.c_str(), 0755) == 0) continue;
    const int reason = errno;
    if (reason == EEXIST && is_directory(path)) continue;  // made meanwhile by another writer
    if (reason == EEXIST) {
      throw Error("directory '" + shown_value(dir.string(), kMaxShownPathBytes) + "': '" +
                      shown_value(path, kMaxShownPathBytes) + "' exists and is not a directory",
                  "a directory there, or nothing (it is then created)");
    }
    std::string problem = "directory '" + shown_value(dir.string(), kMaxShownPathBytes) +
                          "': cannot create '" + shown_value(path, kMaxShownPathBytes) +
                          "': " + std::strerror(reason);
    if (reason == EACCES || reason == EPERM || reason == EROFS) {
      throw Error(problem,
                  "a state directory the service's user may write (StateDirectory= in its unit)");
    }
    throw Error(problem);
  }
}

std::filesystem::path NightLayout::night_dir(std::string_view pipeline,
                                             std::string_view night) const {
  check_pipeline_name(pipeline);
  return state_dir / std::string(pipeline) / std::string(night);
}

std::filesystem::path NightLayout::ensure_night_dir(std::string_view pipeline,
                                                    std::string_view night) const {
  std::filesystem::path dir = night_dir(pipeline, night);
  ensure_directory(dir);
  return dir;
}

}  // namespace starsift::daemon
