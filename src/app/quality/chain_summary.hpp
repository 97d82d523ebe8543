// SPDX-License-Identifier: LGPL-2.1-or-later
// The shipped chain's scores in one scene: its detection threshold chosen over the cells at
// the allowed false-detection rate (on every cell, and for each cell on the others: held
// out), completeness per cell per frame and by tracks, false tracks per hour, and a scan of
// every threshold run. docs/quality.md, "The shipped chain".
#pragma once

#include <array>
#include <span>
#include <string>
#include <vector>

#include "app/quality/cell_run.hpp"
#include "app/quality/config.hpp"
#include "app/quality/statistics.hpp"

namespace starsift::quality {

struct ChainCellScore {
  Cell cell;
  long long trials = 0;
  // At the threshold chosen on every cell:
  long long hits = 0;
  Proportion completeness;
  // At the threshold chosen on the other cells (held out), and the tracks at it:
  double held_out_threshold = 0.0;
  long long held_out_hits = 0;
  Proportion held_out_completeness;
  long long held_out_false_detections = 0;
  long long track_movers = 0;  // movers that are trials in >= confirm scored frames
  long long tracked = 0;       // of them, followed by a confirmed track
  Proportion track_completeness;
  long long false_tracks = 0;
  // At every threshold run (ChainSummary::thresholds' order), for choosing among them later.
  std::vector<long long> hits_at, tracked_at, false_at;
};

// One threshold, every cell together.
struct ChainThresholdRow {
  double threshold = 0.0;
  long long false_detections = 0;
  double false_rate = 0.0;                  // per Mpix-frame
  std::array<long long, kPlaces> places{};  // where the false detections lie
  long long false_off_stars = 0;            // of them, at hot pixels, near movers or on clear sky
  long long tracks = 0;
  long long false_tracks = 0;
  long long still_false_tracks = 0;
  double false_tracks_per_hour = 0.0;
  // Per SNR of the grid (its order): hits / trials over its speeds, and the worst speed.
  std::vector<double> completeness, worst_completeness;
  std::vector<double> track_completeness, worst_track_completeness;
};

struct ChainSummary {
  std::string name;  // chain_name()
  std::vector<double> thresholds;
  double area_mpix_frames = 0.0;  // the interior over the scored frames, every cell
  long long frames = 0;           // scored frames, every cell
  double hours = 0.0;             // those frames at config.track_fps
  // The lowest threshold within the rate on every cell together; the highest run when none
  // is (`within` false).
  int chosen = 0;
  bool within = false;
  long long false_detections = 0;  // at it
  // The same rule counting only the false detections away from stars (hot pixels, movers'
  // surroundings, clear sky: what the threshold controls; star residuals stay above every
  // threshold run with detection's tile noise, docs/quality.md), -1 when none is within.
  int chosen_off_stars = -1;
  // ... and held out: each cell's false detections away from stars at the threshold so chosen
  // on the other cells (cells without one: at chosen_off_stars, or the highest run when that
  // is -1 too), and the range of those.
  long long held_out_off_stars = 0;
  double held_out_off_stars_rate = 0.0;
  double held_out_off_stars_low = 0.0, held_out_off_stars_high = 0.0;
  // Each cell scored at the threshold chosen on the others:
  long long held_out_false_detections = 0;
  double held_out_rate = 0.0;
  Interval held_out_rate_95;
  // Cells whose other cells met the rate at no threshold run (or that have no other cells):
  // scored at `chosen` instead.
  int held_out_none_within = 0;
  long long held_out_false_tracks = 0;
  long long held_out_still_false_tracks = 0;
  double held_out_false_tracks_per_hour = 0.0;
  Interval held_out_false_tracks_per_hour_95;
  std::vector<ChainCellScore> cells;
  std::vector<ChainThresholdRow> scan;
  long long overflow = 0;
  double ms_per_frame = 0.0;  // whitening and detection at every threshold, per scored frame
};

// The index of the lowest threshold (ascending) whose false detections are at most
// rate x area; -1 when none is or the area is 0.
int lowest_within_rate(std::span<const long long> false_detections, double area, double rate);

// Leave one cell out: for each cell, lowest_within_rate() over the sums of the other cells
// (`false_per_cell[c][t]`: cell c's false detections at threshold t).
std::vector<int> held_out_choices(const std::vector<std::vector<long long>>& false_per_cell,
                                  const std::vector<double>& area_per_cell, double rate);

// Chain `chain` (an index into config.chains) of every cell.
ChainSummary summarise_chain(const QualityConfig& config, const std::vector<CellResult>& cells,
                             std::size_t chain);

// The cell at (snr, speed), or null where the grid has none; as find_cell() for a method.
const ChainCellScore* find_cell(const ChainSummary& summary, double snr, double speed) noexcept;

}  // namespace starsift::quality
