// SPDX-License-Identifier: LGPL-2.1-or-later
// Where starsiftd's log goes: the journal when systemd connected our stderr to it
// (JOURNAL_STREAM names that stream), the console otherwise. In the journal each entry carries
// its priority and, for a pipeline's messages, the pipeline's name as the field
// STARSIFT_PIPELINE (`journalctl -u starsiftd STARSIFT_PIPELINE=roof`). GStreamer's own
// warnings and errors come through the same loggers (gst_debug_add_log_function), under the
// pipeline of the element that wrote them.
#pragma once

#include <spdlog/logger.h>

#include <memory>
#include <string>

#include "daemon/config/daemon_config.hpp"

namespace starsift::daemon {

// True when stderr is the journal stream systemd set up (JOURNAL_STREAM=<device>:<inode>
// matches fd 2).
bool stderr_is_journal();

// Makes the default logger (unnamed: the daemon itself) write to the journal or the console.
void setup_logging(LogLevel level, bool journal);
void set_log_level(LogLevel level);

// The logger of pipeline `name`: the default logger's sinks under the pipeline's name.
std::shared_ptr<spdlog::logger> pipeline_logger(const std::string& name);

// GStreamer's debug log at WARNING and above goes to spdlog (unless GST_DEBUG asks for more,
// in which case GStreamer's own printing stays as well).
void route_gstreamer_log();

spdlog::level::level_enum spdlog_level(LogLevel level) noexcept;

}  // namespace starsift::daemon
