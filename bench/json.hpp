// SPDX-License-Identifier: LGPL-2.1-or-later
// A small ordered JSON value for the benchmark's output: objects keep their insertion order,
// non-finite numbers are written as null.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace starsift::bench {

class Json {
 public:
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;

  Json() = default;  // null
  Json(std::nullptr_t) {}
  Json(bool b) : v_(b) {}
  Json(int i) : v_(static_cast<long long>(i)) {}
  Json(long long i) : v_(i) {}
  Json(unsigned long long i) : v_(static_cast<long long>(i)) {}
  Json(unsigned long i) : v_(static_cast<long long>(i)) {}
  Json(double d) : v_(d) {}
  Json(const char* s) : v_(std::string(s)) {}
  Json(std::string s) : v_(std::move(s)) {}
  Json(std::string_view s) : v_(std::string(s)) {}

  static Json object() { return Json(Object{}); }
  static Json array() { return Json(Array{}); }

  // Object: adds `key` (or replaces its value). Returns *this.
  Json& set(std::string key, Json value);
  // Object: sets every key of the object `fields`. Returns *this.
  Json& update(const Json& fields);
  // Array: appends. Returns *this.
  Json& push(Json value);

  bool is_null() const noexcept { return std::holds_alternative<std::nullptr_t>(v_); }

  // Pretty-printed, two spaces per level; arrays of scalars stay on one line.
  void write(std::ostream& os, int indent = 0) const;

 private:
  explicit Json(Object o) : v_(std::move(o)) {}
  explicit Json(Array a) : v_(std::move(a)) {}

  std::variant<std::nullptr_t, bool, long long, double, std::string, Array, Object> v_;
};

std::ostream& operator<<(std::ostream& os, const Json& json);

}  // namespace starsift::bench
