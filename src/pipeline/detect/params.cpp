// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/detect/params.hpp"

#include <cmath>

#include "pipeline/error.hpp"
#include "pipeline/named_values.hpp"
#include "pipeline/param_checks.hpp"

namespace starsift {

namespace {

constexpr Named<DetectBackground> kBackgroundNames[] = {{"mesh", DetectBackground::Mesh},
                                                        {"global", DetectBackground::Global},
                                                        {"none", DetectBackground::None},
                                                        {"auto", DetectBackground::Auto}};
constexpr Named<DetectFilter> kFilterNames[] = {{"none", DetectFilter::None},
                                                {"default", DetectFilter::Default},
                                                {"gaussian", DetectFilter::Gaussian}};
constexpr Named<DetectThreshold> kThresholdNames[] = {{"sigma", DetectThreshold::Sigma},
                                                      {"absolute", DetectThreshold::Absolute}};
constexpr Named<DetectOutput> kOutputNames[] = {{"input", DetectOutput::Input},
                                                {"labels", DetectOutput::Labels},
                                                {"overlay", DetectOutput::Overlay}};
constexpr Named<Connectivity> kConnectivityNames[] = {{"4", Connectivity::Four},
                                                      {"8", Connectivity::Eight}};

constexpr ParamChecks kChecks{"detect"};

}  // namespace

void DetectParams::validate() const {
  kChecks.check_int("mesh", mesh, kMinMesh, kMaxMesh);
  // A Gaussian of this FWHM fits the largest stamp: radius ceil(1.5 fwhm) <= kMaxFilterRadius.
  const double max_fwhm = kMaxFilterRadius / 1.5;
  if (!std::isfinite(fwhm) || !(fwhm >= 0.5) || fwhm > max_fwhm) {
    kChecks.refuse("fwhm", number_text(fwhm), "0.5.." + number_text(max_fwhm) + " (pixels)");
  }
  if (!std::isfinite(threshold) || !(threshold > 0.0)) {
    kChecks.refuse("threshold", number_text(threshold), "a finite number > 0");
  }
  if (connectivity != Connectivity::Four && connectivity != Connectivity::Eight) {
    kChecks.refuse("connectivity", std::to_string(static_cast<int>(connectivity)), "4, 8");
  }
  if (line_length != 0 &&
      (line_length < kMinLineLength || line_length > kMaxLineLength || line_length % 2 == 0)) {
    kChecks.refuse("line-length", std::to_string(line_length),
                   "0 (off) or an odd length " + std::to_string(kMinLineLength) + ".." +
                       std::to_string(kMaxLineLength) + " (pixels)");
  }
  if (!std::isfinite(line_threshold) || !(line_threshold > 0.0)) {
    kChecks.refuse("line-threshold", number_text(line_threshold), "a finite number > 0");
  }
  if (line_length != 0 && threshold_mode != DetectThreshold::Sigma) {
    kChecks.refuse("line-length", std::to_string(line_length),
                   "0 with threshold-mode absolute: the line channel sums significances");
  }
  kChecks.check_int("min-area", min_area, 1, 1 << 20);
  kChecks.check_int("max-objects", max_objects, 1, kMaxMaxObjects);
  link.validate();
}

void DetectParams::validate_for(const FrameShape& shape) const {
  validate();
  if (!detect_supports(shape.format)) {
    throw Error("detect does not read " + std::string(to_string(shape.format)) + " frames",
                "GRAY8, GRAY16_LE, GRAY32F");
  }
}

bool detect_supports(PixelFormat format) noexcept {
  return format == PixelFormat::Gray8 || format == PixelFormat::Gray16 ||
         format == PixelFormat::Gray32F;
}

DetectBackgroundPlan detect_background_plan(const DetectParams& params,
                                            const FrameShape& shape) noexcept {
  DetectBackground background = params.background;
  if (background == DetectBackground::Auto) {
    background = shape.significance.present() ? DetectBackground::None : DetectBackground::Mesh;
  }
  DetectBackgroundPlan plan{background};
  if (background == DetectBackground::None && shape.significance.present()) {
    plan.level = static_cast<float>(shape.significance.offset);
    plan.noise = static_cast<float>(shape.significance.gain);
  }
  return plan;
}

FrameShape detect_output_shape(const DetectParams& params, const FrameShape& in) noexcept {
  switch (params.output) {
    case DetectOutput::Input:
      return in;
    case DetectOutput::Labels:
      return {in.width, in.height, PixelFormat::Gray16, 16};
    case DetectOutput::Overlay:
      return {in.width, in.height, PixelFormat::Gray8, 8};
  }
  return in;
}

bool detect_live_change(const DetectParams& from, const DetectParams& to) noexcept {
  return from.output == to.output && from.max_objects == to.max_objects;
}

std::string_view to_string(DetectBackground value) noexcept {
  return name_of<DetectBackground>(kBackgroundNames, value);
}
std::string_view to_string(DetectFilter value) noexcept {
  return name_of<DetectFilter>(kFilterNames, value);
}
std::string_view to_string(DetectThreshold value) noexcept {
  return name_of<DetectThreshold>(kThresholdNames, value);
}
std::string_view to_string(DetectOutput value) noexcept {
  return name_of<DetectOutput>(kOutputNames, value);
}

DetectBackground parse_detect_background(std::string_view name) {
  return parse_named<DetectBackground>(kBackgroundNames, "detect background", name);
}
DetectFilter parse_detect_filter(std::string_view name) {
  return parse_named<DetectFilter>(kFilterNames, "detect filter", name);
}
DetectThreshold parse_detect_threshold(std::string_view name) {
  return parse_named<DetectThreshold>(kThresholdNames, "detect threshold-mode", name);
}
DetectOutput parse_detect_output(std::string_view name) {
  return parse_named<DetectOutput>(kOutputNames, "detect output", name);
}
Connectivity parse_connectivity(std::string_view name) {
  return parse_named<Connectivity>(kConnectivityNames, "detect connectivity", name);
}

std::string detect_background_names() {
  return names_of<DetectBackground>(kBackgroundNames);
}
std::string detect_filter_names() {
  return names_of<DetectFilter>(kFilterNames);
}
std::string detect_threshold_names() {
  return names_of<DetectThreshold>(kThresholdNames);
}
std::string detect_output_names() {
  return names_of<DetectOutput>(kOutputNames);
}

}  // namespace starsift
