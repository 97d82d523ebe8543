// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/gauss/params.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "pipeline/error.hpp"
#include "pipeline/param_checks.hpp"

namespace starsift {

namespace {

int auto_radius(double sigma, int radius) {
  if (sigma <= 0.0) return 0;
  if (radius > 0) return radius;
  return std::max(1, static_cast<int>(std::ceil(GaussParams::kRadiusPerSigma * sigma)));
}

void check_sigma(const char* name, double sigma) {
  if (!std::isfinite(sigma) || sigma < 0.0 || sigma > GaussParams::kMaxSigma) {
    throw Error(std::string("gauss ") + name + " " + number_text(sigma) + " is not allowed",
                "0.." + number_text(GaussParams::kMaxSigma) + " px (0: no blur along that axis)");
  }
}

void check_radius(const char* name, int radius) {
  if (radius < 0 || radius > GaussParams::kMaxRadius) {
    throw Error(std::string("gauss ") + name + " " + std::to_string(radius) + " is not allowed",
                "0 (ceil(4 sigma)) or 1.." + std::to_string(GaussParams::kMaxRadius) + " px");
  }
}

}  // namespace

int GaussParams::effective_radius_x() const noexcept {
  return auto_radius(sigma_x, radius_x);
}

int GaussParams::effective_radius_y() const noexcept {
  return auto_radius(sigma_y, radius_y);
}

void GaussParams::validate() const {
  check_sigma("sigma-x", sigma_x);
  check_sigma("sigma-y", sigma_y);
  check_radius("radius-x", radius_x);
  check_radius("radius-y", radius_y);
  if (!std::isfinite(border_value)) {
    throw Error("gauss border-value is not a finite number", "a finite number");
  }
}

void GaussParams::validate_for(PixelFormat format) const {
  validate();
  if (!gauss_supports(format)) {
    throw Error("gauss: format " + std::string(to_string(format)) + " is not supported",
                "GRAY8, GRAY16_LE, GRAY32F and the 4-channel formats");
  }
  const FormatInfo& info = format_info(format);
  if (info.is_float) return;
  const double max = info.bytes_per_sample == 1 ? 255.0 : 65535.0;
  if (border_value < 0.0 || border_value > max) {
    throw Error("gauss border-value " + number_text(border_value) + " does not fit " +
                    std::string(info.name),
                "0.." + number_text(max));
  }
}

void GaussParams::validate_frames(ConstImageView in, ImageView out) const {
  validate_for(in.format);
  if (in.width != out.width || in.height != out.height || in.format != out.format) {
    throw Error("gauss: output frame differs from input frame in size or format",
                "identical size and format");
  }
}

std::vector<float> gauss_weights(double sigma, int radius) {
  if (sigma <= 0.0 || radius <= 0) return {1.0f};
  std::vector<double> w(static_cast<std::size_t>(2 * radius + 1));
  double sum = 0.0;
  for (int i = -radius; i <= radius; ++i) {
    const double v = std::exp(-static_cast<double>(i) * i / (2.0 * sigma * sigma));
    w[static_cast<std::size_t>(i + radius)] = v;
    sum += v;
  }
  std::vector<float> out(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) out[i] = static_cast<float>(w[i] / sum);
  return out;
}

int gauss_half_weights(double sigma, int radius, std::span<float> out) noexcept {
  if (sigma <= 0.0 || radius <= 0 || out.empty()) {
    if (!out.empty()) out[0] = 1.0f;
    return 0;
  }
  radius = std::min(radius, static_cast<int>(out.size()) - 1);
  const auto tap = [&](int i) {
    return std::exp(-static_cast<double>(i) * i / (2.0 * sigma * sigma));
  };
  double sum = 0.0;  // in gauss_weights()'s order, so the quotients are its
  for (int i = -radius; i <= radius; ++i) sum += tap(i);
  for (int i = 0; i <= radius; ++i)
    out[static_cast<std::size_t>(i)] = static_cast<float>(tap(i) / sum);
  return radius;
}

bool gauss_cpu_recursive(const GaussParams& params) noexcept {
  const auto thin = [](double sigma) {
    return sigma > 0.0 && sigma < GaussParams::kRecursiveMinSigma;
  };
  return std::max(params.sigma_x, params.sigma_y) >= GaussParams::kRecursiveFromSigma &&
         !thin(params.sigma_x) && !thin(params.sigma_y);
}

bool gauss_supports(PixelFormat format) noexcept {
  const FormatInfo& info = format_info(format);
  return info.color_channels >= 1;
}

}  // namespace starsift
