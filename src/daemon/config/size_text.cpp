// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/config/size_text.hpp"

#include <cmath>
#include <iterator>

#include "pipeline/error.hpp"

namespace starsift::daemon {

namespace {

struct Unit {
  std::string_view name;
  std::uint64_t bytes;
};

constexpr std::uint64_t kKi = 1024;
constexpr Unit kUnits[] = {
    {"B", 1},
    {"kB", 1000},
    {"KB", 1000},  // common enough for kB that refusing it would only annoy
    {"MB", 1000 * 1000},
    {"GB", 1000 * 1000 * 1000},
    {"TB", std::uint64_t{1000} * 1000 * 1000 * 1000},
    {"KiB", kKi},
    {"MiB", kKi* kKi},
    {"GiB", kKi* kKi* kKi},
    {"TiB", kKi* kKi* kKi* kKi},
    {"PiB", kKi* kKi* kKi* kKi* kKi},
};

std::string allowed_text() {
  return "a size such as '5 GiB' or '500 MB': a number >= 0, then one of " + size_units_text() +
         ", at most 1 PiB";
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

std::string size_units_text() {
  return "B, kB, MB, GB, TB (powers of 1000), KiB, MiB, GiB, TiB, PiB (powers of 1024)";
}

std::uint64_t parse_size(std::string_view text) {
  const auto refuse = [&](const std::string& why) -> Error {
    std::string problem = "'";
    problem += shown_value(text);
    problem += "' is not a size";
    if (!why.empty()) problem += " (" + why + ")";
    return Error(problem, allowed_text());
  };
  // The number: digits, optionally a point and more digits.
  std::size_t end = 0;
  while (end < text.size() && is_digit(text[end])) ++end;
  const std::size_t integer_digits = end;
  std::size_t fraction_digits = 0;
  if (end < text.size() && text[end] == '.') {
    ++end;
    while (end < text.size() && is_digit(text[end])) {
      ++end;
      ++fraction_digits;
    }
  }
  if (integer_digits + fraction_digits == 0) throw refuse("");
  // Digits beyond these add nothing at a PiB scale and would only overflow below.
  if (integer_digits > 18 || fraction_digits > 9) throw refuse("too many digits");
  std::uint64_t whole = 0;
  for (std::size_t i = 0; i < integer_digits; ++i) whole = whole * 10 + (text[i] - '0');
  std::uint64_t fraction = 0;  // in units of 10^-fraction_digits
  std::uint64_t fraction_scale = 1;
  for (std::size_t i = 0; i < fraction_digits; ++i) {
    fraction = fraction * 10 + (text[integer_digits + 1 + i] - '0');
    fraction_scale *= 10;
  }

  std::string_view unit_text = text.substr(end);
  while (!unit_text.empty() && unit_text.front() == ' ') unit_text.remove_prefix(1);
  std::uint64_t unit = 1;
  if (!unit_text.empty()) {
    const Unit* found = nullptr;
    for (const Unit& candidate : kUnits) {
      if (candidate.name == unit_text) found = &candidate;
    }
    if (found == nullptr) throw refuse("unknown unit '" + shown_value(unit_text) + "'");
    unit = found->bytes;
  }
  // whole < 10^18 and unit <= 2^50: compare in long double before multiplying.
  const long double bytes = static_cast<long double>(whole) * unit +
                            static_cast<long double>(fraction) * unit / fraction_scale;
  if (bytes > static_cast<long double>(kMaxSizeBytes)) throw refuse("more than 1 PiB");
  return static_cast<std::uint64_t>(std::llround(bytes));
}

std::string size_text(std::uint64_t bytes) {
  constexpr std::string_view kBinary[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t unit = 0;
  while (bytes != 0 && bytes % kKi == 0 && unit + 1 < std::size(kBinary)) {
    bytes /= kKi;
    ++unit;
  }
  return std::to_string(bytes) + " " + std::string(kBinary[unit]);
}

}  // namespace starsift::daemon
