// SPDX-License-Identifier: LGPL-2.1-or-later
// JSON strings for the outputs' records: quoted and escaped as RFC 8259 requires.
#pragma once

#include <string>
#include <string_view>

namespace starsift::daemon {

// Appends `text` as a JSON string: quotes, backslashes and control characters escaped; other
// bytes (UTF-8 included) as they are.
void append_json_string(std::string& out, std::string_view text);

}  // namespace starsift::daemon
