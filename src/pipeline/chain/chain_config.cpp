// SPDX-License-Identifier: LGPL-2.1-or-later
// The shape of a chain document: one YAML document holding a sequence of stages, either on
// its own or under the key `chain`; each stage a map with one key, the filter's name. The
// parameters of each filter are read by its own <filter>_yaml.cpp.
#include "pipeline/chain/chain_config.hpp"

#include <cstdint>
#include <optional>
#include <utility>

#include "pipeline/chain/chain_filters.hpp"
#include "pipeline/chain/yaml_params.hpp"
#include "pipeline/regular_file.hpp"

namespace starsift {

std::string SourceLocation::str() const {
  if (line <= 0) return origin;
  return origin + ":" + std::to_string(line) + ":" + std::to_string(column);
}

namespace {

constexpr std::string_view kChainKey = "chain";  // the one top-level key of the map form

std::string stages_allowed() {
  return "a sequence of stages, each '- <filter>: {parameters}' with <filter> one of: " +
         chain_filter_names();
}

std::string stage_allowed() {
  return "one key, a filter name (" + chain_filter_names() +
         "), holding the filter's parameters, e.g. '- median: {size: 5}'";
}

std::string file_allowed() {
  return "a regular file of at most " + std::to_string(kMaxChainFileBytes) + " bytes (" +
         std::to_string(kMaxChainFileBytes >> 20) + " MiB)";
}

class ChainReader {
 public:
  explicit ChainReader(std::string_view origin) : source_{std::string(origin)} {}

  ChainConfig read(std::string_view yaml) const {
    const SourceLocation start = source_.at(YAML::Mark::null_mark());
    std::vector<YAML::Node> documents;
    try {
      documents = YAML::LoadAll(std::string(yaml));
    } catch (const YAML::Exception& e) {
      fail_at(source_.at(e.mark), "", "YAML syntax error: " + e.msg,
              "well-formed YAML, block style (a '- median: ...' line per stage) or flow style "
              "('[{median: {size: 3}}, {median: {size: 5}}]')");
    }
    if (documents.empty()) fail_empty(start, "");
    if (documents.size() > 1) {
      fail_at(source_.at(documents[1], start), "",
              "a second YAML document (after '---'); found " + std::to_string(documents.size()),
              "one document holding the whole chain");
    }
    const YAML::Node& document = documents.front();
    const SourceLocation where = source_.at(document, start);
    if (document.IsMap()) {
      const auto [chain, chain_where] = chain_of(document, where);
      return read_stages(chain, chain_where);
    }
    if (document.IsSequence() || document.IsNull()) return read_stages(document, where);
    fail_at(where, "",
            "expected a sequence of stages or a map with the key 'chain', got " +
                describe_yaml_value(document),
            stages_allowed() + "; or the map 'chain:' holding that sequence");
  }

 private:
  [[noreturn]] void fail_empty(const SourceLocation& where, std::string_view path) const {
    fail_at(where, path, "a chain needs at least one stage",
            "one or more stages of: " + chain_filter_names());
  }

  // The value of `chain:` in the map form (which may hold no other key), and where its key is.
  std::pair<YAML::Node, SourceLocation> chain_of(const YAML::Node& document,
                                                 const SourceLocation& where) const {
    std::optional<YAML::Node> chain;
    std::optional<SourceLocation> chain_where;
    for (auto it = document.begin(); it != document.end(); ++it) {
      const YAML::Node key = it->first;
      const SourceLocation key_where = source_.at(key, where);
      if (!key.IsScalar() || key.Scalar() != kChainKey) {
        std::string problem = "unknown top-level key " + describe_yaml_value(key);
        if (key.IsScalar() && find_chain_filter(key.Scalar()) != nullptr) {
          problem += " (stages go in a sequence: '- " + key.Scalar() +
                     ": ...' under 'chain:', or '[{" + key.Scalar() + ": ...}]')";
        }
        fail_at(key_where, "", problem, std::string(kChainKey));
      }
      if (chain) {
        fail_at(key_where, kChainKey,
                "given twice (first at line " + std::to_string(chain_where->line) + ", column " +
                    std::to_string(chain_where->column) + ")",
                "each key once");
      }
      chain = it->second;
      chain_where = key_where;
    }
    if (!chain) {
      fail_at(where, "", "the top-level map has no key 'chain'",
              "'chain:' holding " + stages_allowed());
    }
    return {*chain, *chain_where};
  }

  // `fallback` places a missing sequence (`chain:` alone): at its key.
  ChainConfig read_stages(const YAML::Node& stages, const SourceLocation& fallback) const {
    const SourceLocation where = source_.at(stages, fallback);
    if (stages.IsNull()) fail_empty(where, kChainKey);
    if (!stages.IsSequence()) {
      fail_at(where, kChainKey, "expected a sequence of stages, got " + describe_yaml_value(stages),
              stages_allowed());
    }
    if (stages.size() == 0) fail_empty(where, kChainKey);
    // Before any stage is read: each stage costs memory and state when the chain is built.
    if (stages.size() > static_cast<std::size_t>(kMaxChainStages)) {
      fail_at(where, kChainKey,
              std::to_string(stages.size()) + " stages, more than the limit of " +
                  std::to_string(kMaxChainStages),
              "1 to " + std::to_string(kMaxChainStages) + " stages");
    }
    ChainConfig config;
    int number = 0;
    for (const YAML::Node& stage : stages) {
      config.stages.push_back(read_stage(stage, ++number, where));
    }
    return config;
  }

  StageConfig read_stage(const YAML::Node& stage, int number,
                         const SourceLocation& chain_where) const {
    const std::string path = "stage " + std::to_string(number);
    const SourceLocation where = source_.at(stage, chain_where);
    if (!stage.IsMap()) {
      std::string problem =
          "expected a map with one key, the filter name, got " + describe_yaml_value(stage);
      // `- median` alone: the name is right, the colon is missing.
      if (stage.IsScalar() && find_chain_filter(stage.Scalar()) != nullptr) {
        problem += " (for the defaults write '- " + stage.Scalar() + ":')";
      }
      fail_at(where, path, problem, stage_allowed());
    }
    if (stage.size() != 1) fail_key_count(stage, where, path);
    const auto entry = stage.begin();
    const YAML::Node name = entry->first;
    const SourceLocation name_where = source_.at(name, where);
    const ChainFilter* filter = name.IsScalar() ? find_chain_filter(name.Scalar()) : nullptr;
    if (filter == nullptr) {
      fail_at(name_where, path, "unknown filter " + describe_yaml_value(name),
              chain_filter_names());
    }
    const std::string stage_path = path + " (" + std::string(filter->name) + ")";
    const YamlParams params(source_, entry->second, filter->keys, name_where, stage_path);
    return StageConfig{std::string(filter->name), filter->read(params), name_where};
  }

  [[noreturn]] void fail_key_count(const YAML::Node& stage, const SourceLocation& where,
                                   const std::string& path) const {
    if (stage.size() == 0) {
      fail_at(where, path, "expected one key, the filter name, got an empty map", stage_allowed());
    }
    std::string keys;
    bool filter_without_params = false;
    for (auto it = stage.begin(); it != stage.end(); ++it) {
      keys += (keys.empty() ? "" : ", ") + describe_yaml_value(it->first);
      if (it->first.IsScalar() && find_chain_filter(it->first.Scalar()) != nullptr &&
          it->second.IsNull()) {
        filter_without_params = true;
      }
    }
    std::string problem =
        "expected one key, the filter name, got " + std::to_string(stage.size()) + ": " + keys;
    // `- median:` with `size: 5` on the next line at the same depth: the parameters ended up
    // beside the filter name instead of under it.
    if (filter_without_params) {
      problem += " (are the parameters indented deeper than the filter name?)";
    }
    fail_at(where, path, problem, stage_allowed());
  }

  YamlSource source_;
};

}  // namespace

ChainConfig parse_chain_yaml(std::string_view yaml, std::string_view origin) {
  return ChainReader(origin).read(yaml);
}

ChainConfig load_chain_file(const std::string& path) {
  const std::string shown = shown_value(path, kMaxShownPathBytes);
  const auto refuse = [&](const std::string& reason) -> Error {
    return Error(shown + ": cannot read the chain file: " + reason, file_allowed());
  };
  return parse_chain_yaml(read_regular_file_or(path, kMaxChainFileBytes, refuse), path);
}

}  // namespace starsift
