// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bench/json.hpp"

#include <cmath>
#include <cstdio>

namespace starsift::bench {

namespace {

void write_string(std::ostream& os, const std::string& s) {
  os << '"';
  for (const char c : s) {
    switch (c) {
      case '"':
        os << "\\\"";
        break;
      case '\\':
        os << "\\\\";
        break;
      case '\n':
        os << "\\n";
        break;
      case '\t':
        os << "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          os << buf;
        } else {
          os << c;
        }
    }
  }
  os << '"';
}

}  // namespace

Json& Json::set(std::string key, Json value) {
  auto& object = std::get<Object>(v_);
  for (auto& [k, v] : object) {
    if (k == key) {
      v = std::move(value);
      return *this;
    }
  }
  object.emplace_back(std::move(key), std::move(value));
  return *this;
}

Json& Json::update(const Json& fields) {
  for (const auto& [k, v] : std::get<Object>(fields.v_)) set(k, v);
  return *this;
}

Json& Json::push(Json value) {
  std::get<Array>(v_).push_back(std::move(value));
  return *this;
}

void Json::write(std::ostream& os, int indent) const {
  const std::string pad(indent + 2, ' ');
  const std::string close(indent, ' ');
  std::visit(
      [&]<class T>(const T& v) {
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          os << "null";
        } else if constexpr (std::is_same_v<T, bool>) {
          os << (v ? "true" : "false");
        } else if constexpr (std::is_same_v<T, long long>) {
          os << v;
        } else if constexpr (std::is_same_v<T, double>) {
          if (!std::isfinite(v)) {
            os << "null";
          } else {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.6g", v);
            os << buf;
          }
        } else if constexpr (std::is_same_v<T, std::string>) {
          write_string(os, v);
        } else if constexpr (std::is_same_v<T, Array>) {
          bool scalars = true;
          for (const Json& e : v) {
            scalars &=
                !std::holds_alternative<Array>(e.v_) && !std::holds_alternative<Object>(e.v_);
          }
          if (v.empty() || scalars) {
            os << '[';
            for (std::size_t i = 0; i < v.size(); ++i) {
              if (i) os << ", ";
              v[i].write(os, indent);
            }
            os << ']';
            return;
          }
          os << "[\n";
          for (std::size_t i = 0; i < v.size(); ++i) {
            os << pad;
            v[i].write(os, indent + 2);
            os << (i + 1 < v.size() ? ",\n" : "\n");
          }
          os << close << ']';
        } else {
          if (v.empty()) {
            os << "{}";
            return;
          }
          os << "{\n";
          for (std::size_t i = 0; i < v.size(); ++i) {
            os << pad;
            write_string(os, v[i].first);
            os << ": ";
            v[i].second.write(os, indent + 2);
            os << (i + 1 < v.size() ? ",\n" : "\n");
          }
          os << close << '}';
        }
      },
      v_);
}

std::ostream& operator<<(std::ostream& os, const Json& json) {
  json.write(os);
  return os << '\n';
}

}  // namespace starsift::bench
