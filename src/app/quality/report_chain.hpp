// SPDX-License-Identifier: LGPL-2.1-or-later
// The shipped chain's part of quality.md and quality.json (chain_summary.hpp's numbers).
#pragma once

#include <ostream>

#include "app/quality/runner.hpp"
#include "bench/json.hpp"

namespace starsift::quality {

// The markdown section: the thresholds, completeness per frame and by tracks, false tracks,
// and the scan over every threshold run.
void write_chain_markdown(const QualityReport& report, std::ostream& out);

// One scene's chain object for quality.json.
bench::Json chain_json(const QualityConfig& config, const ChainSummary& chain);

// The chain's definitions for quality.json's "definitions".
bench::Json chain_definitions();

}  // namespace starsift::quality
