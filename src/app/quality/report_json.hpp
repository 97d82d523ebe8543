// SPDX-License-Identifier: LGPL-2.1-or-later
// quality.json: the configuration, the definitions and every number of the report, raw.
#pragma once

#include <ostream>
#include <string>

#include "app/quality/runner.hpp"

namespace starsift::quality {

// `version` and `date` (ISO 8601) describe the run.
void write_json(const QualityReport& report, const std::string& version, const std::string& date,
                std::ostream& out);

}  // namespace starsift::quality
