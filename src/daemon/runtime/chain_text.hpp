// SPDX-License-Identifier: LGPL-2.1-or-later
// A chain's stages written back as their YAML keys and values (config/README.md): every key of
// every stage, so the text means the same whatever the defaults become. siftchain takes a
// chain as flow-style YAML (its `chain` property); siftdetect's properties carry the detect
// stage's keys under the same names; FITS headers record the chain as text.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "pipeline/chain/chain_config.hpp"

namespace starsift::daemon {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// Every key of the stage's filter with its value, in the order config/README.md lists them.
// whiten's `offset` is left out when unset (its default depends on the frames).
KeyValues stage_key_values(const StageParams& params);

// The stages as one line of flow-style YAML, which parse_chain_yaml() reads back to the same
// ChainConfig: "[{whiten: {history: 20, gamma: 0.0001, ...}}, {detect: {...}}]".
std::string chain_flow_yaml(const std::vector<StageConfig>& stages);
std::string chain_flow_yaml(const ChainConfig& chain);

}  // namespace starsift::daemon
