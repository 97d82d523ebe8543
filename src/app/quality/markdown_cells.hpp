// SPDX-License-Identifier: LGPL-2.1-or-later
// What quality.md's tables put in their cells: number formats, the header rule, the speed
// columns. The harness's tables (report_markdown.cpp) and the shipped chain's
// (report_chain.cpp) write them through these so that the two halves of the file read alike.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "app/quality/statistics.hpp"
#include "app/quality/summary.hpp"

namespace starsift::quality {

// One number in a printf `format` ("%g", "%.3f", "-%g").
std::string fmt(const char* format, double v);

// "value [low, high]", each in `format`: a rate and its 95 % interval.
std::string with_interval(const char* format, double value, const Interval& interval);

// "93.1 [91.4, 94.6]": a proportion and its interval in per cent.
std::string percent_text(const Proportion& p);

// The markdown rule under a header of `columns` columns: "|---|---|...".
std::string rule(std::size_t columns);

// The speed columns' header cells, " 1 | 5 |".
std::string speed_header(const std::vector<double>& speeds);

// A completeness row's cells, one per speed, from `summary`'s cells (a method's or a chain's)
// at peak SNR `snr`: percent_text() of the Proportion `pick(cell)` selects, "-" where the grid
// has no such cell. Returns whether every cell present is >= `target`; the caller writes that
// verdict, since the tables state it on different rows.
template <class Summary, class Pick>
bool write_speed_cells(const std::vector<double>& speeds, const Summary& summary, double snr,
                       Pick pick, double target, std::ostream& out) {
  bool meets = true;
  for (const double v : speeds) {
    const auto* cell = find_cell(summary, snr, v);
    if (cell == nullptr) {
      out << " - |";
      continue;
    }
    const Proportion p = pick(*cell);
    meets = meets && p.value >= target;
    out << " " << percent_text(p) << " |";
  }
  return meets;
}

}  // namespace starsift::quality
