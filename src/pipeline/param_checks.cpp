#include "pipeline/param_checks.hpp"

#include <sstream>

#include "pipeline/error.hpp"

namespace starsift {

std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

void ParamChecks::refuse(std::string_view key, const std::string& value,
                         const std::string& allowed) const {
  throw Error(std::string(filter_) + " " + std::string(key) + " " + value + " is not allowed",
              allowed);
}

void ParamChecks::check_int(std::string_view key, int value, int min, int max) const {
  if (value < min || value > max) {
    refuse(key, std::to_string(value), std::to_string(min) + ".." + std::to_string(max));
  }
}

}  // namespace starsift
