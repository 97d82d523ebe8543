// SPDX-License-Identifier: LGPL-2.1-or-later
// From a validated chain configuration to the stages that run it, and from one configuration
// to the next while they run: what each stage writes for a given input (before any stage is
// built, so caps can be negotiated from it), and how a running stage follows new parameters.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "pipeline/backend.hpp"
#include "pipeline/chain/chain_config.hpp"
#include "pipeline/pixel_format.hpp"
#include "pipeline/stage.hpp"

namespace starsift {

// One stage per StageConfig, in order, all for `choice` (resolved). Throws Error.
std::vector<std::unique_ptr<FilterStage>> build_chain_stages(const ChainConfig& config,
                                                             const BackendChoice& choice);
std::unique_ptr<FilterStage> build_stage(const StageParams& params, const BackendChoice& choice);

// The format the chain writes for frames of `format`, when its first stage reads them and
// every stage after it what the one before writes; nothing otherwise. No throw.
std::optional<PixelFormat> chain_output_format(const ChainConfig& config,
                                               PixelFormat format) noexcept;

// The frame shape at every point of the chain for input frames of `in`: [i] is stage i's
// input, back() the chain's output. Checks each stage's parameters against what it receives
// (a border value that does not fit the format, a frame too small to align); throws Error
// naming the stage ("stage 2 (whiten)") and the problem.
std::vector<FrameShape> chain_shapes(const ChainConfig& config, const FrameShape& in);

// How a running stage follows a new StageConfig.
enum class StageChange {
  Same,     // nothing changed
  Live,     // the running stage takes the new parameters from its next frame, keeping its
            // buffers and its state (a median's size, whitening's gamma)
  Restart,  // the running stage takes them and starts its state anew (whitening's history)
  Replace,  // another filter: a new stage replaces the running one
};
std::string_view to_string(StageChange change) noexcept;

// Stage by stage, how `running` becomes `next`; nothing when the chains differ in length (a
// new chain is built instead).
std::optional<std::vector<StageChange>> plan_chain_update(const ChainConfig& running,
                                                          const ChainConfig& next);

// Hands `params` to a running stage of the same filter (StageChange Live or Restart). Throws
// Error when the stage refuses them (it then keeps its previous ones).
void apply_stage_params(FilterStage& stage, const StageParams& params);

}  // namespace starsift
