// SPDX-License-Identifier: LGPL-2.1-or-later
// `starsift quality`: the quality benchmark of temporal whitening (docs/quality.md).
#pragma once

#include <span>

#include "app/quality/quality_options.hpp"

namespace starsift::app {

// Runs the measurement and writes OUT/quality.json, OUT/quality.md and the PNGs; returns the
// exit status. `command_line` is recorded in the report. Throws Error on failures.
int run_quality_command(const QualityOptions& options, const std::string& command_line);

}  // namespace starsift::app
