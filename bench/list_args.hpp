// SPDX-License-Identifier: LGPL-2.1-or-later
// Comma-separated option values of the benchmark programs: "1,3,4" and "never,always".
#pragma once

#include <string>
#include <string_view>
#include <vector>

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

}  // namespace starsift::bench
