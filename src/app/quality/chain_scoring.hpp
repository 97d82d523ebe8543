// SPDX-License-Identifier: LGPL-2.1-or-later
// Scoring the shipped detection stage's output against the sky's truth: which catalogue
// objects are movers and which are false detections, and which confirmed tracks follow a
// mover. docs/quality.md, "The shipped chain", defines each rule.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "app/quality/matching.hpp"
#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/tracker.hpp"
#include "pipeline/plane.hpp"

namespace starsift::quality {

// Labels of a catalogue object that is no mover's.
inline constexpr std::int64_t kFalseDetection = -1;  // centroid in the interior, near no mover
inline constexpr std::int64_t kNotScored = -2;       // centroid outside the interior

// The streak (index into `streaks`) an object belongs to, kFalseDetection or kNotScored.
// An object whose centroid lies outside the interior is not scored. Otherwise its distance
// to a streak is the smaller of its centroid's and its peak pixel's: the centroid is the
// position the catalogue reports, the peak pixel still finds a mover whose object also
// took in a neighbour (a star residual, noise) that pulls the centroid off. The nearest
// streak within `radius` wins; none: a false detection.
std::int64_t label_object(const DetectedObject& object, const std::vector<Streak>& streaks,
                          const Interior& interior, double radius) noexcept;

// One frame's catalogue scored: `labels` gets each object's label (label_object()), `hit`
// one entry per target (`targets`: indices into `streaks` of this frame's trials), 1 when an
// object is labelled with that streak. Returns the false detections.
long long score_catalogue(std::span<const DetectedObject> objects,
                          const std::vector<Streak>& streaks, const std::vector<int>& targets,
                          const Interior& interior, double radius,
                          std::vector<std::int64_t>& labels, std::vector<unsigned char>& hit);

// Confirmed tracks against the truth. A track's detections are tallied from the frame it is
// first reported on (the detection that confirms it) by label: a mover's id, kFalseDetection
// or kNotScored. The plurality decides (ties towards a mover, then towards a false detection):
// the track follows that mover, is a false track, or is not scored (it lives on the border).
class TrackScorer {
 public:
  // After each Tracker::update(): the tracks it reports (Tracker::tracks()) and the labels of
  // this frame's detections, with mover ids in place of streak indices.
  void add_frame(std::span<const Track> reported, std::span<const std::int64_t> labels);

  struct Result {
    std::vector<std::uint64_t> followed;  // mover ids a track follows, ascending, once each
    long long tracks = 0;                 // confirmed tracks reported
    long long false_tracks = 0;
    // Of the false tracks, those slower than kStillSpeed at their latest report: mostly star
    // residuals, which the tracker's min-speed would hide.
    long long still_false_tracks = 0;
  };
  Result result() const;

  // px/frame: below the grid's slowest movers (0.5); a star residual's track, its centroid
  // scattering by a few tenths of a pixel, was fitted at 0.23-0.32 px/frame.
  static constexpr double kStillSpeed = 0.4;

 private:
  struct Tally {
    std::map<std::int64_t, int> labels;  // label -> detections
    double speed = 0.0;                  // px/frame at the latest report
  };
  std::map<std::int32_t, Tally> tracks_;  // by track id
};

}  // namespace starsift::quality
