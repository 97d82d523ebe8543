#include "pipeline/chain/chain_stages.hpp"

#include <type_traits>
#include <variant>

#include "pipeline/median/median_stage.hpp"

namespace starsift {

std::vector<std::unique_ptr<FilterStage>> build_chain_stages(const ChainConfig& config,
                                                             const BackendChoice& choice) {
  std::vector<std::unique_ptr<FilterStage>> stages;
  stages.reserve(config.stages.size());
  for (const StageConfig& stage : config.stages) {
    stages.push_back(std::visit(
        [&](const auto& params) -> std::unique_ptr<FilterStage> {
          using P = std::decay_t<decltype(params)>;
          static_assert(std::is_same_v<P, MedianParams>, "a filter without a stage factory");
          return make_median_stage(params, choice);
        },
        stage.params));
  }
  return stages;
}

std::unique_ptr<ChainRunner> make_chain_runner(const ChainConfig& config,
                                               const BackendChoice& choice) {
  return make_chain_runner(build_chain_stages(config, choice), choice);
}

}  // namespace starsift
