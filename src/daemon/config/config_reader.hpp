// SPDX-License-Identifier: LGPL-2.1-or-later
// Reading a config's YAML without stopping at the first mistake: each value is read on its
// own, a refused one is recorded (place, key path, what was found, what is allowed) and its
// default kept, and reading goes on. Scalars are read by the chain's YamlParam, so numbers,
// booleans and names mean the same in a chain and around it.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/config_errors.hpp"
#include "daemon/config/daemon_config.hpp"
#include "pipeline/chain/yaml_params.hpp"
#include "pipeline/named_values.hpp"

namespace starsift::daemon {

// One value of the file: the node, where it is, and its key path.
struct Value {
  YAML::Node node;
  SourceLocation where;
  std::string key;  // "pipelines[0].source.sky.fwhm"

  // The key path of a key in this map, or of an item in this sequence.
  std::string child(std::string_view name) const;
  std::string item(std::size_t index) const;
};

// The problems found so far, reported in the order of the file.
class Problems {
 public:
  void add(ConfigProblem problem) { add(std::move(problem), SourceLocation{}); }
  // `anchor` places a problem found in another file (a chain file) where it is referred to.
  void add(ConfigProblem problem, SourceLocation anchor);
  bool empty() const noexcept { return entries_.empty(); }
  std::size_t size() const noexcept { return entries_.size(); }
  // In file order (by line and column, a problem of another file at its anchor); problems at
  // the same place keep the order they were found in.
  std::vector<ConfigProblem> in_file_order() const;

 private:
  struct Entry {
    ConfigProblem problem;
    SourceLocation anchor;
  };
  std::vector<Entry> entries_;
};

// The text being read and the problems found in it.
class ConfigReader {
 public:
  explicit ConfigReader(std::string origin) : source_{std::move(origin)} {}

  const YamlSource& source() const noexcept { return source_; }
  const std::string& origin() const noexcept { return source_.origin; }
  Problems& problems() noexcept { return problems_; }

  // The value `node`, placed at its own mark, or at `fallback` when it has none (null).
  Value value(const YAML::Node& node, const SourceLocation& fallback, std::string key) const;

  void refuse(const Value& value, std::string problem, std::string allowed);
  void refuse(const SourceLocation& where, std::string key, std::string problem,
              std::string allowed);

  // Each returns nothing, with the problem recorded, when the value is refused. Types follow
  // the chain's rules (YamlParam): a quoted "5" is no number, 5.0 no integer.
  std::optional<int> integer(const Value& value, int min, int max, std::string allowed = {});
  // Any number, .inf and .nan included, for a rule of its own to judge.
  std::optional<double> any_number(const Value& value, const std::string& allowed);
  std::optional<std::uint64_t> unsigned64(const Value& value);
  // A finite number in [min, max] ((min, max] when `min_open`); `unit` ends the allowed text.
  std::optional<double> number(const Value& value, double min, bool min_open, double max,
                               std::string_view unit);
  std::optional<bool> boolean(const Value& value);
  // A scalar's text, quoted or not; refused when empty unless `empty_ok`.
  std::optional<std::string> text(const Value& value, const std::string& allowed,
                                  bool empty_ok = false);
  // One of `names` (may be quoted); a close miss gets "did you mean".
  std::optional<std::string> word(const Value& value, std::span<const std::string_view> names);
  template <class Enum>
  std::optional<Enum> choice(const Value& value, std::span<const Named<Enum>> table);
  // A size: "5 GiB", "500 MB", "1.5TB", or a plain integer of bytes (size_text.hpp).
  std::optional<std::uint64_t> size(const Value& value);
  // A frame rate: 25, 24.98 or "30000/1001", above 0 and at most kMaxFps; 0 too when
  // `zero_unsets` (the source's own rate).
  std::optional<FrameRate> frame_rate(const Value& value, bool zero_unsets);

 private:
  YamlSource source_;
  Problems problems_;
};

// A map's keys, checked once: each a known key, given once. A null value (`key:` alone) is
// an empty map: every key at its default.
class MapReader {
 public:
  // Records a problem when `map` is neither a map nor null (then every find() is empty), and
  // for each unknown or repeated key. `what` names the map in messages ("a pipeline").
  MapReader(ConfigReader& reader, const Value& map, std::span<const std::string_view> keys,
            std::string_view what);

  bool is_map() const noexcept { return is_map_; }
  const Value& self() const noexcept { return map_; }
  // The value of `key`, when given (the first one when repeated).
  std::optional<Value> find(std::string_view key) const;
  // Records "missing" at the map when `key` is not given, and returns nothing.
  std::optional<Value> require(std::string_view key, std::string_view allowed);

  // Reads `key`, when given and allowed, into `field`; keeps the default otherwise.
  void read(std::string_view key, int& field, int min, int max, std::string allowed = {});
  void read(std::string_view key, double& field, double min, bool min_open, double max,
            std::string_view unit);
  void read(std::string_view key, bool& field);
  template <class Enum>
  void read(std::string_view key, Enum& field, std::span<const Named<Enum>> table) {
    if (const auto v = find(key)) {
      if (const auto parsed = reader_.choice(*v, table)) field = *parsed;
    }
  }

 private:
  ConfigReader& reader_;
  Value map_;
  bool is_map_ = false;
  struct Entry {
    std::string name;
    SourceLocation key_where;
    Value value;
  };
  std::vector<Entry> entries_;
};

// A value as messages quote it: 'text', cut by shown_value().
std::string quote_value(std::string_view text);

// `written` as a path: a relative one is taken from `base_directory`, when that is not empty.
std::filesystem::path resolve_path(const std::filesystem::path& base_directory,
                                   const std::string& written);

// The known name closest to `name` when it looks like a misspelling of it (an edit distance of
// at most 2, and less than half its length), else empty.
std::string closest_name(std::string_view name, std::span<const std::string_view> known);

// "unknown <what> '<name>'", with " (did you mean '<close>'?)" when one is close.
std::string unknown_name_problem(std::string_view what, const std::string& name,
                                 std::span<const std::string_view> known);

template <class Enum>
std::optional<Enum> ConfigReader::choice(const Value& value, std::span<const Named<Enum>> table) {
  std::vector<std::string_view> names;
  for (const auto& entry : table) names.push_back(entry.name);
  const auto name = word(value, names);
  if (!name) return std::nullopt;
  for (const auto& entry : table) {
    if (entry.name == *name) return entry.value;
  }
  return std::nullopt;
}

// An IPv4 or IPv6 address literal (inet_pton's forms).
bool is_ip_address(const std::string& text);

// A server's `address` key (metrics, rtsp), when given: an IP address of this host to listen on.
void read_listen_address(ConfigReader& reader, MapReader& map, std::string& field);

}  // namespace starsift::daemon
