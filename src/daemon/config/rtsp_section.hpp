// SPDX-License-Identifier: LGPL-2.1-or-later
// The top-level `rtsp` section: the host's RTSP server, where it listens, who may watch, and
// how its views are encoded (docs/publishing.md, "Live video").
#pragma once

#include <optional>

#include "daemon/config/config_reader.hpp"
#include "daemon/config/daemon_config.hpp"

namespace starsift::daemon {

// Reads `rtsp`. Records every problem and returns nothing when the section is refused.
std::optional<RtspConfig> read_rtsp(ConfigReader& reader, const Value& rtsp);

// Reads a pipeline's `outputs.rtsp` (`streams`: a sequence of view names, no repeats);
// returns `streams` when it is written out.
std::optional<Value> read_rtsp_output(ConfigReader& reader, const Value& value, RtspOutput& output);

}  // namespace starsift::daemon
