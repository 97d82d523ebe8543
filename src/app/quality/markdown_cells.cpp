// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/markdown_cells.hpp"

#include <cstdio>

namespace starsift::quality {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string with_interval(const char* format, double value, const Interval& interval) {
  return fmt(format, value) + " [" + fmt(format, interval.low) + ", " + fmt(format, interval.high) +
         "]";
}

std::string percent_text(const Proportion& p) {
  return with_interval("%.1f", 100.0 * p.value, {100.0 * p.interval.low, 100.0 * p.interval.high});
}

std::string rule(std::size_t columns) {
  std::string r = "|";
  for (std::size_t i = 0; i < columns; ++i) r += "---|";
  return r;
}

std::string speed_header(const std::vector<double>& speeds) {
  std::string h;
  for (const double v : speeds) h += fmt(" %g |", v);
  return h;
}

}  // namespace starsift::quality
