// From a validated chain configuration to the stages that run it.
#pragma once

#include <memory>
#include <vector>

#include "pipeline/backend.hpp"
#include "pipeline/chain/chain_config.hpp"
#include "pipeline/chain/chain_runner.hpp"
#include "pipeline/stage.hpp"

namespace starsift {

// One stage per StageConfig, in order, all for `choice` (resolved). Throws Error.
std::vector<std::unique_ptr<FilterStage>> build_chain_stages(const ChainConfig& config,
                                                             const BackendChoice& choice);

// build_chain_stages() + make_chain_runner().
std::unique_ptr<ChainRunner> make_chain_runner(const ChainConfig& config,
                                               const BackendChoice& choice);

}  // namespace starsift
