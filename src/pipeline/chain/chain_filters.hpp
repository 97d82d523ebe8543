// SPDX-License-Identifier: LGPL-2.1-or-later
// The filters a chain may contain: for each, its YAML name, its parameter keys and the reader
// that turns its parameter map into validated Params. A filter joins chains with its own
// <filter>_yaml.cpp (defining <filter>_chain_filter()), one line in chain_filters.cpp and its
// Params in the StageParams variant (chain_config.hpp).
#pragma once

#include <span>
#include <string_view>

#include "pipeline/chain/chain_config.hpp"
#include "pipeline/chain/yaml_params.hpp"

namespace starsift {

struct ChainFilter {
  std::string_view name;                   // as written in YAML: "median"
  std::span<const std::string_view> keys;  // its parameter keys, in the order the docs list them
  // The validated parameters; throws Error at the offending parameter.
  StageParams (*read)(const YamlParams& params);
};

// Every filter, in the order messages and docs list them.
std::span<const ChainFilter> chain_filters();

// The filter called `name`, or nullptr.
const ChainFilter* find_chain_filter(std::string_view name);

// One per filter, each in its own <filter>_yaml.cpp.
ChainFilter median_chain_filter();
ChainFilter gauss_chain_filter();
ChainFilter brightness_chain_filter();
ChainFilter whiten_chain_filter();
ChainFilter detect_chain_filter();

}  // namespace starsift
