// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/chain_summary.hpp"

#include <algorithm>
#include <numeric>

namespace starsift::quality {

namespace {

double per_hour(long long count, double hours) {
  return hours > 0.0 ? static_cast<double>(count) / hours : 0.0;
}

long long count_set(const std::vector<unsigned char>& flags) {
  return std::count(flags.begin(), flags.end(), 1);
}

// False detections at hot pixels, near movers or on clear sky: away from stars.
long long off_stars(const std::array<long long, kPlaces>& places) {
  return places[static_cast<std::size_t>(Place::HotPixel)] +
         places[static_cast<std::size_t>(Place::Mover)] +
         places[static_cast<std::size_t>(Place::Clear)];
}

// Completeness per SNR of the grid at threshold `t`: pooled over its speeds, and its worst
// speed; `tracks` picks the tracks' verdicts over the per-frame hits.
void per_snr(const QualityConfig& config, const std::vector<CellResult>& cells, std::size_t chain,
             std::size_t t, bool tracks, std::vector<double>& pooled, std::vector<double>& worst) {
  pooled.assign(config.snrs.size(), 0.0);
  worst.assign(config.snrs.size(), 1.0);
  std::vector<long long> found(config.snrs.size(), 0), total(config.snrs.size(), 0);
  for (const CellResult& c : cells) {
    const ChainAtThreshold& at = c.chains[chain].at[t];
    const auto& flags = tracks ? at.tracked : at.hit;
    const auto s = static_cast<std::size_t>(c.cell.snr_index);
    const long long n = static_cast<long long>(flags.size());
    found[s] += count_set(flags);
    total[s] += n;
    if (n > 0) {
      worst[s] = std::min(worst[s], static_cast<double>(count_set(flags)) / static_cast<double>(n));
    }
  }
  for (std::size_t s = 0; s < pooled.size(); ++s) {
    pooled[s] = total[s] > 0 ? static_cast<double>(found[s]) / static_cast<double>(total[s]) : 0.0;
  }
}

}  // namespace

int lowest_within_rate(std::span<const long long> false_detections, double area, double rate) {
  // The small epsilon keeps 0.1 x 50 from rounding down to 4, as choose_threshold() does.
  if (!(area > 0.0)) return -1;  // nothing to choose on (a grid of one cell)
  const double allowed = rate * area + 1e-9;
  for (std::size_t t = 0; t < false_detections.size(); ++t) {
    if (static_cast<double>(false_detections[t]) <= allowed) return static_cast<int>(t);
  }
  return -1;
}

std::vector<int> held_out_choices(const std::vector<std::vector<long long>>& false_per_cell,
                                  const std::vector<double>& area_per_cell, double rate) {
  const std::size_t n = false_per_cell.size();
  const std::size_t thresholds = n > 0 ? false_per_cell.front().size() : 0;
  std::vector<long long> total(thresholds, 0);
  for (const auto& cell : false_per_cell) {
    for (std::size_t t = 0; t < thresholds; ++t) total[t] += cell[t];
  }
  const double area = std::accumulate(area_per_cell.begin(), area_per_cell.end(), 0.0);
  std::vector<int> choice;
  std::vector<long long> others(thresholds);
  for (std::size_t c = 0; c < n; ++c) {
    for (std::size_t t = 0; t < thresholds; ++t) others[t] = total[t] - false_per_cell[c][t];
    choice.push_back(lowest_within_rate(others, area - area_per_cell[c], rate));
  }
  return choice;
}

ChainSummary summarise_chain(const QualityConfig& config, const std::vector<CellResult>& cells,
                             std::size_t chain) {
  ChainSummary out;
  out.name = std::string(chain_name(config.chains[chain]));
  out.thresholds = config.chain_thresholds;
  const std::size_t thresholds = out.thresholds.size();
  std::vector<std::vector<long long>> false_per_cell;
  std::vector<double> area_per_cell;
  double seconds = 0.0;
  for (const CellResult& c : cells) {
    out.area_mpix_frames += c.area_mpix_frames;
    out.frames += config.scored_frames;
    out.overflow += c.chains[chain].overflow;
    seconds += c.chains[chain].seconds;
    area_per_cell.push_back(c.area_mpix_frames);
    auto& row = false_per_cell.emplace_back();
    for (const ChainAtThreshold& at : c.chains[chain].at) row.push_back(at.false_detections);
  }
  out.hours = static_cast<double>(out.frames) / config.track_fps / 3600.0;
  out.ms_per_frame = out.frames > 0 ? 1000.0 * seconds / static_cast<double>(out.frames) : 0.0;
  if (cells.empty() || thresholds == 0) return out;

  for (std::size_t t = 0; t < thresholds; ++t) {
    ChainThresholdRow row;
    row.threshold = out.thresholds[t];
    for (const CellResult& c : cells) {
      const ChainAtThreshold& at = c.chains[chain].at[t];
      row.false_detections += at.false_detections;
      for (std::size_t p = 0; p < row.places.size(); ++p) row.places[p] += at.places[p];
      row.tracks += at.tracks;
      row.false_tracks += at.false_tracks;
      row.still_false_tracks += at.still_false_tracks;
    }
    row.false_off_stars = off_stars(row.places);
    row.false_rate = static_cast<double>(row.false_detections) / out.area_mpix_frames;
    row.false_tracks_per_hour = per_hour(row.false_tracks, out.hours);
    per_snr(config, cells, chain, t, false, row.completeness, row.worst_completeness);
    per_snr(config, cells, chain, t, true, row.track_completeness, row.worst_track_completeness);
    out.scan.push_back(std::move(row));
  }

  std::vector<long long> total(thresholds);
  for (std::size_t t = 0; t < thresholds; ++t) total[t] = out.scan[t].false_detections;
  const int pooled = lowest_within_rate(total, out.area_mpix_frames, config.false_alarm_rate);
  out.within = pooled >= 0;
  out.chosen = out.within ? pooled : static_cast<int>(thresholds) - 1;
  out.false_detections = total[static_cast<std::size_t>(out.chosen)];
  std::vector<long long> off_stars(thresholds);
  for (std::size_t t = 0; t < thresholds; ++t) off_stars[t] = out.scan[t].false_off_stars;
  out.chosen_off_stars =
      lowest_within_rate(off_stars, out.area_mpix_frames, config.false_alarm_rate);
  std::vector<std::vector<long long>> off_stars_per_cell;
  for (const CellResult& c : cells) {
    auto& row = off_stars_per_cell.emplace_back();
    for (const ChainAtThreshold& at : c.chains[chain].at)
      row.push_back(quality::off_stars(at.places));
  }
  const std::vector<int> off_stars_held_out =
      held_out_choices(off_stars_per_cell, area_per_cell, config.false_alarm_rate);
  out.held_out_off_stars_low = out.thresholds.back();
  out.held_out_off_stars_high = out.thresholds.front();
  for (std::size_t i = 0; i < cells.size(); ++i) {
    // As for all false detections: without a choice on the others, the one on every cell.
    int h = off_stars_held_out[i];
    if (h < 0)
      h = out.chosen_off_stars >= 0 ? out.chosen_off_stars : static_cast<int>(thresholds) - 1;
    const double t = out.thresholds[static_cast<std::size_t>(h)];
    out.held_out_off_stars_low = std::min(out.held_out_off_stars_low, t);
    out.held_out_off_stars_high = std::max(out.held_out_off_stars_high, t);
    out.held_out_off_stars += off_stars_per_cell[i][static_cast<std::size_t>(h)];
  }
  out.held_out_off_stars_rate = static_cast<double>(out.held_out_off_stars) / out.area_mpix_frames;

  const std::vector<int> held_out =
      held_out_choices(false_per_cell, area_per_cell, config.false_alarm_rate);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const CellResult& c = cells[i];
    int h = held_out[i];
    if (h < 0) {
      // No threshold run met the rate on the other cells (or there are none): the one
      // chosen on every cell stands in, and the report says so.
      ++out.held_out_none_within;
      h = out.chosen;
    }
    const ChainAtThreshold& at_pooled = c.chains[chain].at[static_cast<std::size_t>(out.chosen)];
    const ChainAtThreshold& at = c.chains[chain].at[static_cast<std::size_t>(h)];
    ChainCellScore s;
    s.cell = c.cell;
    s.trials = static_cast<long long>(at.hit.size());
    s.hits = count_set(at_pooled.hit);
    s.held_out_threshold = out.thresholds[static_cast<std::size_t>(h)];
    s.held_out_hits = count_set(at.hit);
    s.held_out_false_detections = at.false_detections;
    s.track_movers = static_cast<long long>(at.tracked.size());
    s.tracked = count_set(at.tracked);
    s.false_tracks = at.false_tracks;
    for (const ChainAtThreshold& a : c.chains[chain].at) {
      s.hits_at.push_back(count_set(a.hit));
      s.tracked_at.push_back(count_set(a.tracked));
      s.false_at.push_back(a.false_detections);
    }
    s.completeness = proportion(s.hits, s.trials);
    s.held_out_completeness = proportion(s.held_out_hits, s.trials);
    s.track_completeness = proportion(s.tracked, s.track_movers);
    out.held_out_false_detections += at.false_detections;
    out.held_out_false_tracks += at.false_tracks;
    out.held_out_still_false_tracks += at.still_false_tracks;
    out.cells.push_back(s);
  }
  out.held_out_rate = static_cast<double>(out.held_out_false_detections) / out.area_mpix_frames;
  out.held_out_rate_95 = poisson_rate_interval(out.held_out_false_detections, out.area_mpix_frames);
  out.held_out_false_tracks_per_hour = per_hour(out.held_out_false_tracks, out.hours);
  out.held_out_false_tracks_per_hour_95 =
      poisson_rate_interval(out.held_out_false_tracks, out.hours);
  return out;
}

const ChainCellScore* find_cell(const ChainSummary& summary, double snr, double speed) noexcept {
  return find_at(summary.cells, snr, speed);
}

}  // namespace starsift::quality
