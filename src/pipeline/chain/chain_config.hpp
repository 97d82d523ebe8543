// SPDX-License-Identifier: LGPL-2.1-or-later
// Chain configurations: which filters run, in which order, with which parameters. Read from
// YAML (a file, or the one-line text of a property) and validated completely before anything
// runs. The schema is documented in config/README.md.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pipeline/brightness/params.hpp"
#include "pipeline/detect/params.hpp"
#include "pipeline/gauss/params.hpp"
#include "pipeline/median/params.hpp"
#include "pipeline/whiten/params.hpp"

namespace starsift {

// Where a value came from, for messages: "chain.yaml:4:9".
struct SourceLocation {
  std::string origin;  // a file path, or "chain property"
  int line = 0;        // 1-based; 0 when unknown (str() is then the origin alone)
  int column = 0;      // 1-based

  std::string str() const;
  bool operator==(const SourceLocation&) const = default;
};

// A stage's validated parameters: one alternative per filter (the filter's own params struct).
using StageParams =
    std::variant<MedianParams, WhitenParams, DetectParams, GaussParams, BrightnessParams>;

// One stage: the filter's name and its validated parameters.
struct StageConfig {
  std::string filter;    // "median": the YAML name of the filter whose params `params` holds
  StageParams params;    // validated with the filter's Params::validate()
  SourceLocation where;  // the filter's name in the YAML text
};

struct ChainConfig {
  std::vector<StageConfig> stages;  // in running order; never empty
};

// The most stages a chain may hold. Each stage owns its frames and state; real chains have a
// handful, and a YAML alias repeated ("[*a, *a, ...]") could otherwise ask for hundreds of
// thousands of stages from a few bytes.
inline constexpr int kMaxChainStages = 64;

// The largest chain file load_chain_file() reads: real ones are a few hundred bytes.
inline constexpr std::size_t kMaxChainFileBytes = std::size_t{1} << 20;  // 1 MiB

// Parses YAML text; `origin` names it in messages (a file path or "chain property").
// Accepts block style (files) and flow style ("[{median: {size: 3}}, {median: {size: 5}}]").
// Every problem throws Error whose problem text starts with "<origin>:<line>:<column>: ",
// names the key path ("stage 2 (median): size") and the value received, and whose allowed
// text lists what would be accepted. Nothing partly read is ever returned. A chain holds 1 to
// kMaxChainStages stages.
ChainConfig parse_chain_yaml(std::string_view yaml, std::string_view origin);

// Reads and parses the file at `path`; messages name the path. A file that cannot be read
// throws Error("<path>: cannot read the chain file: <reason>"), and so does anything but a
// regular file of at most kMaxChainFileBytes (a directory, a FIFO, a device such as
// /dev/zero), refused before it is opened.
ChainConfig load_chain_file(const std::string& path);

// The filters a chain may contain, for messages and docs: "median, whiten".
std::string chain_filter_names();

}  // namespace starsift
