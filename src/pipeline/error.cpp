#include "pipeline/error.hpp"

namespace starsift {

namespace {
std::string compose(const std::string& problem, const std::string& allowed) {
  return allowed.empty() ? problem : problem + "; allowed: " + allowed;
}
}  // namespace

Error::Error(std::string problem, std::string allowed)
    : std::runtime_error(compose(problem, allowed)),
      problem_(std::move(problem)),
      allowed_(std::move(allowed)) {}

}  // namespace starsift
