// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/chain/chain_filters.hpp"

#include <string>
#include <vector>

namespace starsift {

std::span<const ChainFilter> chain_filters() {
  static const ChainFilter filters[] = {
      median_chain_filter(), whiten_chain_filter(),     detect_chain_filter(),
      gauss_chain_filter(),  brightness_chain_filter(),
  };
  return filters;
}

const ChainFilter* find_chain_filter(std::string_view name) {
  for (const ChainFilter& filter : chain_filters()) {
    if (filter.name == name) return &filter;
  }
  return nullptr;
}

std::string chain_filter_names() {
  std::vector<std::string_view> names;
  for (const ChainFilter& filter : chain_filters()) names.push_back(filter.name);
  return join_names(names);
}

}  // namespace starsift
