// SPDX-License-Identifier: LGPL-2.1-or-later
// A pipeline's `source`: a map with exactly one key, the kind (sky, file, v4l2, rtsp, aravis,
// gst), holding that kind's settings.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string_view>

#include "daemon/config/config_reader.hpp"
#include "daemon/config/daemon_config.hpp"

namespace starsift::daemon {

// The kinds, in the order messages and docs list them.
std::span<const std::string_view> source_kinds() noexcept;

// Reads `source`; relative paths are taken from `base_directory`. Records every problem and
// returns nothing when the source is refused.
std::optional<SourceConfig> read_source(ConfigReader& reader, const Value& source,
                                        const std::filesystem::path& base_directory);

// The longest time between two frames the source's settings imply (1 / fps, or an exposure
// longer than that), in seconds; nothing when they do not say.
std::optional<double> frame_interval_s(const SourceConfig& source);

}  // namespace starsift::daemon
