// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/runtime/element_spec.hpp"

#include <array>
#include <charconv>
#include <cmath>

namespace starsift::daemon {

ElementSpec& ElementSpec::set(std::string key, std::string value) {
  for (auto& [k, v] : properties) {
    if (k == key) {
      v = std::move(value);
      return *this;
    }
  }
  properties.emplace_back(std::move(key), std::move(value));
  return *this;
}

std::optional<std::string> ElementSpec::property(std::string_view key) const {
  for (const auto& [k, v] : properties) {
    if (k == key) return v;
  }
  return std::nullopt;
}

bool ElementSpec::is_caps() const noexcept {
  return factory.find('/') != std::string::npos;
}

ElementSpec caps_spec(std::string caps) {
  return ElementSpec{std::move(caps), {}, {}};
}

namespace {

// Characters gst-launch-1.0's lexer reads as part of an unquoted value.
bool plain_launch_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9')) return true;
  switch (c) {
    case '-':
    case '_':
    case '.':
    case '/':
    case ':':
    case '+':
    case '%':
    case '@':
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string launch_quote(std::string_view value) {
  bool plain = !value.empty();
  for (const char c : value) plain = plain && plain_launch_char(c);
  if (plain) return std::string(value);
  std::string out = "\"";
  for (const char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

std::string launch_text(const std::vector<ElementSpec>& elements) {
  std::string text;
  for (const ElementSpec& e : elements) {
    if (!text.empty()) text += " ! ";
    if (e.is_caps()) {
      // As an element: bare caps are only a filter between two elements, and a description
      // may end with them (a source's caps).
      text += "capsfilter caps=" + launch_quote(e.factory);
      continue;
    }
    text += e.factory;
    if (!e.name.empty()) text += " name=" + launch_quote(e.name);
    for (const auto& [key, value] : e.properties) text += " " + key + "=" + launch_quote(value);
  }
  return text;
}

std::string number_text(double value) {
  if (!std::isfinite(value)) return value != value ? "nan" : (value > 0 ? "inf" : "-inf");
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), result.ptr);
}

}  // namespace starsift::daemon
