// The one error type of starsift: every message says what is wrong and what is allowed.
#pragma once

#include <stdexcept>
#include <string>

namespace starsift {

class Error : public std::runtime_error {
 public:
  // `problem`: what is wrong, naming the key/property and the value received.
  // `allowed`: what would have been accepted (a range, a list); may be empty for
  // failures that have no "allowed" side (a GPU fault, a file that cannot be read).
  Error(std::string problem, std::string allowed = {});

  const std::string& problem() const noexcept { return problem_; }
  const std::string& allowed() const noexcept { return allowed_; }

 private:
  std::string problem_;
  std::string allowed_;
};

}  // namespace starsift
