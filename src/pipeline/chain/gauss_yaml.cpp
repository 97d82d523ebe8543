// SPDX-License-Identifier: LGPL-2.1-or-later
// The Gaussian blur in a chain: `- gauss: {sigma: 2}`, or per axis `{sigma-x: 3, sigma-y: 1}`,
// with `radius` (`radius-x`, `radius-y`: 0 = ceil(4 sigma)), `border` and `border-value` as
// the median's. Every key is optional; GaussParams holds the defaults and validate() the
// rules. `sigma` sets both axes; `sigma-x` or `sigma-y` given too overrides its axis.
#include <string>

#include "pipeline/chain/chain_filters.hpp"
#include "pipeline/gauss/params.hpp"
#include "pipeline/param_checks.hpp"

namespace starsift {

namespace {

constexpr std::string_view kGaussKeys[] = {"sigma",    "sigma-x",  "sigma-y", "radius",
                                           "radius-x", "radius-y", "border",  "border-value"};

StageParams read_gauss(const YamlParams& yaml) {
  GaussParams params;
  const std::string sigma_allowed =
      "0.." + number_text(GaussParams::kMaxSigma) + " px (0: no blur along that axis)";
  const std::string radius_allowed =
      "0 (ceil(4 sigma)) or 1.." + std::to_string(GaussParams::kMaxRadius) + " px";
  if (const auto v = yaml.find("sigma")) {
    params.sigma_x = params.sigma_y = v->to_number(sigma_allowed);
    v->validate_as(&GaussParams::sigma_x, params.sigma_x);
  }
  if (const auto v = yaml.find("sigma-x")) {
    params.sigma_x = v->to_number(sigma_allowed);
    v->validate_as(&GaussParams::sigma_x, params.sigma_x);
  }
  if (const auto v = yaml.find("sigma-y")) {
    params.sigma_y = v->to_number(sigma_allowed);
    v->validate_as(&GaussParams::sigma_y, params.sigma_y);
  }
  if (const auto v = yaml.find("radius")) {
    params.radius_x = params.radius_y = v->to_int(radius_allowed);
    v->validate_as(&GaussParams::radius_x, params.radius_x);
  }
  if (const auto v = yaml.find("radius-x")) {
    params.radius_x = v->to_int(radius_allowed);
    v->validate_as(&GaussParams::radius_x, params.radius_x);
  }
  if (const auto v = yaml.find("radius-y")) {
    params.radius_y = v->to_int(radius_allowed);
    v->validate_as(&GaussParams::radius_y, params.radius_y);
  }
  if (const auto v = yaml.find("border")) {
    params.border = v->to_choice(parse_border_mode, border_mode_names());
  }
  if (const auto v = yaml.find("border-value")) {
    params.border_value = v->to_number("a finite number");
    v->validate_as(&GaussParams::border_value, params.border_value);
  }
  yaml.validate(params);
  return params;
}

}  // namespace

ChainFilter gauss_chain_filter() {
  return {"gauss", kGaussKeys, &read_gauss};
}

}  // namespace starsift
