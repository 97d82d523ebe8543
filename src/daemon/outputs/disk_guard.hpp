// SPDX-License-Identifier: LGPL-2.1-or-later
// Keeps the state directory from filling the disk: the oldest nights go first.
//
// Rule (docs/outputs.md, "The disk guard"): the nights are the directories
// <state>/<pipeline>/<YYYY-MM-DD> (is_night_name()), ordered by night name, then pipeline name,
// across all pipelines. While the free space is below `min_free_bytes`, or more than
// `keep_nights` night names are kept, the first in that order is removed whole. The night being
// written now and any later one are never removed, whatever the rules say: when only they are
// left and space is still short, the guard says so (and logs it once) instead. Every removal is
// logged (spdlog) and returned, so the runtime can count it. Nothing else under the state
// directory is touched, and symbolic links are neither followed nor removed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace starsift::daemon {

struct DiskGuardPolicy {
  std::uint64_t min_free_bytes = 0;  // min-free: 0 leaves free space alone
  std::uint32_t keep_nights = 0;     // keep-nights: 0 keeps any number
};

// A night directory on disk.
struct StoredNight {
  std::filesystem::path path;  // <state>/<pipeline>/<night>
  std::string pipeline;
  std::string night;
};

struct NightRemoval {
  std::filesystem::path path;
  std::string pipeline;
  std::string night;
  std::uint64_t bytes = 0;  // allocated bytes freed (st_blocks): what statvfs sees come back
  std::string reason;       // "min-free" or "keep-nights"
};

struct DiskGuardReport {
  std::vector<NightRemoval> removed;  // in the order removed
  std::vector<std::string> failures;  // nights that could not be removed (or measured), and why
  std::uint64_t free_bytes = 0;       // free space after the removals
  bool short_of_space = false;        // still below min-free with nothing left that may go
};

// Bytes an unprivileged writer may still use on the file system of `dir`: statvfs(3)'s
// f_bavail * f_frsize. Throws Error naming the directory and the reason.
std::uint64_t available_bytes(const std::filesystem::path& dir);

// The night directories under `state_dir`, oldest night name first, then by pipeline name. A
// missing state directory has none.
std::vector<StoredNight> list_nights(const std::filesystem::path& state_dir);

// Allocated bytes of `path` and everything under it, symbolic links not followed.
std::uint64_t allocated_bytes(const std::filesystem::path& path);

class DiskGuard {
 public:
  using FreeSpace = std::function<std::uint64_t(const std::filesystem::path&)>;

  // `free_space` is available_bytes() except in tests.
  DiskGuard(std::filesystem::path state_dir, DiskGuardPolicy policy,
            FreeSpace free_space = available_bytes);

  // Applies the rule once. `writing_night` (a night name: NightLayout::night_of(now)) and later
  // nights are kept; empty when no night is being written, so none is. Throws Error only when
  // the free space cannot be read before anything was removed.
  DiskGuardReport enforce(std::string_view writing_night);

  const DiskGuardPolicy& policy() const noexcept { return policy_; }

 private:
  std::filesystem::path state_dir_;
  DiskGuardPolicy policy_;
  FreeSpace free_space_;
  bool reported_short_ = false;  // "short of space" logged once until space comes back
};

}  // namespace starsift::daemon
