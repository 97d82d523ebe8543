// SPDX-License-Identifier: LGPL-2.1-or-later
// What is wrong with a config file: every problem found, each with its place, its key path,
// what was found and what is allowed. A config is read completely before it is refused, so
// one run of `starsift validate` shows every mistake.
#pragma once

#include <string>
#include <vector>

#include "pipeline/chain/chain_config.hpp"
#include "pipeline/error.hpp"

namespace starsift::daemon {

struct ConfigProblem {
  SourceLocation where;  // file:line:column (1-based); line 0 when the file itself is wrong
  // The key path, indices from 0: "pipelines[1].source.aravis.exposure-us"; empty for the
  // document as a whole.
  std::string key;
  std::string problem;  // what is wrong, with the value as written
  std::string allowed;  // what would be accepted; may be empty

  // "file:3:5: pipelines[0].depth: 0 is not allowed; allowed: 1..8"
  std::string str() const;
  bool operator==(const ConfigProblem&) const = default;
};

// Thrown when a config has problems: all of them, in the order of the file. what() holds
// them one per line; problem() too, so a catch of starsift::Error prints them all.
class ConfigErrors : public Error {
 public:
  explicit ConfigErrors(std::vector<ConfigProblem> problems);

  const std::vector<ConfigProblem>& problems() const noexcept { return problems_; }

 private:
  std::vector<ConfigProblem> problems_;
};

}  // namespace starsift::daemon
