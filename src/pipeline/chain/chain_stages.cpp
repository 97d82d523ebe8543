// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/chain/chain_stages.hpp"

#include <string>
#include <variant>

#include "pipeline/brightness/brightness_stage.hpp"
#include "pipeline/detect/detect_stage.hpp"
#include "pipeline/error.hpp"
#include "pipeline/gauss/gauss_stage.hpp"
#include "pipeline/median/median_stage.hpp"
#include "pipeline/whiten/whiten_stage.hpp"

namespace starsift {

namespace {

// One overload set per StageParams alternative: a filter added to the variant without its
// overloads here does not compile.
std::unique_ptr<FilterStage> make_stage(const MedianParams& params, const BackendChoice& choice) {
  return make_median_stage(params, choice);
}
std::unique_ptr<FilterStage> make_stage(const WhitenParams& params, const BackendChoice& choice) {
  return make_whiten_stage(params, choice);
}
std::unique_ptr<FilterStage> make_stage(const DetectParams& params, const BackendChoice& choice) {
  return make_detect_stage(params, choice);
}
std::unique_ptr<FilterStage> make_stage(const GaussParams& params, const BackendChoice& choice) {
  return make_gauss_stage(params, choice);
}
std::unique_ptr<FilterStage> make_stage(const BrightnessParams& params,
                                        const BackendChoice& choice) {
  return make_brightness_stage(params, choice);
}

bool supports(const MedianParams&, PixelFormat format) {
  return median_supports(format);
}
bool supports(const WhitenParams&, PixelFormat format) {
  return whiten_supports(format);
}
bool supports(const DetectParams&, PixelFormat format) {
  return detect_supports(format);
}
bool supports(const GaussParams&, PixelFormat format) {
  return gauss_supports(format);
}
bool supports(const BrightnessParams&, PixelFormat format) {
  return brightness_supports(format);
}

FrameShape output_of(const MedianParams&, const FrameShape& in) {
  return in;
}
FrameShape output_of(const WhitenParams& params, const FrameShape& in) {
  return whiten_output_shape(params, in);
}
FrameShape output_of(const DetectParams& params, const FrameShape& in) {
  return detect_output_shape(params, in);
}
FrameShape output_of(const GaussParams&, const FrameShape& in) {
  return in;
}
FrameShape output_of(const BrightnessParams&, const FrameShape& in) {
  return in;
}

void check_for(const MedianParams& params, const FrameShape& in) {
  params.validate_for(in.format);
}
void check_for(const WhitenParams& params, const FrameShape& in) {
  params.validate_for(in);
}
void check_for(const DetectParams& params, const FrameShape& in) {
  params.validate_for(in);
}
void check_for(const GaussParams& params, const FrameShape& in) {
  params.validate_for(in.format);
}
void check_for(const BrightnessParams& params, const FrameShape& in) {
  params.validate_for(in);
}

// The median keeps nothing across frames: every change applies live.
StageChange change_of(const MedianParams& from, const MedianParams& to) {
  return from == to ? StageChange::Same : StageChange::Live;
}
StageChange change_of(const WhitenParams& from, const WhitenParams& to) {
  if (from == to) return StageChange::Same;
  return whiten_live_change(from, to) ? StageChange::Live : StageChange::Restart;
}
// Detection keeps nothing across frames but its buffers: a new output or capacity needs a new
// stage (its frame or result changes size), the rest applies live.
StageChange change_of(const DetectParams& from, const DetectParams& to) {
  if (from == to) return StageChange::Same;
  return detect_live_change(from, to) ? StageChange::Live : StageChange::Replace;
}

// The blur keeps nothing across frames: every change applies live.
StageChange change_of(const GaussParams& from, const GaussParams& to) {
  return from == to ? StageChange::Same : StageChange::Live;
}
// The brightness correction keeps nothing across frames either: every change applies live.
StageChange change_of(const BrightnessParams& from, const BrightnessParams& to) {
  return from == to ? StageChange::Same : StageChange::Live;
}

// The running stage as the filter `params` belongs to.
void apply(FilterStage& stage, const MedianParams& params) {
  auto* median = dynamic_cast<MedianStage*>(&stage);
  if (median == nullptr) throw Error("stage '" + std::string(stage.name()) + "' is not a median");
  median->set_params(params);
}
void apply(FilterStage& stage, const WhitenParams& params) {
  auto* whiten = dynamic_cast<WhitenStage*>(&stage);
  if (whiten == nullptr) throw Error("stage '" + std::string(stage.name()) + "' is not whiten");
  whiten->set_params(params);
}
void apply(FilterStage& stage, const DetectParams& params) {
  auto* detect = dynamic_cast<DetectStage*>(&stage);
  if (detect == nullptr) throw Error("stage '" + std::string(stage.name()) + "' is not detect");
  detect->set_params(params);
}
void apply(FilterStage& stage, const GaussParams& params) {
  auto* gauss = dynamic_cast<GaussStage*>(&stage);
  if (gauss == nullptr) throw Error("stage '" + std::string(stage.name()) + "' is not gauss");
  gauss->set_params(params);
}
void apply(FilterStage& stage, const BrightnessParams& params) {
  auto* brightness = dynamic_cast<BrightnessStage*>(&stage);
  if (brightness == nullptr) {
    throw Error("stage '" + std::string(stage.name()) + "' is not brightness");
  }
  brightness->set_params(params);
}

std::string stage_label(std::size_t index, const StageConfig& stage) {
  return "stage " + std::to_string(index + 1) + " (" + stage.filter + ")";
}

}  // namespace

std::unique_ptr<FilterStage> build_stage(const StageParams& params, const BackendChoice& choice) {
  return std::visit([&](const auto& p) { return make_stage(p, choice); }, params);
}

std::vector<std::unique_ptr<FilterStage>> build_chain_stages(const ChainConfig& config,
                                                             const BackendChoice& choice) {
  std::vector<std::unique_ptr<FilterStage>> stages;
  stages.reserve(config.stages.size());
  for (const StageConfig& stage : config.stages)
    stages.push_back(build_stage(stage.params, choice));
  return stages;
}

std::optional<PixelFormat> chain_output_format(const ChainConfig& config,
                                               PixelFormat format) noexcept {
  FrameShape shape{16, 16, format, default_bit_depth(format)};
  for (const StageConfig& stage : config.stages) {
    const bool ok =
        std::visit([&](const auto& p) { return supports(p, shape.format); }, stage.params);
    if (!ok) return std::nullopt;
    shape = std::visit([&](const auto& p) { return output_of(p, shape); }, stage.params);
  }
  return shape.format;
}

std::vector<FrameShape> chain_shapes(const ChainConfig& config, const FrameShape& in) {
  in.validate();
  std::vector<FrameShape> shapes{in};
  shapes.reserve(config.stages.size() + 1);
  for (std::size_t i = 0; i < config.stages.size(); ++i) {
    const StageConfig& stage = config.stages[i];
    const FrameShape& at = shapes.back();
    try {
      std::visit(
          [&](const auto& p) {
            if (!supports(p, at.format)) {
              throw Error("it does not read " + std::string(to_string(at.format)) + " frames");
            }
            check_for(p, at);
            shapes.push_back(output_of(p, at));
          },
          stage.params);
    } catch (const Error& e) {
      throw Error(stage_label(i, stage) + ": " + e.problem(), e.allowed());
    }
  }
  return shapes;
}

std::string_view to_string(StageChange change) noexcept {
  switch (change) {
    case StageChange::Same:
      return "same";
    case StageChange::Live:
      return "live";
    case StageChange::Restart:
      return "restart";
    case StageChange::Replace:
      return "replace";
  }
  return "?";
}

std::optional<std::vector<StageChange>> plan_chain_update(const ChainConfig& running,
                                                          const ChainConfig& next) {
  if (running.stages.size() != next.stages.size()) return std::nullopt;
  std::vector<StageChange> changes;
  changes.reserve(next.stages.size());
  for (std::size_t i = 0; i < next.stages.size(); ++i) {
    const StageParams& from = running.stages[i].params;
    const StageParams& to = next.stages[i].params;
    if (from.index() != to.index()) {
      changes.push_back(StageChange::Replace);
      continue;
    }
    changes.push_back(std::visit(
        [&](const auto& a) {
          using P = std::decay_t<decltype(a)>;
          return change_of(a, std::get<P>(to));
        },
        from));
  }
  return changes;
}

void apply_stage_params(FilterStage& stage, const StageParams& params) {
  std::visit([&](const auto& p) { apply(stage, p); }, params);
}

}  // namespace starsift
