// SPDX-License-Identifier: LGPL-2.1-or-later
// The shipped chain in one cell: `siftwhiten ! siftdetect` as it runs with no property set
// (whitening's defaults, output: residual into the input's format; detection's defaults:
// mesh background and noise, the 3 x 3 filter, min-area 3), on the configured backend, with
// detection run at each of the config's thresholds, and each threshold's catalogues linked by
// a tracker of its own (TrackerParams defaults). Scored against the truth (chain_scoring.hpp);
// the threshold is chosen afterwards, over all cells (chain_summary.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "app/quality/chain_scoring.hpp"
#include "app/quality/config.hpp"
#include "app/quality/frame_layout.hpp"
#include "pipeline/detect/detect_stage.hpp"
#include "pipeline/detect/tracker.hpp"
#include "pipeline/image.hpp"
#include "pipeline/sky/sky_truth.hpp"
#include "pipeline/whiten/whiten_stage.hpp"

namespace starsift::quality {

// One threshold's scores in one cell.
struct ChainAtThreshold {
  std::vector<unsigned char> hit;           // per trial of the cell: an object labelled with it
  long long false_detections = 0;           // objects labelled kFalseDetection, all scored frames
  std::array<long long, kPlaces> places{};  // where they lie (their centroid), by Place
  long long objects = 0;                    // objects with their centroid in the interior
  std::vector<unsigned char> tracked;       // per ChainSamples::track_movers: a track follows it
  long long tracks = 0;                     // confirmed tracks
  long long false_tracks = 0;
  long long still_false_tracks = 0;
};

struct ChainSamples {
  // Movers that are trials in at least `confirm` scored frames: a track can confirm them.
  std::vector<std::uint64_t> track_movers;
  std::vector<ChainAtThreshold> at;  // per config.chain_thresholds
  long long overflow = 0;            // objects beyond the catalogue's capacity, all thresholds
  double seconds = 0.0;              // in whitening and detection at every threshold, scored frames
};

class ShippedChain {
 public:
  // `shape`: the sky's GRAY16 frames.
  ShippedChain(const QualityConfig& config, ChainKind kind, const FrameShape& shape);

  // Every frame in order, warm-up included: whitening sees each one.
  void whiten(ConstImageView frame);
  // The frame whiten() took last is scored frame `frame`: detection at every threshold, its
  // objects scored against `streaks` (every mover; `targets`, the trials' indices into them,
  // in the order the cell appends its trials), each threshold's tracker updated.
  // `layout` (laid out for this frame) says where each false detection lies.
  void detect(int frame, const std::vector<MoverTruth>& movers, const std::vector<Streak>& streaks,
              const std::vector<int>& targets, const Interior& interior, const FrameLayout& layout);
  // After the last scored frame: the tracks' verdicts. `trial_movers`: the mover id of each
  // of the cell's trials, in order.
  ChainSamples finish(const std::vector<std::uint64_t>& trial_movers);

 private:
  const QualityConfig& config_;
  std::unique_ptr<WhitenStage> whiten_;
  std::unique_ptr<DetectStage> detect_;
  std::vector<std::byte> whitened_, detected_;
  ImageView whitened_view_, detected_view_;
  std::vector<std::byte> result_;  // the detection stage's result area
  std::vector<Tracker> trackers_;  // one per threshold
  std::vector<TrackScorer> track_scores_;
  std::vector<std::int64_t> labels_;
  std::vector<unsigned char> hit_;
  ChainSamples samples_;
};

}  // namespace starsift::quality
