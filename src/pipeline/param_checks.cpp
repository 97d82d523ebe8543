// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/param_checks.hpp"

#include <cmath>
#include <sstream>

#include "pipeline/error.hpp"

namespace starsift {

std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

void ParamChecks::refuse(std::string_view key, const std::string& value,
                         const std::string& allowed) const {
  throw Error(std::string(filter_) + " " + std::string(key) + " " + value + " is not allowed",
              allowed);
}

void ParamChecks::check_int(std::string_view key, int value, int min, int max) const {
  if (value < min || value > max) {
    refuse(key, std::to_string(value), std::to_string(min) + ".." + std::to_string(max));
  }
}

void ParamChecks::check_number(std::string_view key, double value, double min, bool min_open,
                               double max, std::string_view unit) const {
  const bool below = min_open ? !(value > min) : !(value >= min);
  if (!std::isfinite(value) || below || value > max) {
    refuse(key, number_text(value),
           std::string(min_open ? "finite numbers above " : "finite numbers from ") +
               number_text(min) + " up to " + number_text(max) +
               (unit.empty() ? "" : " " + std::string(unit)));
  }
}

}  // namespace starsift
