// SPDX-License-Identifier: LGPL-2.1-or-later
// The options of the benchmark programs: "--name value" or "--name=value", one at a time, and
// comma-separated values: "1,3,4" and "never,always".
#pragma once

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "pipeline/error.hpp"

namespace starsift::bench {

inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> v;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    const std::size_t comma = s.find(',', pos);
    v.push_back(s.substr(pos, comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return v;
}

inline std::vector<int> parse_ints(const std::string& s) {
  std::vector<int> v;
  for (const std::string& item : split_list(s)) v.push_back(std::stoi(item));
  return v;
}

// "a,b" through `parse` (a parser of one name that throws on an unknown one).
template <class Parse>
auto parse_names(const std::string& s, Parse parse) {
  std::vector<decltype(parse(std::string_view{}))> v;
  for (const std::string& item : split_list(s)) v.push_back(parse(item));
  return v;
}

// "a,b,,c" -> a, b, c: the empty items dropped.
inline std::vector<std::string> split_nonempty(std::string_view list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (comma > start) out.emplace_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// The whole of `s` as a number; throws Error naming `option` and the value otherwise.
template <class T>
T parse_number(std::string_view s, std::string_view option) {
  T value{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    throw Error(std::string(option) + ": '" + std::string(s) + "' is not a number");
  }
  return value;
}

// Lower case without '-' and '_': "network-unpacked", "NetworkUnpacked" and "network_unpacked"
// all name the same thing.
inline std::string normalized_name(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c != '-' && c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// The value among `values` whose to_string() names it (normalized_name()); throws Error naming
// `option`, the `what` not known and every name allowed otherwise.
template <class Values, class ToString>
auto parse_named(std::string_view name, const Values& values, ToString to_string,
                 std::string_view option, std::string_view what) {
  std::string names;
  for (const auto& v : values) {
    if (normalized_name(to_string(v)) == normalized_name(name)) return v;
    names += (names.empty() ? "" : ", ") + std::string(to_string(v));
  }
  throw Error(
      std::string(option) + ": unknown " + std::string(what) + " '" + std::string(name) + "'",
      names + " or all");
}

// The options of a command line, one at a time: "--name value" and "--name=value" alike.
class OptionReader {
 public:
  OptionReader(int argc, char** argv) : argc_(argc), argv_(argv) {}

  // Moves to the next option; false after the last.
  bool advance() {
    if (++i_ >= argc_) return false;
    arg_ = argv_[i_];
    value_.clear();
    has_value_ = false;
    if (const std::size_t eq = arg_.find('=');
        arg_.rfind("--", 0) == 0 && eq != std::string::npos) {
      value_ = arg_.substr(eq + 1);
      arg_ = arg_.substr(0, eq);
      has_value_ = true;
    }
    return true;
  }

  // The option's name ("--name" of "--name=value").
  const std::string& arg() const { return arg_; }

  // The option's value: after its '=', else the next argument (taken); throws Error when
  // there is none.
  std::string value() {
    if (has_value_) return value_;
    if (i_ + 1 >= argc_) throw Error(arg_ + " needs a value");
    return argv_[++i_];
  }

 private:
  int argc_;
  char** argv_;
  int i_ = 0;
  std::string arg_;
  std::string value_;
  bool has_value_ = false;
};

}  // namespace starsift::bench
