// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/summary.hpp"

#include <algorithm>
#include <cmath>

#include "app/quality/methods.hpp"

namespace starsift::quality {

namespace {

constexpr float kTailSnr = 5.0f;

Distribution distribution_of(std::vector<float> values) {
  Distribution d;
  d.count = static_cast<long long>(values.size());
  if (values.empty()) return d;
  d.median = quantile(values, 0.5);
  d.p90 = quantile(values, 0.9);
  d.p99 = quantile(values, 0.99);
  d.max = values.back();  // quantile() sorted them
  return d;
}

double median_of(std::vector<float> values) {
  return values.empty() ? 0.0 : quantile(values, 0.5);
}

// A threshold chosen on the cells of one parity, counted on the others.
void held_out_check(const QualityConfig& config, const std::vector<CellResult>& cells,
                    std::size_t m, MethodSummary& out) {
  long long count = 0;
  double area = 0.0;
  for (int parity = 0; parity < 2; ++parity) {
    std::vector<float> choose_on, count_on;
    double choose_area = 0.0, count_area = 0.0;
    for (const CellResult& c : cells) {
      const auto& fa = c.methods[m].false_alarms;
      if (c.cell.index % 2 == parity) {
        choose_on.insert(choose_on.end(), fa.begin(), fa.end());
        choose_area += c.area_mpix_frames;
      } else {
        count_on.insert(count_on.end(), fa.begin(), fa.end());
        count_area += c.area_mpix_frames;
      }
    }
    if (choose_area <= 0.0 || count_area <= 0.0) continue;
    const ThresholdChoice t =
        choose_threshold(choose_on, choose_area, config.false_alarm_rate, config.peak_floor);
    count += count_above(count_on, t.threshold);
    area += count_area;
  }
  out.held_out_false_alarms = count;
  if (area > 0.0) {
    out.held_out_rate = static_cast<double>(count) / area;
    out.held_out_rate_95 = poisson_rate_interval(count, area);
  }
}

CellScore score_cell(const CellResult& c, std::size_t m, float threshold, float masked_threshold,
                     double snr_scale, double snr_scale_frame_sigma) {
  const MethodSamples& s = c.methods[m];
  CellScore score;
  score.cell = c.cell;
  score.trials = static_cast<long long>(c.trials.size());
  score.distinct_movers = c.distinct_movers;
  double ideal = 0.0, filter = 0.0, at_truth = 0.0;
  for (std::size_t i = 0; i < c.trials.size(); ++i) {
    score.hits += s.best[i] > threshold;
    score.hits_star_mask += s.best_unmasked[i] > masked_threshold;
    ideal += c.trials[i].ideal_snr;
    filter += c.trials[i].filter_snr;
    at_truth += s.at_truth[i];
  }
  score.completeness = proportion(score.hits, score.trials);
  score.completeness_star_mask = proportion(score.hits_star_mask, score.trials);
  if (score.trials > 0) {
    const double n = static_cast<double>(score.trials);
    score.mean_ideal_snr = ideal / n;
    score.mean_snr_at_truth = at_truth / n;
    score.eta = ideal > 0.0 ? (at_truth / snr_scale) / ideal : 0.0;
    score.filter_loss = ideal > 0.0 ? filter / ideal : 0.0;
    if (s.at_truth_frame_sigma.size() == c.trials.size() && snr_scale_frame_sigma > 0.0) {
      double sum = 0.0;
      for (const float v : s.at_truth_frame_sigma) sum += v;
      score.eta_frame_sigma = ideal > 0.0 ? (sum / snr_scale_frame_sigma) / ideal : 0.0;
    }
  }
  return score;
}

}  // namespace

SceneSummary summarise(const QualityConfig& config, const SceneSpec& scene,
                       const std::vector<CellResult>& cells) {
  SceneSummary out;
  out.scene = scene;
  double motion = 0.0, stars = 0.0, hot = 0.0;
  for (const CellResult& c : cells) {
    out.area_mpix_frames += c.area_mpix_frames;
    out.masked_mpix_frames += c.masked_mpix_frames;
    out.trials += static_cast<long long>(c.trials.size());
    out.frames += config.scored_frames;
    motion += c.mean_motion;
    out.bright_stars += c.bright_stars;
    stars += c.stars;
    hot += c.hot_pixels;
  }
  if (!cells.empty()) {
    out.mean_motion = motion / static_cast<double>(cells.size());
    out.stars_per_cell = stars / static_cast<double>(cells.size());
    out.hot_pixels_per_cell = hot / static_cast<double>(cells.size());
  }

  for (std::size_t m = 0; m < config.methods.size(); ++m) {
    MethodSummary ms;
    ms.name = std::string(method_name(config.methods[m]));
    std::vector<float> false_alarms, unmasked_false_alarms, snr_sigma, noise_ratio, leakage,
        leakage_null, shift_error, snr_sigma_frame_sigma;
    double floor_sum = 0.0, seconds = 0.0;
    for (const CellResult& c : cells) {
      const MethodSamples& s = c.methods[m];
      false_alarms.insert(false_alarms.end(), s.false_alarms.begin(), s.false_alarms.end());
      for (std::size_t i = 0; i < s.false_alarms.size(); ++i) {
        if (!s.false_alarm_masked[i]) unmasked_false_alarms.push_back(s.false_alarms[i]);
      }
      snr_sigma.insert(snr_sigma.end(), s.snr_sigma.begin(), s.snr_sigma.end());
      snr_sigma_frame_sigma.insert(snr_sigma_frame_sigma.end(), s.snr_sigma_frame_sigma.begin(),
                                   s.snr_sigma_frame_sigma.end());
      noise_ratio.insert(noise_ratio.end(), s.noise_ratio.begin(), s.noise_ratio.end());
      leakage.insert(leakage.end(), s.leakage.begin(), s.leakage.end());
      leakage_null.insert(leakage_null.end(), s.leakage_null.begin(), s.leakage_null.end());
      shift_error.insert(shift_error.end(), s.shift_error.begin(), s.shift_error.end());
      for (const float f : s.noise_floor) floor_sum += f;
      seconds += s.seconds;
    }
    ms.threshold = choose_threshold(false_alarms, out.area_mpix_frames, config.false_alarm_rate,
                                    config.peak_floor);
    ms.false_alarm_rate_95 = poisson_rate_interval(ms.threshold.false_alarms, out.area_mpix_frames);
    held_out_check(config, cells, m, ms);
    ms.threshold_star_mask =
        choose_threshold(unmasked_false_alarms, out.area_mpix_frames - out.masked_mpix_frames,
                         config.false_alarm_rate, config.peak_floor);
    for (const CellResult& c : cells) {
      const MethodSamples& s = c.methods[m];
      for (std::size_t i = 0; i < s.false_alarms.size(); ++i) {
        const auto place = static_cast<std::size_t>(s.false_alarm_places[i]);
        ms.false_alarm_places[place] += s.false_alarms[i] > ms.threshold.threshold;
        ms.candidate_places_5[place] += s.false_alarms[i] > kTailSnr;
      }
    }
    ms.snr_scale = median_of(snr_sigma);
    const double scale_frame_sigma = median_of(snr_sigma_frame_sigma);
    ms.noise_ratio = median_of(noise_ratio);
    ms.noise_floor = out.frames > 0 ? floor_sum / out.frames : 0.0;
    ms.leakage = distribution_of(std::move(leakage));
    ms.leakage_null = distribution_of(std::move(leakage_null));
    ms.shift_error = distribution_of(std::move(shift_error));
    ms.ms_per_frame = out.frames > 0 ? 1000.0 * seconds / out.frames : 0.0;
    for (const CellResult& c : cells) {
      ms.cells.push_back(score_cell(c, m, ms.threshold.threshold, ms.threshold_star_mask.threshold,
                                    ms.snr_scale, scale_frame_sigma));
    }
    out.methods.push_back(std::move(ms));
  }
  for (std::size_t c = 0; c < config.chains.size(); ++c) {
    out.chains.push_back(summarise_chain(config, cells, c));
  }
  return out;
}

const CellScore* find_cell(const MethodSummary& summary, double snr, double speed) noexcept {
  return find_at(summary.cells, snr, speed);
}

}  // namespace starsift::quality
