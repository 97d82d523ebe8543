// SPDX-License-Identifier: LGPL-2.1-or-later
// quality.md: the tables a person reads (docs/quality.md defines every number).
#pragma once

#include <ostream>
#include <string>

#include "app/quality/runner.hpp"

namespace starsift::quality {

// `command` is the command line that produced the report.
void write_markdown(const QualityReport& report, const std::string& version,
                    const std::string& date, const std::string& command, std::ostream& out);

}  // namespace starsift::quality
