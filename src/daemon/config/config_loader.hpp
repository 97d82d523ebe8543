// SPDX-License-Identifier: LGPL-2.1-or-later
// Reading starsiftd's config: parse_daemon_config() for text, load_daemon_config() for a file.
// Both read the whole config before judging it and throw ConfigErrors listing every problem
// (config_errors.hpp); nothing partly read is returned. config/README.md ("starsiftd")
// documents the schema.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "daemon/config/config_errors.hpp"
#include "daemon/config/daemon_config.hpp"

namespace starsift::daemon {

// The largest config file load_daemon_config() reads, as for chain files: real ones are a
// few kilobytes.
inline constexpr std::size_t kMaxConfigFileBytes = std::size_t{1} << 20;  // 1 MiB

// Parses YAML text; `origin` names it in messages (a file path). Relative paths in it
// (state-directory, a file source's path, a chain file) are taken from `base_directory`; left
// relative when it is empty. Throws ConfigErrors.
DaemonConfig parse_daemon_config(std::string_view text, std::string_view origin,
                                 const std::filesystem::path& base_directory = {});

// Reads and parses the file at `path`; relative paths in it are taken from the file's own
// directory, so the config means the same whatever the working directory. A path that is not
// a regular file of at most kMaxConfigFileBytes, or cannot be read, is refused before it is
// opened where possible (a FIFO, a device) with one problem at "<path>". Throws ConfigErrors.
DaemonConfig load_daemon_config(const std::filesystem::path& path);

}  // namespace starsift::daemon
