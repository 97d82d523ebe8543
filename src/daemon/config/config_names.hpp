// SPDX-License-Identifier: LGPL-2.1-or-later
// The names the config gives enum values: one table per enum, shared by the reader and
// to_string(), in the order messages and docs list them.
#pragma once

#include <span>

#include "daemon/config/daemon_config.hpp"
#include "pipeline/named_values.hpp"

namespace starsift::daemon {

std::span<const Named<LogLevel>> log_level_names() noexcept;
std::span<const Named<Backend>> backend_names() noexcept;
std::span<const Named<RtspTransport>> rtsp_transport_names() noexcept;
std::span<const Named<VideoEncoder>> video_encoder_names() noexcept;
std::span<const Named<StreamView>> stream_view_names() noexcept;
std::span<const Named<PsfKind>> psf_names() noexcept;
// The formats the sky source renders through siftskysrc's caps.
std::span<const Named<PixelFormat>> sky_format_names() noexcept;

}  // namespace starsift::daemon
