// SPDX-License-Identifier: LGPL-2.1-or-later
// Enum values by name, for parameters written as words in YAML and properties: one table per
// enum, in the order messages list the names.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "pipeline/error.hpp"

namespace starsift {

template <class Enum>
struct Named {
  std::string_view name;
  Enum value;
};

template <class Enum>
std::string_view name_of(std::span<const Named<Enum>> table, Enum value) noexcept {
  for (const auto& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return "?";
}

// "a, b, c"
template <class Enum>
std::string names_of(std::span<const Named<Enum>> table) {
  std::string names;
  for (const auto& entry : table) {
    if (!names.empty()) names += ", ";
    names += entry.name;
  }
  return names;
}

// The value called `name`; throws Error("unknown <what> '<name>'", the names) otherwise.
// `what` names the parameter: "whiten fit".
template <class Enum>
Enum parse_named(std::span<const Named<Enum>> table, std::string_view what, std::string_view name) {
  for (const auto& entry : table) {
    if (entry.name == name) return entry.value;
  }
  throw Error("unknown " + std::string(what) + " '" + shown_value(name) + "'", names_of(table));
}

}  // namespace starsift
