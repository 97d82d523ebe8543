// SPDX-License-Identifier: LGPL-2.1-or-later
// Why the text is cut out rather than the parsed node handed over: parse_chain_yaml() reads
// text, and its messages place problems in that text. Given the config's whole text with
// everything but the chain blanked out, it places them where they are in the config file, and
// its rules and messages stay the only ones. Should the region found be wrong (YAML laid out
// in a way the scan below does not know), the stages read would differ from the node's, and
// the chain is then read from the node, re-emitted, with its problems placed at `chain:`.
#include "daemon/config/chain_section.hpp"

#include <algorithm>

#include "pipeline/chain/chain_filters.hpp"

namespace starsift::daemon {

namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// The byte offset of a 1-based line and column, or nothing when the text is shorter.
std::optional<std::size_t> offset_of(std::string_view text, int line, int column) {
  std::size_t offset = 0;
  for (int l = 1; l < line; ++l) {
    const auto newline = text.find('\n', offset);
    if (newline == std::string_view::npos) return std::nullopt;
    offset = newline + 1;
  }
  offset += static_cast<std::size_t>(column - 1);
  if (offset > text.size()) return std::nullopt;
  return offset;
}

std::size_t line_start(std::string_view text, std::size_t offset) {
  const auto newline = offset == 0 ? std::string_view::npos : text.rfind('\n', offset - 1);
  return newline == std::string_view::npos ? 0 : newline + 1;
}

// Past an anchor (&a), a tag (!!seq), spaces, comments and line breaks.
std::size_t skip_properties(std::string_view text, std::size_t at) {
  while (at < text.size()) {
    const char c = text[at];
    if (c == '&' || c == '!') {
      while (at < text.size() && !is_blank(text[at]) && text[at] != '\n') ++at;
    } else if (c == '#') {
      while (at < text.size() && text[at] != '\n') ++at;
    } else if (is_blank(c) || c == '\n') {
      ++at;
    } else {
      break;
    }
  }
  return at;
}

// A block sequence ends before the first line that is neither blank nor a comment and is
// indented less than its '-', or as much without starting with '-'.
std::size_t block_sequence_end(std::string_view text, std::size_t dash) {
  const std::size_t indent = dash - line_start(text, dash);
  auto next = text.find('\n', dash);
  while (next != std::string_view::npos) {
    const std::size_t start = next + 1;
    const auto end_of_line = text.find('\n', start);
    const std::string_view line = text.substr(
        start, (end_of_line == std::string_view::npos ? text.size() : end_of_line) - start);
    const auto first = line.find_first_not_of(' ');
    const bool blank = first == std::string_view::npos || line[first] == '#' ||
                       line.find_first_not_of(" \t\r") == std::string_view::npos;
    if (line.starts_with("---") || line.starts_with("...")) return start;
    if (!blank) {
      const bool dash_here =
          line[first] == '-' && (first + 1 == line.size() || is_blank(line[first + 1]));
      if (first < indent || (first == indent && !dash_here)) return start;
    }
    next = end_of_line;
  }
  return text.size();
}

// A flow collection ends at the bracket that closes the one at `open`; quoted scalars and
// comments are skipped.
std::optional<std::size_t> flow_end(std::string_view text, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    const char before = i > open ? text[i - 1] : ' ';
    const bool scalar_start = is_blank(before) || before == '\n' || before == '[' ||
                              before == '{' || before == ',' || before == ':';
    if ((c == '\'' || c == '"') && scalar_start) {
      for (++i; i < text.size(); ++i) {
        if (c == '"' && text[i] == '\\') {
          ++i;
        } else if (text[i] == c) {
          if (c == '\'' && i + 1 < text.size() && text[i + 1] == '\'') {
            ++i;  // '' inside a single-quoted scalar
          } else {
            break;
          }
        }
      }
    } else if (c == '#' && (is_blank(before) || before == '\n')) {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      if (--depth == 0) return i + 1;
    }
  }
  return std::nullopt;
}

// ---- the chain parser's messages, in the config's terms ----------------------------------

struct Placed {
  std::optional<SourceLocation> where;  // the place the message starts with, when it has one
  std::string key;                      // the key path within the chain: "[1].median.size"
  std::string problem;
};

bool take_number(std::string_view& text, int& number) {
  std::size_t digits = 0;
  while (digits < text.size() && digits < 9 && text[digits] >= '0' && text[digits] <= '9') {
    ++digits;
  }
  if (digits == 0) return false;
  number = std::stoi(std::string(text.substr(0, digits)));
  text.remove_prefix(digits);
  return true;
}

// "<origin>:<line>:<column>: " at the start of `message`, when there.
std::optional<SourceLocation> take_place(std::string_view& message, const std::string& origin) {
  std::string_view rest = message;
  if (!rest.starts_with(origin + ":")) return std::nullopt;
  rest.remove_prefix(origin.size() + 1);
  SourceLocation where{origin, 0, 0};
  if (!take_number(rest, where.line) || !rest.starts_with(':')) return std::nullopt;
  rest.remove_prefix(1);
  if (!take_number(rest, where.column) || !rest.starts_with(": ")) return std::nullopt;
  rest.remove_prefix(2);
  message = rest;
  return where;
}

// The chain's key paths ("stage 2 (median): size: ", "stage 2: ", "chain: ") as config key
// paths ("[1].median.size"); a message of another shape is kept whole.
Placed place_chain_message(const std::string& message, const std::string& origin) {
  std::string_view rest = message;
  Placed placed;
  placed.where = take_place(rest, origin);
  if (rest.starts_with("chain: ")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("stage ")) {
    std::string_view after = rest.substr(6);
    int number = 0;
    if (take_number(after, number) && number >= 1) {
      std::string key = "[" + std::to_string(number - 1) + "]";
      if (after.starts_with(" (")) {
        const auto close = after.find("): ");
        const ChainFilter* filter = close == std::string_view::npos
                                        ? nullptr
                                        : find_chain_filter(after.substr(2, close - 2));
        if (filter != nullptr) {
          key += "." + std::string(filter->name);
          after.remove_prefix(close + 3);
          // A parameter's name, when the message goes on with one of the filter's keys.
          for (std::string_view param : filter->keys) {
            if (after.starts_with(std::string(param) + ": ")) {
              key += "." + std::string(param);
              after.remove_prefix(param.size() + 2);
              break;
            }
          }
          placed.key = key;
          rest = after;
        }
      } else if (after.starts_with(": ")) {
        placed.key = key;
        rest = after.substr(2);
      }
    }
  }
  placed.problem = std::string(rest);
  return placed;
}

// The filters of `config` are those the node's stages name, in order.
bool same_stages(const ChainConfig& config, const YAML::Node& node) {
  if (!node.IsSequence() || node.size() != config.stages.size()) return false;
  for (std::size_t i = 0; i < config.stages.size(); ++i) {
    const YAML::Node stage = node[i];
    if (!stage.IsMap() || stage.size() != 1) return false;
    const YAML::Node name = stage.begin()->first;
    if (!name.IsScalar() || name.Scalar() != config.stages[i].filter) return false;
  }
  return true;
}

class ChainSection {
 public:
  ChainSection(ConfigReader& reader, std::string_view text, const Value& chain)
      : reader_(reader), text_(text), chain_(chain) {}

  std::optional<PipelineChain> inline_chain() {
    const auto padded = padded_text();
    if (padded) {
      try {
        ChainConfig config = parse_chain_yaml(*padded, reader_.origin());
        if (same_stages(config, chain_.node)) return PipelineChain{std::move(config), {}};
      } catch (const Error& e) {
        if (e.problem().find("YAML syntax error") == std::string::npos) {
          record(e, /*placed_in_file=*/true);
          return std::nullopt;
        }
        // The whole file parsed, so a syntax error is the region's: read the node instead.
      }
    }
    return emitted_chain();
  }

  std::optional<PipelineChain> file_chain(const std::filesystem::path& path) {
    try {
      return PipelineChain{load_chain_file(path.string()), path};
    } catch (const Error& e) {
      Placed placed = place_chain_message(e.problem(), path.string());
      if (placed.where) {
        reader_.problems().add(
            {*placed.where, chain_.key + placed.key, std::move(placed.problem), e.allowed()},
            chain_.where);
      } else {
        reader_.refuse(chain_, e.problem(), e.allowed());
      }
      return std::nullopt;
    }
  }

 private:
  std::optional<std::string> padded_text() const {
    const auto start = offset_of(text_, chain_.where.line, chain_.where.column);
    if (!start || chain_.where.origin != reader_.origin()) return std::nullopt;
    const auto end = sequence_text_end(text_, *start);
    if (!end) return std::nullopt;
    return blank_outside(text_, *start, *end);
  }

  // The node written out again and parsed: the same stages, but problems placed at `chain:`.
  std::optional<PipelineChain> emitted_chain() {
    YAML::Emitter out;
    out << chain_.node;
    try {
      return PipelineChain{parse_chain_yaml(out.c_str(), reader_.origin()), {}};
    } catch (const Error& e) {
      record(e, /*placed_in_file=*/false);
      return std::nullopt;
    }
  }

  void record(const Error& e, bool placed_in_file) {
    Placed placed = place_chain_message(e.problem(), reader_.origin());
    const SourceLocation where = placed_in_file && placed.where ? *placed.where : chain_.where;
    reader_.refuse(where, chain_.key + placed.key, std::move(placed.problem), e.allowed());
  }

  ConfigReader& reader_;
  std::string_view text_;
  const Value& chain_;
};

std::string stages_allowed() {
  return "a sequence of stages, each '- <filter>: {parameters}' with <filter> one of: " +
         chain_filter_names() + "; or the path of a chain file";
}

}  // namespace

std::optional<std::size_t> sequence_text_end(std::string_view text, std::size_t start) {
  const std::size_t at = skip_properties(text, start);
  if (at >= text.size()) return std::nullopt;
  if (text[at] == '[') return flow_end(text, at);
  if (text[at] == '-') return block_sequence_end(text, at);
  return std::nullopt;
}

std::string blank_outside(std::string_view text, std::size_t begin, std::size_t end) {
  std::string out(text);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if ((i < begin || i >= end) && out[i] != '\n') out[i] = ' ';
  }
  return out;
}

std::optional<PipelineChain> read_pipeline_chain(ConfigReader& reader, std::string_view text,
                                                 const Value& chain,
                                                 const std::filesystem::path& base_directory) {
  const YAML::Node& node = chain.node;
  if (!node.IsDefined() || node.IsNull()) {
    reader.refuse(chain, "a chain needs at least one stage", stages_allowed());
    return std::nullopt;
  }
  ChainSection section(reader, text, chain);
  if (node.IsSequence()) return section.inline_chain();
  if (node.IsScalar()) {
    if (node.Scalar().empty()) {
      reader.refuse(chain, "is empty", stages_allowed());
      return std::nullopt;
    }
    return section.file_chain(resolve_path(base_directory, node.Scalar()));
  }
  std::string problem = "expected a sequence of stages, got a map";
  const YAML::Node first = node.size() > 0 ? node.begin()->first : YAML::Node();
  if (first.IsScalar() && find_chain_filter(first.Scalar()) != nullptr) {
    problem += " (stages go in a sequence: '- " + first.Scalar() + ": ...')";
  }
  reader.refuse(chain, problem, stages_allowed());
  return std::nullopt;
}

}  // namespace starsift::daemon
