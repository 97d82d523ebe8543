// SPDX-License-Identifier: LGPL-2.1-or-later
// The adaptive brightness correction in a chain: `- brightness: {sigma: 40, strength: 1}`,
// `- brightness: {mode: clahe, tiles-x: 8, tiles-y: 8, clip-limit: 2}`, with `alpha` and a
// stretch (`stretch: percentile`, `low-percentile`, `high-percentile`; `stretch: fixed`,
// `stretch-min`, `stretch-max`). Every key is optional; BrightnessParams holds the defaults and
// validate() the rules: each value is checked at its key, the rules that join two (low below
// high, stretch-min below stretch-max) at the stage once all are read.
#include <string>

#include "pipeline/brightness/params.hpp"
#include "pipeline/chain/chain_filters.hpp"
#include "pipeline/param_checks.hpp"

namespace starsift {

namespace {

constexpr std::string_view kBrightnessKeys[] = {
    "mode",  "sigma",   "strength",    "tiles-x",     "tiles-y",        "clip-limit",
    "alpha", "stretch", "stretch-min", "stretch-max", "low-percentile", "high-percentile"};

using P = BrightnessParams;

// A percentile: its own range checked with the other one out of the way (low against a high
// of 100, high against a low of 0), so the pair is judged only once both are read.
void read_percentile(const YamlParams& yaml, std::string_view key, double P::*field, P& params) {
  const auto value = yaml.find(key);
  if (!value) return;
  params.*field = value->to_number("a finite number from 0 up to 100 (%)");
  P probe;
  probe.low_percentile = 0.0;
  probe.high_percentile = 100.0;
  probe.*field = params.*field;
  try {
    probe.validate();
  } catch (const Error& e) {
    value->fail(number_text(params.*field) + " is not allowed", e.allowed());
  }
}

StageParams read_brightness(const YamlParams& yaml) {
  P params;
  yaml.read_choice("mode", &P::mode, parse_brightness_mode, brightness_mode_names(), params);
  yaml.read_number("sigma", &P::sigma,
                   "finite numbers above 0 up to " + number_text(P::kMaxSigma) + " px", params);
  yaml.read_number("strength", &P::strength,
                   "finite numbers from 0 up to " + number_text(P::kMaxStrength), params);
  const std::string tiles = "1.." + std::to_string(P::kMaxTiles);
  yaml.read_int("tiles-x", &P::tiles_x, tiles, params);
  yaml.read_int("tiles-y", &P::tiles_y, tiles, params);
  yaml.read_number("clip-limit", &P::clip_limit, "0 (no limit) or a finite number from 1 up",
                   params);
  yaml.read_number("alpha", &P::alpha, "finite numbers from 0 up to 1", params);
  yaml.read_choice("stretch", &P::stretch, parse_brightness_stretch, brightness_stretch_names(),
                   params);
  const std::string sample = "finite numbers from 0 up to 65535 (the format's units)";
  yaml.read_number("stretch-min", &P::stretch_min, sample, params);
  yaml.read_number("stretch-max", &P::stretch_max, sample, params);
  read_percentile(yaml, "low-percentile", &P::low_percentile, params);
  read_percentile(yaml, "high-percentile", &P::high_percentile, params);
  yaml.validate(params);
  return params;
}

}  // namespace

ChainFilter brightness_chain_filter() {
  return {"brightness", kBrightnessKeys, &read_brightness};
}

}  // namespace starsift
