#include "pipeline/chain/chain_stages.hpp"

#include <variant>

#include "pipeline/median/median_stage.hpp"
#include "pipeline/whiten/whiten_stage.hpp"

namespace starsift {

namespace {

// One overload per StageParams alternative: a filter added to the variant without one here
// does not compile.
std::unique_ptr<FilterStage> make_stage(const MedianParams& params, const BackendChoice& choice) {
  return make_median_stage(params, choice);
}
std::unique_ptr<FilterStage> make_stage(const WhitenParams& params, const BackendChoice& choice) {
  return make_whiten_stage(params, choice);
}

}  // namespace

std::vector<std::unique_ptr<FilterStage>> build_chain_stages(const ChainConfig& config,
                                                             const BackendChoice& choice) {
  std::vector<std::unique_ptr<FilterStage>> stages;
  stages.reserve(config.stages.size());
  for (const StageConfig& stage : config.stages) {
    stages.push_back(
        std::visit([&](const auto& params) { return make_stage(params, choice); }, stage.params));
  }
  return stages;
}

std::unique_ptr<ChainRunner> make_chain_runner(const ChainConfig& config,
                                               const BackendChoice& choice) {
  return make_chain_runner(build_chain_stages(config, choice), choice);
}

}  // namespace starsift
