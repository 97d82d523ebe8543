// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/outputs/disk_guard.hpp"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <tuple>
#include <utility>

#include "daemon/outputs/night_layout.hpp"
#include "pipeline/error.hpp"

namespace starsift::daemon {

namespace fs = std::filesystem;

namespace {

bool is_real_directory(const fs::directory_entry& entry) {
  std::error_code ec;
  return entry.is_directory(ec) && !entry.is_symlink(ec);
}

std::uint64_t lstat_bytes(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

}  // namespace

std::uint64_t available_bytes(const fs::path& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) {
    const int reason = errno;
    throw Error("disk guard: cannot read the free space of '" +
                shown_value(dir.string(), kMaxShownPathBytes) + "': " + std::strerror(reason));
  }
  return static_cast<std::uint64_t>(st.f_bavail) * static_cast<std::uint64_t>(st.f_frsize);
}

std::vector<StoredNight> list_nights(const fs::path& state_dir) {
  std::vector<StoredNight> nights;
  std::error_code ec;
  for (const auto& pipeline : fs::directory_iterator(state_dir, ec)) {
    const std::string pipeline_name = pipeline.path().filename().string();
    if (!is_real_directory(pipeline) || pipeline_name.starts_with('.')) continue;
    std::error_code inner;
    for (const auto& night : fs::directory_iterator(pipeline.path(), inner)) {
      std::string night_name = night.path().filename().string();
      if (!is_real_directory(night) || !is_night_name(night_name)) continue;
      nights.push_back({night.path(), pipeline_name, std::move(night_name)});
    }
  }
  std::sort(nights.begin(), nights.end(), [](const StoredNight& a, const StoredNight& b) {
    return std::tie(a.night, a.pipeline) < std::tie(b.night, b.pipeline);
  });
  return nights;
}

std::uint64_t allocated_bytes(const fs::path& path) {
  std::uint64_t bytes = lstat_bytes(path);
  std::error_code ec;
  // The iterator does not follow symbolic links into directories: a link counts as itself.
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    bytes += lstat_bytes(it->path());
  }
  return bytes;
}

DiskGuard::DiskGuard(fs::path state_dir, DiskGuardPolicy policy, FreeSpace free_space)
    : state_dir_(std::move(state_dir)), policy_(policy), free_space_(std::move(free_space)) {}

DiskGuardReport DiskGuard::enforce(std::string_view writing_night) {
  DiskGuardReport report;
  report.free_bytes = free_space_(state_dir_);
  const std::vector<StoredNight> nights = list_nights(state_dir_);

  // The newest `keep_nights` night names stay under keep-nights; older ones go.
  std::set<std::string> names;
  for (const StoredNight& n : nights) names.insert(n.night);
  std::string oldest_kept;  // nights before this name are over keep-nights
  if (policy_.keep_nights > 0 && names.size() > policy_.keep_nights) {
    oldest_kept = *std::next(names.begin(), names.size() - policy_.keep_nights);
  }

  for (const StoredNight& n : nights) {
    // The night being written, and anything later, stay (all of them, when one is written).
    if (!writing_night.empty() && n.night >= writing_night) break;
    const bool over_count = !oldest_kept.empty() && n.night < oldest_kept;
    const bool short_of_space = report.free_bytes < policy_.min_free_bytes;
    if (!over_count && !short_of_space) break;  // every later night is newer still

    const char* reason = over_count ? "keep-nights" : "min-free";
    const std::uint64_t before = allocated_bytes(n.path);
    std::error_code ec;
    fs::remove_all(n.path, ec);
    std::uint64_t freed = before;
    if (ec) {
      freed = before - std::min(before, allocated_bytes(n.path));
      report.failures.push_back(n.path.string() + ": " + ec.message());
      spdlog::error("disk guard: cannot remove night {} ({}): {}; {} bytes freed", n.path.string(),
                    reason, ec.message(), freed);
    } else {
      report.removed.push_back({n.path, n.pipeline, n.night, freed, reason});
      spdlog::info(
          "disk guard: removed night {} ({} bytes, {}: {} bytes free, min-free {}, "
          "keep-nights {})",
          n.path.string(), freed, reason, report.free_bytes, policy_.min_free_bytes,
          policy_.keep_nights);
    }
    try {
      report.free_bytes = free_space_(state_dir_);
    } catch (const std::exception& e) {
      report.failures.push_back(e.what());
      spdlog::error("{}", e.what());
      break;
    }
  }

  report.short_of_space = report.free_bytes < policy_.min_free_bytes;
  if (report.short_of_space && !reported_short_) {
    spdlog::warn(
        "disk guard: {} bytes free under {}, below min-free {}, and nothing more may go "
        "(the night being written, {}, and later ones stay)",
        report.free_bytes, state_dir_.string(), policy_.min_free_bytes, writing_night);
  }
  reported_short_ = report.short_of_space;
  return report;
}

}  // namespace starsift::daemon
