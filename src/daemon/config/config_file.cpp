// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/config/config_file.hpp"

#include <string>

#include "daemon/config/config_errors.hpp"
#include "pipeline/regular_file.hpp"

namespace starsift::daemon {

std::string read_config_file(const std::filesystem::path& path, std::size_t max_bytes) {
  const std::string shown = shown_value(path.string(), kMaxShownPathBytes);
  const auto refuse = [&](const std::string& reason) {
    return ConfigErrors(
        {ConfigProblem{SourceLocation{shown, 0, 0}, "", "cannot read the config file: " + reason,
                       "a regular file of at most " + std::to_string(max_bytes) + " bytes (" +
                           std::to_string(max_bytes >> 20) + " MiB)"}});
  };
  return read_regular_file_or(path.string(), max_bytes, refuse);
}

}  // namespace starsift::daemon
