// SPDX-License-Identifier: LGPL-2.1-or-later
// The rules of detection's host steps' parameters: with the other parameters, in the core.
#include "pipeline/detect/link_params.hpp"

#include "pipeline/param_checks.hpp"

namespace starsift {

namespace {

constexpr ParamChecks kTrackerChecks{"tracker"};
constexpr ParamChecks kMergeChecks{"streak-merge"};

}  // namespace

void TrackerParams::validate() const {
  kTrackerChecks.check_number("gate", gate, 0.0, true, kMaxGate, "px");
  kTrackerChecks.check_int("confirm", confirm, 1, kMaxConfirm);
  kTrackerChecks.check_int("coast", coast, 0, kMaxCoast);
  kTrackerChecks.check_int("max-tracks", max_tracks, 1, kMaxMaxTracks);
  kTrackerChecks.check_number("min-speed", min_speed, 0.0, false, kMaxMaxSpeed, "px/frame");
  kTrackerChecks.check_number("max-speed", max_speed, 0.0, true, kMaxMaxSpeed, "px/frame");
  kTrackerChecks.check_int("fit-window", fit_window, kMinFitWindow, kMaxFitWindow);
  kTrackerChecks.check_int("tail", tail, 0, kMaxTail);
}

void StreakMergeParams::validate() const {
  kMergeChecks.check_number("max-angle", max_angle, 0.0, true, kMaxMaxAngle, "rad");
  kMergeChecks.check_number("max-offset", max_offset, 0.0, true, kMaxMaxOffset, "px");
  kMergeChecks.check_number("min-elongation", min_elongation, 1.0, false, kMaxMinElongation, "");
  kMergeChecks.check_number("min-length", min_length, 0.0, false, kMaxMinLength, "px");
  kMergeChecks.check_number("max-gap", max_gap, 0.0, false, kMaxMaxGap,
                            "(times the pieces' summed length)");
}

void DetectLinkParams::validate() const {
  streak_merge.validate();
  tracker.validate();
}

}  // namespace starsift
