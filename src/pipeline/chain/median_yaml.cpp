// SPDX-License-Identifier: LGPL-2.1-or-later
// The median filter in a chain: `- median: {size: 5, border: reflect-101, border-value: 0}`.
// Every key is optional; MedianParams holds the defaults and validate() the rules.
#include <string>

#include "pipeline/chain/chain_filters.hpp"
#include "pipeline/median/params.hpp"

namespace starsift {

namespace {

constexpr std::string_view kMedianKeys[] = {"size", "border", "border-value"};

StageParams read_median(const YamlParams& yaml) {
  MedianParams params;
  if (const auto size = yaml.find("size")) {
    // In the words of MedianParams::validate(), which judges the range below.
    params.size = size->to_int("odd values " + std::to_string(MedianParams::kMinSize) + ".." +
                               std::to_string(MedianParams::kMaxSize));
    size->validate_as(&MedianParams::size, params.size);
  }
  if (const auto border = yaml.find("border")) {
    params.border = border->to_choice(parse_border_mode, border_mode_names());
  }
  if (const auto border_value = yaml.find("border-value")) {
    params.border_value = border_value->to_number("a finite number");
    border_value->validate_as(&MedianParams::border_value, params.border_value);
  }
  yaml.validate(params);
  return params;
}

}  // namespace

ChainFilter median_chain_filter() {
  return {"median", kMedianKeys, &read_median};
}

}  // namespace starsift
