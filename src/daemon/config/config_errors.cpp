// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/config/config_errors.hpp"

#include <utility>

namespace starsift::daemon {

namespace {

std::string all_lines(const std::vector<ConfigProblem>& problems) {
  std::string text;
  for (const ConfigProblem& problem : problems) {
    if (!text.empty()) text += '\n';
    text += problem.str();
  }
  return text;
}

}  // namespace

std::string ConfigProblem::str() const {
  std::string text = where.str() + ": ";
  if (!key.empty()) text += key + ": ";
  text += problem;
  if (!allowed.empty()) text += "; allowed: " + allowed;
  return text;
}

ConfigErrors::ConfigErrors(std::vector<ConfigProblem> problems)
    : Error(all_lines(problems)), problems_(std::move(problems)) {}

}  // namespace starsift::daemon
