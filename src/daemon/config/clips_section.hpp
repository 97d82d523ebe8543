// SPDX-License-Identifier: LGPL-2.1-or-later
// A pipeline's `outputs.clips`: event clips (docs/live-video.md, "Event clips").
#pragma once

#include "daemon/config/config_reader.hpp"
#include "daemon/config/daemon_config.hpp"

namespace starsift::daemon {

// Reads `value` into `clips`, recording every problem.
void read_clips(ConfigReader& reader, const Value& value, ClipsOutput& clips);

}  // namespace starsift::daemon
