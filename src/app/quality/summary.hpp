// SPDX-License-Identifier: LGPL-2.1-or-later
// The scores of one scene: per method, the threshold at the allowed false-alarm rate (chosen
// over every cell's frames together) and, at that threshold, completeness per cell, SNR
// efficiency, residual noise against the floor, star leakage and where false alarms lie.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "app/quality/cell_run.hpp"
#include "app/quality/chain_summary.hpp"
#include "app/quality/config.hpp"
#include "app/quality/statistics.hpp"
#include "app/quality/threshold.hpp"

namespace starsift::quality {

struct CellScore {
  Cell cell;
  long long trials = 0;  // mover-frames scored
  long long hits = 0;
  int distinct_movers = 0;
  Proportion completeness;  // hits / trials, Wilson: mover-frames taken as independent trials
  // eta = mean(SNR image at the truth pixel) / snr_scale / mean(ideal SNR).
  double eta = 0.0;
  // mean(filter SNR) / mean(ideal SNR): the point-source filter's own loss on this cell's
  // movers (streaks, sub-pixel positions), the same for every method; eta / filter_loss is
  // what the background subtraction itself keeps.
  double filter_loss = 0.0;
  double mean_ideal_snr = 0.0;
  double mean_snr_at_truth = 0.0;  // as measured, before dividing by snr_scale
  // With the bright-star mask (detections inside it dropped; its area not counted):
  long long hits_star_mask = 0;
  Proportion completeness_star_mask;
  // eta with one robust sigma of the residual per frame instead of the method's variance map
  // (whitening only; 0 otherwise).
  double eta_frame_sigma = 0.0;
};

struct Distribution {
  long long count = 0;
  double median = 0.0, p90 = 0.0, p99 = 0.0, max = 0.0;
};

struct MethodSummary {
  std::string name;
  ThresholdChoice threshold;
  ThresholdChoice threshold_star_mask;  // the same rate outside the bright-star mask
  Interval false_alarm_rate_95;  // per Mpix-frame, Poisson on the false alarms at the threshold
  // Cross-check: thresholds chosen on the even cells, counted on the odd ones, and the reverse.
  long long held_out_false_alarms = 0;
  double held_out_rate = 0.0;
  Interval held_out_rate_95;
  std::array<long long, kPlaces> false_alarm_places{};  // at the threshold
  std::array<long long, kPlaces> candidate_places_5{};  // candidates above SNR 5
  double snr_scale = 0.0;     // median per-frame robust sigma of the SNR image (1: calibrated)
  double noise_ratio = 0.0;   // median per-frame robust sigma of residual / frame sigma
  double noise_floor = 0.0;   // mean per-frame floor
  Distribution shift_error;   // px, per scored frame; count 0 for methods that measure none
  Distribution leakage;       // |residual| / sigma peak within 2 FWHM of bright stars
  Distribution leakage_null;  // the same around quiet spots
  double ms_per_frame = 0.0;  // the method and its matched filter, per scored frame
  std::vector<CellScore> cells;
};

struct SceneSummary {
  SceneSpec scene;
  double area_mpix_frames = 0.0;
  double masked_mpix_frames = 0.0;  // of it, inside the bright-star mask
  long long trials = 0;
  int frames = 0;  // scored frames, all cells
  double mean_motion = 0.0;
  int bright_stars = 0;
  double stars_per_cell = 0.0;
  double hot_pixels_per_cell = 0.0;
  std::vector<MethodSummary> methods;
  std::vector<ChainSummary> chains;  // the shipped whiten -> detect chains, config order
};

SceneSummary summarise(const QualityConfig& config, const SceneSpec& scene,
                       const std::vector<CellResult>& cells);

// The cell of `summary` at (snr, speed), or nullptr.
const CellScore* find_cell(const MethodSummary& summary, double snr, double speed) noexcept;

}  // namespace starsift::quality
