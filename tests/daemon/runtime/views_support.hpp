// SPDX-License-Identifier: LGPL-2.1-or-later
// What the tests of starsiftd's live views share (RTSP, RTP/UDP, shared memory, event clips):
// one small synthetic sky every case runs, its metrics by label, and the checks of a decoded
// picture.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "daemon_process.hpp"
#include "support/rtsp_view_client.hpp"

namespace starsift::test {

// The sky of every view test: 384x288 (wide enough for a view stamp), 10 fps, whitening and
// detection on the CPU. `top` adds top-level sections ("rtsp: {port: 8554}\n"), `outputs` keys
// of the pipeline's outputs ("rtp: {...}"), `pipeline` keys of the pipeline ("tracker: ...").
inline constexpr int kViewWidth = 384;
inline constexpr int kViewHeight = 288;
std::string view_sky_config(const std::filesystem::path& state, int metrics_port,
                            const std::string& top = "", const std::string& outputs = "",
                            const std::string& pipeline = "", const std::string& detect = "{}");

// The value of metric `name` on the line whose labels hold each of `labels`
// ("view=\"raw\""); NaN when there is none.
double labelled_metric(int port, const std::string& name, const std::vector<std::string>& labels);
// Pipeline sky's view `view`.
double view_metric(int port, const std::string& name, const std::string& view);

// The standard deviation of a picture's values: a decoded sky is not one flat grey.
double spread(const DecodedPicture& picture);

// `command`'s standard output, run through the shell.
std::string run_output(const std::string& command);

// SIGTERM, then exit 0 within 20 s.
void stop_cleanly(DaemonProcess& daemon);

}  // namespace starsift::test
