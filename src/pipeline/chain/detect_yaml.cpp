// SPDX-License-Identifier: LGPL-2.1-or-later
// Detection in a chain: `- detect: {threshold: 5, background: mesh, mesh: 64, output: input}`
// (`line-length: 15` adds the line channel for faint streaks),
// with the host's steps on its catalogue: `merge-streaks` and the tracker's `gate`, `confirm`,
// `coast`, `min-speed` and `max-speed` (siftdetect's properties of the same names). Every key
// is optional; DetectParams holds the defaults and validate() the rules (a refusal is reported
// at the key, in validate()'s words).
#include <string>

#include "pipeline/chain/chain_filters.hpp"
#include "pipeline/detect/params.hpp"
#include "pipeline/param_checks.hpp"

namespace starsift {

namespace {

constexpr std::string_view kDetectKeys[] = {
    "background",    "mesh",           "filter",       "fwhm",     "threshold-mode", "threshold",
    "line-length",   "line-threshold", "connectivity", "min-area", "max-objects",    "output",
    "merge-streaks", "gate",           "confirm",      "coast",    "min-speed",      "max-speed"};

using P = DetectParams;

std::string range(int min, int max) {
  return std::to_string(min) + ".." + std::to_string(max);
}

StageParams read_detect(const YamlParams& yaml) {
  P params;
  yaml.read_choice("background", &P::background, parse_detect_background, detect_background_names(),
                   params);
  yaml.read_int("mesh", &P::mesh, range(P::kMinMesh, P::kMaxMesh), params);
  yaml.read_choice("filter", &P::filter, parse_detect_filter, detect_filter_names(), params);
  yaml.read_number("fwhm", &P::fwhm, "0.5..4.67 (pixels)", params);
  yaml.read_choice("threshold-mode", &P::threshold_mode, parse_detect_threshold,
                   detect_threshold_names(), params);
  yaml.read_number("threshold", &P::threshold, "a finite number > 0", params);
  yaml.read_int("line-length", &P::line_length,
                "0 (off) or an odd length " + range(P::kMinLineLength, P::kMaxLineLength), params);
  yaml.read_number("line-threshold", &P::line_threshold, "a finite number > 0", params);
  yaml.read_choice("connectivity", &P::connectivity, parse_connectivity, "4, 8", params);
  yaml.read_int("min-area", &P::min_area, range(1, 1 << 20), params);
  yaml.read_int("max-objects", &P::max_objects, range(1, P::kMaxMaxObjects), params);
  yaml.read_choice("output", &P::output, parse_detect_output, detect_output_names(), params);
  if (const auto merge = yaml.find("merge-streaks")) params.link.merge_streaks = merge->to_bool();
  using T = TrackerParams;
  TrackerParams& tracker = params.link.tracker;
  yaml.read_number("gate", &T::gate,
                   "finite numbers above 0 up to " + number_text(T::kMaxGate) + " px", tracker);
  yaml.read_int("confirm", &T::confirm, range(1, T::kMaxConfirm), tracker);
  yaml.read_int("coast", &T::coast, range(0, T::kMaxCoast), tracker);
  yaml.read_number("min-speed", &T::min_speed,
                   "finite numbers from 0 up to " + number_text(T::kMaxMaxSpeed) + " px/frame",
                   tracker);
  yaml.read_number("max-speed", &T::max_speed,
                   "finite numbers above 0 up to " + number_text(T::kMaxMaxSpeed) + " px/frame",
                   tracker);
  yaml.validate(params);
  return params;
}

}  // namespace

ChainFilter detect_chain_filter() {
  return {"detect", kDetectKeys, &read_detect};
}

}  // namespace starsift
