// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/error.hpp"

#include <string>

namespace starsift {

namespace {
std::string compose(const std::string& problem, const std::string& allowed) {
  return allowed.empty() ? problem : problem + "; allowed: " + allowed;
}
}  // namespace

std::string shown_value(std::string_view value, std::size_t max_bytes) {
  if (value.size() <= max_bytes) return std::string(value);
  std::size_t cut = max_bytes;
  // Back off continuation bytes (10xxxxxx) so the cut falls between characters.
  while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;
  return std::string(value.substr(0, cut)) + "\xE2\x80\xA6 (" + std::to_string(value.size()) +
         " bytes)";  // U+2026, the ellipsis, in UTF-8
}

Error::Error(std::string problem, std::string allowed)
    : std::runtime_error(compose(problem, allowed)),
      problem_(std::move(problem)),
      allowed_(std::move(allowed)) {}

}  // namespace starsift
