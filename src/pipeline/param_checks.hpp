// SPDX-License-Identifier: LGPL-2.1-or-later
// The messages a filter's parameter checks give: "<filter> <key> <value> is not allowed", with
// what is allowed as the hint. One object per filter ("whiten", "detect", "tracker").
#pragma once

#include <string>
#include <string_view>

namespace starsift {

// Numbers in messages: the shortest form that reads back ("0.001", "1e+300", "nan").
std::string number_text(double value);

class ParamChecks {
 public:
  explicit constexpr ParamChecks(std::string_view filter) noexcept : filter_(filter) {}

  // Throws Error("<filter> <key> <value> is not allowed", allowed).
  [[noreturn]] void refuse(std::string_view key, const std::string& value,
                           const std::string& allowed) const;
  // Refuses `value` outside [min, max], saying "min..max".
  void check_int(std::string_view key, int value, int min, int max) const;
  // Refuses a `value` that is not finite or lies outside [min, max] ((min, max] when
  // `min_open`), saying "finite numbers from|above <min> up to <max> <unit>".
  void check_number(std::string_view key, double value, double min, bool min_open, double max,
                    std::string_view unit) const;

 private:
  std::string_view filter_;
};

}  // namespace starsift
