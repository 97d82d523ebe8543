// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/border.hpp"

#include "pipeline/error.hpp"

namespace starsift {

std::string_view to_string(BorderMode mode) noexcept {
  switch (mode) {
    case BorderMode::Replicate:
      return "replicate";
    case BorderMode::Reflect101:
      return "reflect-101";
    case BorderMode::Constant:
      return "constant";
  }
  return "?";
}

std::string border_mode_names() {
  return "replicate, reflect-101, constant";
}

BorderMode parse_border_mode(std::string_view name) {
  if (name == "replicate") return BorderMode::Replicate;
  if (name == "reflect-101" || name == "reflect101") return BorderMode::Reflect101;
  if (name == "constant") return BorderMode::Constant;
  throw Error("unknown border mode '" + shown_value(name) + "'", border_mode_names());
}

}  // namespace starsift
