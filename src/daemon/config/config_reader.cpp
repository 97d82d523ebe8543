// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/config/config_reader.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "daemon/config/size_text.hpp"
#include "pipeline/param_checks.hpp"

namespace starsift::daemon {

namespace {

bool is_quoted(const YAML::Node& node) {
  // yaml-cpp tags a quoted scalar "!", a plain one "?"; !!str is an explicit string.
  return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str";
}

bool all_digits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The last part of a key path: "fwhm" of "pipelines[0].source.sky.fwhm".
std::string_view last_key(std::string_view key) {
  const auto dot = key.rfind('.');
  return dot == std::string_view::npos ? key : key.substr(dot + 1);
}

// Optimal string alignment distance: edits, with a swap of two neighbours counted as one.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::string range_text(double min, bool min_open, double max, std::string_view unit) {
  return std::string(min_open ? "finite numbers above " : "finite numbers from ") +
         number_text(min) + " up to " + number_text(max) +
         (unit.empty() ? "" : " " + std::string(unit));
}

}  // namespace

// ---- Value, Problems ---------------------------------------------------------------------

std::string Value::child(std::string_view name) const {
  return key.empty() ? std::string(name) : key + "." + std::string(name);
}

std::string Value::item(std::size_t index) const {
  return key + "[" + std::to_string(index) + "]";
}

void Problems::add(ConfigProblem problem, SourceLocation anchor) {
  entries_.push_back({std::move(problem), std::move(anchor)});
}

std::vector<ConfigProblem> Problems::in_file_order() const {
  std::vector<const Entry*> order;
  for (const Entry& entry : entries_) order.push_back(&entry);
  const auto place = [](const Entry* e) {
    const SourceLocation& at = e->anchor.line > 0 ? e->anchor : e->problem.where;
    return std::pair{at.line, at.column};
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](const Entry* a, const Entry* b) { return place(a) < place(b); });
  std::vector<ConfigProblem> problems;
  for (const Entry* entry : order) problems.push_back(entry->problem);
  return problems;
}

std::string quote_value(std::string_view text) {
  std::string out = "'";
  out += shown_value(text);
  out += '\'';
  return out;
}

std::filesystem::path resolve_path(const std::filesystem::path& base_directory,
                                   const std::string& written) {
  const std::filesystem::path path(written);
  if (path.is_absolute() || base_directory.empty()) return path;
  return (base_directory / path).lexically_normal();
}

// ---- names -------------------------------------------------------------------------------

std::string closest_name(std::string_view name, std::span<const std::string_view> known) {
  std::string best;
  std::size_t best_distance = 3;  // suggest at most two edits away
  for (std::string_view candidate : known) {
    // Lengths further apart than two edits cannot be close; and a long value costs no table.
    const std::size_t gap = name.size() > candidate.size() ? name.size() - candidate.size()
                                                           : candidate.size() - name.size();
    if (gap >= best_distance) continue;
    const std::size_t distance = edit_distance(name, candidate);
    const std::size_t longer = std::max(name.size(), candidate.size());
    if (distance < best_distance && 2 * distance < longer) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string unknown_name_problem(std::string_view what, const std::string& name,
                                 std::span<const std::string_view> known) {
  std::string problem = "unknown " + std::string(what) + " '" + shown_value(name) + "'";
  const std::string close = closest_name(name, known);
  if (!close.empty()) problem += " (did you mean '" + close + "'?)";
  return problem;
}

// ---- ConfigReader ------------------------------------------------------------------------

Value ConfigReader::value(const YAML::Node& node, const SourceLocation& fallback,
                          std::string key) const {
  return Value{node, source_.at(node, fallback), std::move(key)};
}

void ConfigReader::refuse(const SourceLocation& where, std::string key, std::string problem,
                          std::string allowed) {
  problems_.add(ConfigProblem{where, std::move(key), std::move(problem), std::move(allowed)});
}

void ConfigReader::refuse(const Value& value, std::string problem, std::string allowed) {
  refuse(value.where, value.key, std::move(problem), std::move(allowed));
}

namespace {

// Runs one of YamlParam's readers; its refusal is recorded at the value and nothing returned.
template <class Read>
auto with_yaml_param(ConfigReader& reader, const Value& value, Read read)
    -> std::optional<decltype(read(std::declval<const YamlParam&>()))> {
  // No key path: YamlParam's message is then "<where>: <problem>", and the path is ours.
  const YamlParam param(value.node, value.where, "");
  try {
    return read(param);
  } catch (const Error& e) {
    std::string problem = e.problem();
    const std::string prefix = value.where.str() + ": ";
    if (problem.starts_with(prefix)) problem.erase(0, prefix.size());
    reader.refuse(value, std::move(problem), e.allowed());
    return std::nullopt;
  }
}

}  // namespace

std::optional<int> ConfigReader::integer(const Value& value, int min, int max,
                                         std::string allowed) {
  if (allowed.empty()) allowed = std::to_string(min) + ".." + std::to_string(max);
  const auto parsed =
      with_yaml_param(*this, value, [&](const YamlParam& p) { return p.to_int(allowed); });
  if (!parsed) return std::nullopt;
  if (*parsed < min || *parsed > max) {
    refuse(value, std::to_string(*parsed) + " is not allowed", allowed);
    return std::nullopt;
  }
  return parsed;
}

std::optional<double> ConfigReader::any_number(const Value& value, const std::string& allowed) {
  return with_yaml_param(*this, value, [&](const YamlParam& p) { return p.to_number(allowed); });
}

std::optional<std::uint64_t> ConfigReader::unsigned64(const Value& value) {
  const std::string allowed = "whole numbers 0..18446744073709551615";
  if (!value.node.IsScalar() || is_quoted(value.node)) {
    refuse(value, "expected an integer, got " + describe_yaml_value(value.node), allowed);
    return std::nullopt;
  }
  std::string_view text = value.node.Scalar();
  if (text.starts_with('+')) text.remove_prefix(1);
  std::uint64_t parsed = 0;
  if (!all_digits(text)) {
    // A negative integer is an integer, just not one allowed here.
    const bool negative = text.starts_with('-') && all_digits(text.substr(1));
    refuse(value,
           negative ? shown_value(value.node.Scalar()) + " is not allowed"
                    : "expected an integer, got " + describe_yaml_value(value.node),
           allowed);
    return std::nullopt;
  }
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (ec != std::errc{} || end != text.data() + text.size()) {
    refuse(value, shown_value(value.node.Scalar()) + " is not allowed", allowed);
    return std::nullopt;
  }
  return parsed;
}

std::optional<double> ConfigReader::number(const Value& value, double min, bool min_open,
                                           double max, std::string_view unit) {
  const std::string allowed = range_text(min, min_open, max, unit);
  const auto parsed =
      with_yaml_param(*this, value, [&](const YamlParam& p) { return p.to_number(allowed); });
  if (!parsed) return std::nullopt;
  const bool below = min_open ? !(*parsed > min) : !(*parsed >= min);
  if (!std::isfinite(*parsed) || below || *parsed > max) {
    refuse(value, shown_value(value.node.Scalar()) + " is not allowed", allowed);
    return std::nullopt;
  }
  return parsed;
}

std::optional<bool> ConfigReader::boolean(const Value& value) {
  return with_yaml_param(*this, value, [](const YamlParam& p) { return p.to_bool(); });
}

std::optional<std::string> ConfigReader::text(const Value& value, const std::string& allowed,
                                              bool empty_ok) {
  if (!value.node.IsScalar()) {
    refuse(value, "expected text, got " + describe_yaml_value(value.node), allowed);
    return std::nullopt;
  }
  if (value.node.Scalar().empty() && !empty_ok) {
    refuse(value, "is empty", allowed);
    return std::nullopt;
  }
  return value.node.Scalar();
}

std::optional<std::string> ConfigReader::word(const Value& value,
                                              std::span<const std::string_view> names) {
  std::vector<std::string_view> list(names.begin(), names.end());
  const std::string allowed = join_names(list);
  if (!value.node.IsScalar()) {
    refuse(value, "expected a name, got " + describe_yaml_value(value.node), allowed);
    return std::nullopt;
  }
  const std::string& name = value.node.Scalar();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    refuse(value, unknown_name_problem(last_key(value.key), name, names), allowed);
    return std::nullopt;
  }
  return name;
}

std::optional<std::uint64_t> ConfigReader::size(const Value& value) {
  const auto text = this->text(value, "a size such as '5 GiB' or '500 MB'");
  if (!text) return std::nullopt;
  try {
    return parse_size(*text);
  } catch (const Error& e) {
    refuse(value, e.problem(), e.allowed());
    return std::nullopt;
  }
}

namespace {

// "25", "24.98", "30000/1001" as a reduced fraction; nothing when the text is none of these.
std::optional<FrameRate> parse_frame_rate(std::string_view text) {
  long long num = 0;
  long long den = 1;
  if (const auto slash = text.find('/'); slash != std::string_view::npos) {
    const std::string_view top = text.substr(0, slash);
    const std::string_view bottom = text.substr(slash + 1);
    if (!all_digits(top) || !all_digits(bottom) || top.size() > 9 || bottom.size() > 9) {
      return std::nullopt;
    }
    num = std::stoll(std::string(top));
    den = std::stoll(std::string(bottom));
    if (den == 0) return std::nullopt;
  } else {
    const auto point = text.find('.');
    const std::string_view whole = text.substr(0, point);
    const std::string_view fraction =
        point == std::string_view::npos ? std::string_view{} : text.substr(point + 1);
    // Six decimals are a microhertz: more is no camera's rate, and would overflow below.
    if (!all_digits(whole) || whole.size() > 9 || fraction.size() > 6 ||
        (point != std::string_view::npos && !all_digits(fraction))) {
      return std::nullopt;
    }
    num = std::stoll(std::string(whole));
    for (char digit : fraction) {
      num = num * 10 + (digit - '0');
      den *= 10;
    }
  }
  const long long divisor = num == 0 ? den : std::gcd(num, den);
  return FrameRate{static_cast<int>(num / divisor), static_cast<int>(den / divisor)};
}

}  // namespace

std::optional<FrameRate> ConfigReader::frame_rate(const Value& value, bool zero_unsets) {
  const std::string allowed = "a frame rate above 0 up to " + std::to_string(kMaxFps) +
                              ", as 25, 24.98 or 30000/1001" +
                              (zero_unsets ? "; 0 for the source's own" : "");
  if (!value.node.IsScalar()) {
    refuse(value, "expected a frame rate, got " + describe_yaml_value(value.node), allowed);
    return std::nullopt;
  }
  const std::string& text = value.node.Scalar();
  const auto rate = parse_frame_rate(text);
  if (!rate) {
    refuse(value, "expected a frame rate, got " + describe_yaml_value(value.node), allowed);
    return std::nullopt;
  }
  // Compared as fractions: num / den > kMaxFps.
  const bool too_fast =
      static_cast<long long>(rate->num) > static_cast<long long>(kMaxFps) * rate->den;
  if ((rate->num == 0 && !zero_unsets) || too_fast) {
    refuse(value, shown_value(text) + " is not allowed", allowed);
    return std::nullopt;
  }
  return rate->num == 0 ? FrameRate{} : *rate;
}

// ---- MapReader ---------------------------------------------------------------------------

MapReader::MapReader(ConfigReader& reader, const Value& map, std::span<const std::string_view> keys,
                     std::string_view what)
    : reader_(reader), map_(map) {
  std::vector<std::string_view> list(keys.begin(), keys.end());
  const std::string key_list = join_names(list);
  if (!map.node.IsDefined() || map.node.IsNull()) {
    is_map_ = true;
    return;
  }
  if (!map.node.IsMap()) {
    reader.refuse(
        map, "expected " + std::string(what) + " (a map), got " + describe_yaml_value(map.node),
        "a map with the keys " + key_list);
    return;
  }
  is_map_ = true;
  for (auto it = map.node.begin(); it != map.node.end(); ++it) {
    const YAML::Node key = it->first;
    const SourceLocation key_where = reader.source().at(key, map.where);
    const std::string name = key.IsScalar() ? key.Scalar() : std::string();
    if (!key.IsScalar() || std::find(keys.begin(), keys.end(), name) == keys.end()) {
      const std::string problem = key.IsScalar() ? unknown_name_problem("key", name, keys)
                                                 : "unknown key " + describe_yaml_value(key);
      reader.refuse(key_where, map.key, problem, key_list);
      continue;
    }
    const auto earlier = std::find_if(entries_.begin(), entries_.end(),
                                      [&](const Entry& entry) { return entry.name == name; });
    if (earlier != entries_.end()) {
      reader.refuse(key_where, map.child(name),
                    "given twice (first at line " + std::to_string(earlier->key_where.line) +
                        ", column " + std::to_string(earlier->key_where.column) + ")",
                    "each key once");
      continue;
    }
    entries_.push_back({name, key_where, reader.value(it->second, key_where, map.child(name))});
  }
}

std::optional<Value> MapReader::find(std::string_view key) const {
  for (const Entry& entry : entries_) {
    if (entry.name == key) return entry.value;
  }
  return std::nullopt;
}

std::optional<Value> MapReader::require(std::string_view key, std::string_view allowed) {
  if (auto value = find(key)) return value;
  if (is_map_) {
    reader_.refuse(map_.where, map_.child(key), "missing", std::string(allowed));
  }
  return std::nullopt;
}

void MapReader::read(std::string_view key, int& field, int min, int max, std::string allowed) {
  if (const auto v = find(key)) {
    if (const auto parsed = reader_.integer(*v, min, max, std::move(allowed))) field = *parsed;
  }
}

void MapReader::read(std::string_view key, double& field, double min, bool min_open, double max,
                     std::string_view unit) {
  if (const auto v = find(key)) {
    if (const auto parsed = reader_.number(*v, min, min_open, max, unit)) field = *parsed;
  }
}

void MapReader::read(std::string_view key, bool& field) {
  if (const auto v = find(key)) {
    if (const auto parsed = reader_.boolean(*v)) field = *parsed;
  }
}

bool is_ip_address(const std::string& text) {
  unsigned char address[sizeof(struct in6_addr)];
  return ::inet_pton(AF_INET, text.c_str(), address) == 1 ||
         ::inet_pton(AF_INET6, text.c_str(), address) == 1;
}

void read_listen_address(ConfigReader& reader, MapReader& map, std::string& field) {
  const auto v = map.find("address");
  if (!v) return;
  const std::string allowed =
      "an IPv4 or IPv6 address: 127.0.0.1 or ::1 (this host only), 0.0.0.0 or :: (every "
      "interface), or one of the host's";
  if (const auto text = reader.text(*v, allowed)) {
    if (is_ip_address(*text)) {
      field = *text;
    } else {
      reader.refuse(*v, quote_value(*text) + " is not an IP address", allowed);
    }
  }
}

}  // namespace starsift::daemon
