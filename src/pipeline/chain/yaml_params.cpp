// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/chain/yaml_params.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <system_error>

namespace starsift {

namespace {

enum class NumberText { Ok, NotANumber, OutOfRange };

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// YAML 1.2 core schema, decimal form: [-+]?[0-9]+
NumberText read_integer(std::string_view text, int& out) {
  // from_chars reads a '-' but not a '+': drop a '+', keep a '-', and allow one sign only.
  std::string_view digits = text;
  const bool plus = !digits.empty() && digits.front() == '+';
  if (plus) digits.remove_prefix(1);
  const std::string_view unsigned_digits =
      !plus && !digits.empty() && digits.front() == '-' ? digits.substr(1) : digits;
  if (unsigned_digits.empty() ||
      !std::all_of(unsigned_digits.begin(), unsigned_digits.end(), is_digit)) {
    return NumberText::NotANumber;
  }
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  if (ec == std::errc::result_out_of_range) return NumberText::OutOfRange;
  if (ec != std::errc{} || end != digits.data() + digits.size()) return NumberText::NotANumber;
  return NumberText::Ok;
}

// YAML 1.2 core schema: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?, [-+]?.inf
// (any of .inf .Inf .INF) and .nan (.NaN .NAN). Out-of-range magnitudes become ±inf (or ±0
// for a negative exponent), which is what they mean.
NumberText read_float(std::string_view text, double& out) {
  if (text == ".nan" || text == ".NaN" || text == ".NAN") {
    out = std::numeric_limits<double>::quiet_NaN();
    return NumberText::Ok;
  }
  bool negative = false;
  std::string_view body = text;
  if (!body.empty() && (body.front() == '+' || body.front() == '-')) {
    negative = body.front() == '-';
    body.remove_prefix(1);
  }
  const double sign = negative ? -1.0 : 1.0;
  if (body == ".inf" || body == ".Inf" || body == ".INF") {
    out = sign * std::numeric_limits<double>::infinity();
    return NumberText::Ok;
  }
  // from_chars also reads "inf", "nan" and "infinity", which YAML does not: insist on a digit
  // or a point first, and on the characters of the pattern above.
  if (body.empty() || !(is_digit(body.front()) || body.front() == '.')) {
    return NumberText::NotANumber;
  }
  if (!std::all_of(body.begin(), body.end(), [](char c) {
        return is_digit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
      })) {
    return NumberText::NotANumber;
  }
  double value = 0.0;
  const auto [end, ec] =
      std::from_chars(body.data(), body.data() + body.size(), value, std::chars_format::general);
  if (end != body.data() + body.size()) return NumberText::NotANumber;
  if (ec == std::errc::result_out_of_range) {
    const bool tiny =
        body.find("e-") != std::string_view::npos || body.find("E-") != std::string_view::npos;
    value = tiny ? 0.0 : std::numeric_limits<double>::infinity();
  } else if (ec != std::errc{}) {
    return NumberText::NotANumber;
  }
  out = sign * value;
  return NumberText::Ok;
}

bool is_quoted_string(const YAML::Node& node) {
  // yaml-cpp tags a quoted scalar "!", a plain one "?"; !!str is an explicit string.
  return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str";
}

}  // namespace

SourceLocation YamlSource::at(const YAML::Mark& mark) const {
  if (mark.is_null()) return {origin, 1, 1};
  return {origin, mark.line + 1, mark.column + 1};
}

SourceLocation YamlSource::at(const YAML::Node& node, const SourceLocation& fallback) const {
  if (!node.IsDefined() || node.IsNull() || node.Mark().is_null()) return fallback;
  return at(node.Mark());
}

void fail_at(const SourceLocation& where, std::string_view path, std::string_view problem,
             std::string allowed) {
  std::string text = where.str() + ": ";
  if (!path.empty()) text.append(path).append(": ");
  text.append(problem);
  throw Error(std::move(text), std::move(allowed));
}

std::string describe_yaml_value(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a sequence";
  return "'" + shown_value(node.Scalar()) + "'";
}

std::string join_names(std::span<const std::string_view> names) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

// ---- YamlParam ---------------------------------------------------------------------------

YamlParam::YamlParam(YAML::Node value, SourceLocation where, std::string path)
    : value_(std::move(value)), where_(std::move(where)), path_(std::move(path)) {}

void YamlParam::fail(std::string_view problem, std::string allowed) const {
  fail_at(where_, path_, problem, std::move(allowed));
}

void YamlParam::fail_not_allowed(const Error& e) const {
  // The rule's allowed text says what is accepted; without one, its problem text says why.
  const std::string value = shown_value(value_.Scalar());
  if (e.allowed().empty()) fail(value + " is not allowed (" + e.problem() + ")", "");
  fail(value + " is not allowed", e.allowed());
}

void YamlParam::fail_type(std::string_view expected, const std::string& allowed) const {
  std::string problem =
      "expected " + std::string(expected) + ", got " + describe_yaml_value(value_);
  if (value_.IsScalar() && is_quoted_string(value_)) {
    double ignored = 0.0;
    if (read_float(value_.Scalar(), ignored) == NumberText::Ok) {
      problem += " (a quoted string: write the number without quotes)";
    }
  }
  fail(problem, allowed);
}

int YamlParam::to_int(const std::string& allowed) const {
  if (!value_.IsScalar() || is_quoted_string(value_)) fail_type("an integer", allowed);
  int value = 0;
  switch (read_integer(value_.Scalar(), value)) {
    case NumberText::Ok:
      return value;
    case NumberText::OutOfRange:
      fail(shown_value(value_.Scalar()) + " is not allowed", allowed);
    case NumberText::NotANumber:
      break;
  }
  fail_type("an integer", allowed);
}

double YamlParam::to_number(const std::string& allowed) const {
  if (!value_.IsScalar() || is_quoted_string(value_)) fail_type("a number", allowed);
  double value = 0.0;
  if (read_float(value_.Scalar(), value) != NumberText::Ok) fail_type("a number", allowed);
  return value;
}

bool YamlParam::to_bool() const {
  const std::string allowed = "true or false";
  if (!value_.IsScalar() || is_quoted_string(value_)) fail_type("a boolean", allowed);
  const std::string& text = value_.Scalar();
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  fail_type("a boolean", allowed);
}

std::string YamlParam::to_word(const std::string& allowed) const {
  if (!value_.IsScalar()) fail_type("a name", allowed);
  return value_.Scalar();
}

// ---- YamlParams --------------------------------------------------------------------------

YamlParams::YamlParams(const YamlSource& source, const YAML::Node& params,
                       std::span<const std::string_view> keys, SourceLocation stage_where,
                       std::string stage_path)
    : stage_where_(std::move(stage_where)), stage_path_(std::move(stage_path)) {
  if (!params.IsDefined() || params.IsNull()) return;
  const std::string key_list = join_names(keys);
  if (!params.IsMap()) {
    fail_at(source.at(params, stage_where_), stage_path_,
            "expected a map of parameters, got " + describe_yaml_value(params),
            "a map with the keys " + key_list + " (each optional), or nothing for all defaults");
  }
  for (auto it = params.begin(); it != params.end(); ++it) {
    const YAML::Node key = it->first;
    const SourceLocation key_where = source.at(key, stage_where_);
    const bool known =
        key.IsScalar() && std::find(keys.begin(), keys.end(), key.Scalar()) != keys.end();
    if (!known) {
      fail_at(key_where, stage_path_, "unknown key " + describe_yaml_value(key), key_list);
    }
    const std::string path = stage_path_ + ": " + key.Scalar();
    for (const Entry& earlier : entries_) {
      if (earlier.key == key.Scalar()) {
        const SourceLocation& first = earlier.key_where;
        fail_at(key_where, path,
                "given twice (first at line " + std::to_string(first.line) + ", column " +
                    std::to_string(first.column) + ")",
                "each key once");
      }
    }
    entries_.push_back(
        {key.Scalar(), key_where, YamlParam(it->second, source.at(it->second, key_where), path)});
  }
}

std::optional<YamlParam> YamlParams::find(std::string_view key) const {
  for (const Entry& entry : entries_) {
    if (entry.key == key) return entry.param;
  }
  return std::nullopt;
}

}  // namespace starsift
