// SPDX-License-Identifier: LGPL-2.1-or-later
// A pipeline's `chain`: siftchain's schema, read by the chain's own parser
// (parse_chain_yaml, load_chain_file) so that a chain means and reports the same wherever it
// is written. Written inline, its errors carry their place in the config file; given as the
// path of a chain file, their place in that file.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include "daemon/config/config_reader.hpp"
#include "daemon/config/daemon_config.hpp"

namespace starsift::daemon {

// Reads `chain` (a sequence of stages, or a chain file's path, relative to `base_directory`)
// of the config whose whole text is `text`. Records its problems and returns nothing when
// the chain is refused. The chain's parser stops at a chain's first problem, so a chain
// reports one problem at most.
std::optional<PipelineChain> read_pipeline_chain(ConfigReader& reader, std::string_view text,
                                                 const Value& chain,
                                                 const std::filesystem::path& base_directory);

// The region of `text` that holds the block or flow sequence whose node starts at byte
// `start` (its anchor or tag, if any, included): [start, end). Nothing when the text there is
// not a sequence's start. Exposed for its tests.
std::optional<std::size_t> sequence_text_end(std::string_view text, std::size_t start);

// `text` with every byte outside [begin, end) a space, line breaks kept: a YAML parser reading
// it places every node of the region where it is in `text`.
std::string blank_outside(std::string_view text, std::size_t begin, std::size_t end);

}  // namespace starsift::daemon
