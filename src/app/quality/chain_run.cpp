// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/chain_run.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "pipeline/error.hpp"
#include "pipeline/stage_result.hpp"

namespace starsift::quality {

namespace {

// What `siftwhiten` does with no property set, on the harness's history (20, the default),
// or the residual the former pairing read.
WhitenParams shipped_whiten(const QualityConfig& config, ChainKind kind) {
  WhitenParams p;
  p.history = config.history;
  if (config.chain_noise_frames > 0.0) p.noise_frames = config.chain_noise_frames;
  if (config.chain_fit) p.fit = *config.chain_fit;
  if (config.chain_shift_noise) p.shift_noise = *config.chain_shift_noise;
  if (config.chain_fit_subsample) p.fit_subsample = *config.chain_fit_subsample;
  if (kind == ChainKind::ResidualMesh) p.output = WhitenOutput::Residual;
  return p;
}

DetectParams shipped_detect(ChainKind kind) {
  DetectParams p;
  if (kind == ChainKind::ResidualMesh) p.background = DetectBackground::Mesh;
  return p;
}

}  // namespace

ShippedChain::ShippedChain(const QualityConfig& config, ChainKind kind, const FrameShape& shape)
    : config_(config),
      whiten_(make_whiten_stage(shipped_whiten(config, kind), config.backend)),
      detect_(make_detect_stage(shipped_detect(kind), config.backend)) {
  whiten_->configure(shape);
  // What siftdetect receives after siftwhiten: the input's format (GRAY16 here), with the
  // significance scale the caps carry for output: significance.
  const FrameShape whitened = whiten_->output_shape(shape);
  detect_->configure(whitened);
  const auto row_bytes =
      static_cast<std::ptrdiff_t>(whitened.width) * bytes_per_pixel(whitened.format);
  const auto bytes =
      static_cast<std::size_t>(row_bytes) * static_cast<std::size_t>(whitened.height);
  whitened_.resize(bytes);
  detected_.resize(bytes);  // output: input copies the frame through, here rather than in place
  whitened_view_ = {whitened_.data(), whitened.width, whitened.height, row_bytes, whitened.format};
  detected_view_ = {detected_.data(), whitened.width, whitened.height, row_bytes, whitened.format};
  result_.resize(detect_->result_layout()->bytes());
  samples_.at.resize(config.chain_thresholds.size());
  trackers_.reserve(config.chain_thresholds.size());
  for (std::size_t i = 0; i < config.chain_thresholds.size(); ++i) {
    TrackerParams tracker;  // siftdetect's defaults
    trackers_.emplace_back(tracker);
  }
  track_scores_.resize(config.chain_thresholds.size());
}

void ShippedChain::whiten(ConstImageView frame) {
  whiten_->process(frame, whitened_view_);
}

void ShippedChain::detect(int frame, const std::vector<MoverTruth>& movers,
                          const std::vector<Streak>& streaks, const std::vector<int>& targets,
                          const Interior& interior, const FrameLayout& layout) {
  const auto timestamp_ns =
      static_cast<std::int64_t>(std::llround(frame * 1.0e9 / config_.track_fps));
  for (std::size_t i = 0; i < config_.chain_thresholds.size(); ++i) {
    // Only the threshold changes: a live change (detect_live_change()), as a property set on
    // a running siftdetect. The stage keeps nothing from frame to frame, so this is the stage
    // run at that threshold.
    DetectParams params = detect_->params();
    params.threshold = config_.chain_thresholds[i];
    detect_->set_params(params);
    detect_->process(const_view(whitened_view_), detected_view_);
    const ResultView area{result_.data(), result_.size()};
    detect_->write_result(area);
    const auto* header = reinterpret_cast<const ResultHeader*>(area.data);
    const std::span<DetectedObject> objects(area.records<DetectedObject>(), header->count);
    samples_.overflow += header->overflow;

    ChainAtThreshold& at = samples_.at[i];
    at.false_detections +=
        score_catalogue(objects, streaks, targets, interior, config_.hit_radius, labels_, hit_);
    at.hit.insert(at.hit.end(), hit_.begin(), hit_.end());
    // The tracker sees every object, border ones too, as siftdetect's does; the scorer wants
    // mover ids, which outlive the slots the streaks are indexed by.
    for (std::size_t j = 0; j < labels_.size(); ++j) {
      std::int64_t& label = labels_[j];
      if (label >= 0) label = static_cast<std::int64_t>(movers[static_cast<std::size_t>(label)].id);
      if (label == kFalseDetection) {
        ++at.places[static_cast<std::size_t>(layout.classify(objects[j].x, objects[j].y))];
      }
      at.objects += label != kNotScored;
    }
    trackers_[i].update(static_cast<std::uint64_t>(frame), timestamp_ns, objects);
    track_scores_[i].add_frame(trackers_[i].tracks(), labels_);
  }
}

ChainSamples ShippedChain::finish(const std::vector<std::uint64_t>& trial_movers) {
  std::map<std::uint64_t, int> frames_of;
  for (const std::uint64_t id : trial_movers) ++frames_of[id];
  samples_.track_movers.clear();
  for (const auto& [id, frames] : frames_of) {
    if (frames >= TrackerParams::kDefaultConfirm) samples_.track_movers.push_back(id);
  }
  for (std::size_t i = 0; i < samples_.at.size(); ++i) {
    const TrackScorer::Result r = track_scores_[i].result();
    ChainAtThreshold& at = samples_.at[i];
    at.tracks = r.tracks;
    at.false_tracks = r.false_tracks;
    at.still_false_tracks = r.still_false_tracks;
    at.tracked.clear();
    for (const std::uint64_t id : samples_.track_movers) {
      at.tracked.push_back(std::binary_search(r.followed.begin(), r.followed.end(), id) ? 1 : 0);
    }
  }
  return std::move(samples_);
}

}  // namespace starsift::quality
