// SPDX-License-Identifier: LGPL-2.1-or-later
// Reading one stage's parameters from YAML: typed values, and errors that name the place, the
// key path and the value received. Each filter's YAML mapping (<filter>_yaml.cpp) is written
// with these; the filter's own Params::validate() stays the one judge of what is allowed.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/chain/chain_config.hpp"
#include "pipeline/error.hpp"

namespace starsift {

// The text being read, and how to place its nodes.
struct YamlSource {
  std::string origin;

  // Where `node` is (1-based). A node with no place of its own takes `fallback`: a missing or
  // null value (yaml-cpp marks `key:` with the token after it), or a document with no nodes.
  SourceLocation at(const YAML::Node& node, const SourceLocation& fallback) const;
  // Where a yaml-cpp mark is (1-based); a null mark is line 1, column 1.
  SourceLocation at(const YAML::Mark& mark) const;
};

// Throws Error with the problem "<where>: <path>: <problem>" (no path part when `path` is
// empty) and `allowed` as its allowed side.
[[noreturn]] void fail_at(const SourceLocation& where, std::string_view path,
                          std::string_view problem, std::string allowed);

// A value as a message shows it: a scalar in single quotes (cut by shown_value()), "a map",
// "a sequence", or "nothing" for a null or missing value.
std::string describe_yaml_value(const YAML::Node& node);

// "a, b, c"
std::string join_names(std::span<const std::string_view> names);

// One parameter as written: its value, its place, and its key path ("stage 2 (median): size").
class YamlParam {
 public:
  YamlParam(YAML::Node value, SourceLocation where, std::string path);

  const SourceLocation& where() const noexcept { return where_; }
  const std::string& path() const noexcept { return path_; }

  // A decimal integer (optional sign). Anything else, a quoted "5" included, throws naming the
  // value; `allowed` describes the accepted values ("odd integers 3..31").
  int to_int(const std::string& allowed) const;
  // A number: integer or decimal, exponent allowed, and .inf/.nan (which the filter's
  // validate() may refuse). Throws as to_int() does.
  double to_number(const std::string& allowed) const;
  // A boolean: true, True, TRUE, false, False or FALSE (YAML 1.2 core schema). Anything else,
  // a quoted "true" included, throws naming the value.
  bool to_bool() const;
  // A scalar's text, quoted or not. Throws for a map, a sequence or nothing.
  std::string to_word(const std::string& allowed) const;

  // A name converted by `parse` (e.g. parse_border_mode); its Error is re-thrown here, with
  // its own allowed text (or `allowed` when it has none).
  template <class Parse>
  auto to_choice(Parse&& parse, const std::string& allowed) const {
    const std::string word = to_word(allowed);
    try {
      return parse(word);
    } catch (const Error& e) {
      fail(e.problem(), e.allowed().empty() ? allowed : e.allowed());
    }
  }

  // Checks `value` as the `field` of an otherwise default Params with Params::validate(), so
  // the filter's own rule decides and a refusal is reported at this parameter, with the
  // value as written and the rule's allowed text. Every default is valid, so any failure
  // belongs to this parameter.
  template <class Params, class T>
  void validate_as(T Params::*field, const T& value) const {
    Params probe{};
    probe.*field = value;
    try {
      probe.validate();
    } catch (const Error& e) {
      fail_not_allowed(e);
    }
  }

  // Throws Error at this parameter: "<where>: <path>: <problem>".
  [[noreturn]] void fail(std::string_view problem, std::string allowed) const;

 private:
  [[noreturn]] void fail_not_allowed(const Error& e) const;
  [[noreturn]] void fail_type(std::string_view expected, const std::string& allowed) const;

  YAML::Node value_;
  SourceLocation where_;
  std::string path_;
};

// A stage's parameter map with its keys checked: each one known to the filter and given once.
// A null (or absent) map is accepted and leaves every parameter at its default.
class YamlParams {
 public:
  // Throws Error when `params` is neither a map nor null, or holds a key not in `keys` or a
  // key twice. `stage_where` and `stage_path` ("stage 2 (median)") place the stage.
  YamlParams(const YamlSource& source, const YAML::Node& params,
             std::span<const std::string_view> keys, SourceLocation stage_where,
             std::string stage_path);

  // The parameter `key`, or nothing when the stage leaves it at its default.
  std::optional<YamlParam> find(std::string_view key) const;

  // Reads `key`, when given, into params.*field: an integer, a number or a name converted by
  // `parse`, checked with Params::validate() at the key (see YamlParam::validate_as).
  // `allowed` says what is accepted, in validate()'s words.
  template <class Params>
  void read_int(std::string_view key, int Params::*field, const std::string& allowed,
                Params& params) const {
    if (const auto value = find(key)) {
      params.*field = value->to_int(allowed);
      value->validate_as(field, params.*field);
    }
  }
  template <class Params>
  void read_number(std::string_view key, double Params::*field, const std::string& allowed,
                   Params& params) const {
    if (const auto value = find(key)) {
      params.*field = value->to_number(allowed);
      value->validate_as(field, params.*field);
    }
  }
  template <class Params, class Enum, class Parse>
  void read_choice(std::string_view key, Enum Params::*field, Parse parse, const std::string& names,
                   Params& params) const {
    if (const auto value = find(key)) params.*field = value->to_choice(parse, names);
  }

  // Runs params.validate() on the complete set (for rules that join parameters), reporting a
  // refusal at the stage.
  template <class Params>
  void validate(const Params& params) const {
    try {
      params.validate();
    } catch (const Error& e) {
      fail_at(stage_where_, stage_path_, e.problem(), e.allowed());
    }
  }

 private:
  struct Entry {
    std::string key;
    SourceLocation key_where;
    YamlParam param;
  };
  std::vector<Entry> entries_;
  SourceLocation stage_where_;
  std::string stage_path_;
};

}  // namespace starsift
