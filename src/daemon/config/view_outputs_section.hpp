// SPDX-License-Identifier: LGPL-2.1-or-later
// A pipeline's `outputs.rtp` and `outputs.shm`: one live view sent as H.264 over RTP/UDP, or
// shared as raw GRAY8 frames with a consumer on this host (docs/live-video.md).
#pragma once

#include <filesystem>
#include <optional>

#include "daemon/config/config_reader.hpp"
#include "daemon/config/daemon_config.hpp"

namespace starsift::daemon {

// Reads `outputs.rtp`. Records every problem and returns nothing when the section is refused.
std::optional<RtpOutput> read_rtp_output(ConfigReader& reader, const Value& value);

// Reads `outputs.shm`; a relative `socket-path` is taken from `base_directory`. The socket's
// directory must exist and be writable now. Records every problem and returns nothing when
// the section is refused.
std::optional<ShmOutput> read_shm_output(ConfigReader& reader, const Value& value,
                                         const std::filesystem::path& base_directory);

}  // namespace starsift::daemon
