// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/outputs/json_text.hpp"

#include <cstdio>

namespace starsift::daemon {

void append_json_string(std::string& s, std::string_view text) {
  s += '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        s += "\\\"";
        break;
      case '\\':
        s += "\\\\";
        break;
      case '\n':
        s += "\\n";
        break;
      case '\r':
        s += "\\r";
        break;
      case '\t':
        s += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
          s += buffer;
        } else {
          s += c;
        }
    }
  }
  s += '"';
}

}  // namespace starsift::daemon
