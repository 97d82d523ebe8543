// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/runtime/chain_text.hpp"

#include <variant>

#include "daemon/runtime/element_spec.hpp"

namespace starsift::daemon {

namespace {

std::string yes_no(bool value) {
  return value ? "true" : "false";
}

KeyValues median_keys(const MedianParams& p) {
  return {{"size", std::to_string(p.size)},
          {"border", std::string(to_string(p.border))},
          {"border-value", number_text(p.border_value)}};
}

KeyValues whiten_keys(const WhitenParams& p) {
  KeyValues kv = {{"history", std::to_string(p.history)},
                  {"gamma", number_text(p.gamma)},
                  {"fit", std::string(to_string(p.fit))},
                  {"refit-interval", std::to_string(p.refit_interval)},
                  {"fit-subsample", std::to_string(p.fit_subsample)},
                  {"shift", std::string(to_string(p.shift))},
                  {"shift-window", std::to_string(p.shift_window)},
                  {"shift-max", number_text(p.shift_max)},
                  {"shift-noise", number_text(p.shift_noise)},
                  {"reject", std::string(to_string(p.reject))},
                  {"reject-sigma", number_text(p.reject_sigma)},
                  {"reject-object-sigma", number_text(p.reject_object_sigma)},
                  {"noise-frames", number_text(p.noise_frames)},
                  {"warmup", std::string(to_string(p.warmup))},
                  {"output", std::string(to_string(p.output))}};
  if (p.offset) kv.emplace_back("offset", number_text(*p.offset));
  kv.emplace_back("gain", number_text(p.gain));
  kv.emplace_back("despike", yes_no(p.despike));
  kv.emplace_back("history-format", std::string(to_string(p.history_format)));
  return kv;
}

KeyValues detect_keys(const DetectParams& p) {
  KeyValues kv{{"background", std::string(to_string(p.background))},
               {"mesh", std::to_string(p.mesh)},
               {"filter", std::string(to_string(p.filter))},
               {"fwhm", number_text(p.fwhm)},
               {"threshold-mode", std::string(to_string(p.threshold_mode))},
               {"threshold", number_text(p.threshold)}};
  // The line channel only when on: its threshold means nothing without it.
  if (p.line_length != 0) {
    kv.emplace_back("line-length", std::to_string(p.line_length));
    kv.emplace_back("line-threshold", number_text(p.line_threshold));
  }
  kv.emplace_back("connectivity", std::to_string(static_cast<int>(p.connectivity)));
  kv.emplace_back("min-area", std::to_string(p.min_area));
  kv.emplace_back("max-objects", std::to_string(p.max_objects));
  kv.emplace_back("output", std::string(to_string(p.output)));
  return kv;
}

KeyValues gauss_keys(const GaussParams& p) {
  return {
      {"sigma-x", number_text(p.sigma_x)},          {"sigma-y", number_text(p.sigma_y)},
      {"radius-x", std::to_string(p.radius_x)},     {"radius-y", std::to_string(p.radius_y)},
      {"border", std::string(to_string(p.border))}, {"border-value", number_text(p.border_value)}};
}

KeyValues brightness_keys(const BrightnessParams& p) {
  return {{"mode", std::string(to_string(p.mode))},
          {"sigma", number_text(p.sigma)},
          {"strength", number_text(p.strength)},
          {"tiles-x", std::to_string(p.tiles_x)},
          {"tiles-y", std::to_string(p.tiles_y)},
          {"clip-limit", number_text(p.clip_limit)},
          {"alpha", number_text(p.alpha)},
          {"stretch", std::string(to_string(p.stretch))},
          {"stretch-min", number_text(p.stretch_min)},
          {"stretch-max", number_text(p.stretch_max)},
          {"low-percentile", number_text(p.low_percentile)},
          {"high-percentile", number_text(p.high_percentile)}};
}

struct KeysOf {
  KeyValues operator()(const MedianParams& p) const { return median_keys(p); }
  KeyValues operator()(const WhitenParams& p) const { return whiten_keys(p); }
  KeyValues operator()(const DetectParams& p) const { return detect_keys(p); }
  KeyValues operator()(const GaussParams& p) const { return gauss_keys(p); }
  KeyValues operator()(const BrightnessParams& p) const { return brightness_keys(p); }
};

}  // namespace

KeyValues stage_key_values(const StageParams& params) {
  return std::visit(KeysOf{}, params);
}

std::string chain_flow_yaml(const std::vector<StageConfig>& stages) {
  std::string text = "[";
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (i > 0) text += ", ";
    text += "{" + stages[i].filter + ": {";
    const KeyValues kv = stage_key_values(stages[i].params);
    for (std::size_t k = 0; k < kv.size(); ++k) {
      if (k > 0) text += ", ";
      text += kv[k].first + ": " + kv[k].second;
    }
    text += "}}";
  }
  return text + "]";
}

std::string chain_flow_yaml(const ChainConfig& chain) {
  return chain_flow_yaml(chain.stages);
}

}  // namespace starsift::daemon
