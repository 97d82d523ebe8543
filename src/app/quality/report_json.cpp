// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/report_json.hpp"

#include <cmath>

#include "app/quality/json_values.hpp"
#include "app/quality/report_chain.hpp"
#include "bench/json.hpp"

namespace starsift::quality {

namespace {

using bench::Json;

Json method_names(const std::vector<MethodKind>& methods) {
  Json a = Json::array();
  for (const MethodKind m : methods) a.push(method_name(m));
  return a;
}

Json chain_names(const std::vector<ChainKind>& chains) {
  Json a = Json::array();
  for (const ChainKind k : chains) a.push(chain_name(k));
  return a;
}

Json distribution(const Distribution& d) {
  return Json::object()
      .set("count", d.count)
      .set("median", d.median)
      .set("p90", d.p90)
      .set("p99", d.p99)
      .set("max", d.max);
}

Json config_json(const QualityReport& r) {
  const QualityConfig& c = r.config;
  const SkyParams& s = r.sky;
  Json scenes = Json::array();
  for (const SceneSpec& scene : c.scenes()) {
    const double keep = 1.0 - s.jitter_reversion;
    scenes.push(Json::object()
                    .set("name", scene.name)
                    .set("jitter_step_px", scene.jitter)
                    .set("jitter_reversion", s.jitter_reversion)
                    .set("jitter_rms_px_per_axis", scene.jitter / std::sqrt(1.0 - keep * keep)));
  }
  return Json::object()
      .set("size", c.size)
      .set("seed", static_cast<unsigned long long>(c.seed))
      .set("warmup_frames", c.warmup_frames)
      .set("scored_frames", c.scored_frames)
      .set("movers_per_frame", c.movers)
      .set("history", c.history)
      .set("chain_noise_frames", c.chain_noise_frames)
      .set("chain_shift_noise", c.chain_shift_noise ? *c.chain_shift_noise : -1.0)
      .set("chain_fit", c.chain_fit ? std::string(to_string(*c.chain_fit)) : std::string("default"))
      .set("chain_fit_subsample", c.chain_fit_subsample ? *c.chain_fit_subsample : -1)
      .set("peak_snrs", numbers(c.snrs))
      .set("speeds_px_per_frame", numbers(c.speeds))
      .set("hit_radius_px", c.hit_radius)
      .set("border_px", c.border)
      .set("false_alarm_rate_per_mpix_frame", c.false_alarm_rate)
      .set("candidate_floor_snr", static_cast<double>(c.peak_floor))
      .set("bright_star_peak_snr", c.bright_star_snr)
      .set("methods", method_names(c.methods))
      .set("chains", chain_names(c.chains))
      .set("chain_thresholds", numbers(c.chain_thresholds))
      .set("track_fps", c.track_fps)
      .set("scenes", std::move(scenes))
      .set("sky", Json::object()
                      .set("format", "GRAY16")
                      .set("bit_depth", s.bit_depth)
                      .set("star_density_per_mpix", s.star_density)
                      .set("star_flux_e", Json::array().push(s.star_flux_min).push(s.star_flux_max))
                      .set("star_flux_slope", s.star_flux_slope)
                      .set("psf", std::string(to_string(s.psf)))
                      .set("fwhm_px", s.fwhm)
                      .set("sky_level_e", s.sky_level)
                      .set("sky_gradient", s.sky_gradient)
                      .set("read_noise_e", s.read_noise)
                      .set("gain_e_per_adu", s.gain)
                      .set("bias_adu", s.bias)
                      .set("hot_pixel_fraction", s.hot_pixel_fraction)
                      .set("hot_pixel_level_e", s.hot_pixel_level))
      .set("matched_filter", Json::object()
                                 .set("kernel_radius_px", r.kernel.radius)
                                 .set("kernel_sum_sq", r.kernel.norm2)
                                 .set("psf_sum_sq", r.kernel.full_norm2)
                                 .set("psf_peak_fraction", r.kernel.peak));
}

Json definitions() {
  return Json::object()
      .set("snr_image",
           "S = (K * rho) / sqrt(K^2 * v): K the PSF integrated over pixels (source on a pixel "
           "centre, unit flux), rho the residual (ADU), v its per-pixel variance: whitening's "
           "sigma^2 before the frame (noise_variance() read before process()); the baselines: "
           "one v per frame, (1.4826 MAD of rho over the interior)^2")
      .set("detection",
           "a local maximum of S in the interior (>= its 8 neighbours, > the 4 before it in "
           "raster order) with S > threshold; positive only")
      .set("hit",
           "a detection within hit_radius_px of the mover's path during the exposure (its "
           "mid-exposure truth -/+ v/2); several detections of one mover count once; a "
           "detection near two movers belongs to the nearer")
      .set("false_alarm", "any other detection, hot pixels and star residuals included")
      .set("threshold",
           "per scene and method, over the scored frames of all cells: the (k+1)-th highest "
           "S of the false-alarm candidates, k = floor(rate x interior Mpix-frames); at most k "
           "lie above it")
      .set("trial", "one mover in one scored frame with its mid-exposure truth in the interior")
      .set("ideal_snr",
           "flux_e * sqrt(sum P^2) / sigma_e: P the PSF integrated over pixels for a stationary "
           "source on a pixel centre, sigma_e = sqrt(sky + read_noise^2) at the mover (the "
           "truth's noise_sigma_e); = peak_snr * sqrt(sum P^2) / P_peak")
      .set("eta",
           "mean over the cell's trials of S at the pixel nearest the truth, divided by "
           "snr_scale, over the mean ideal_snr")
      .set("snr_scale", "median over scored frames of 1.4826 MAD of S over the interior")
      .set("eta_frame_sigma",
           "whitening only: eta of the SNR image made with one robust sigma of the residual per "
           "frame (as for the baselines) instead of the variance map, with its own snr_scale")
      .set("filter_loss",
           "mean of (K * M)(nearest pixel) / (sigma_e sqrt(sum K^2)) over mean ideal_snr, M the "
           "noise-free mover image (render_expected): the point-source filter's own loss")
      .set("noise_ratio",
           "median over scored frames of 1.4826 MAD of rho / sigma_frame over quiet interior "
           "pixels (no star above 0.05 sigma, no hot pixel within 3 px, no mover within 3 "
           "FWHM, each widened by the field's motion over the history + 1 px); sigma_frame = "
           "sqrt(sky + read_noise^2) / gain per pixel")
      .set("noise_floor",
           "whitening: mean sqrt(1 + sum a_k^2) of last_stats(); difference: sqrt(2); running "
           "median: sqrt(1 + Var(median of N unit normals)) by Monte Carlo")
      .set("leakage",
           "per bright star (nominal peak SNR >= bright_star_peak_snr, disc inside the "
           "interior, no mover near) and scored frame: max |rho| / sigma_frame within 2 FWHM "
           "of its position; null: the same around fixed quiet spots")
      .set("shift_error_px",
           "whitening with shift: resample: |last_stats() shift - the truth's shift| per "
           "scored frame")
      .set("star_mask",
           "the same scores when detections within a bright star's halo (where it puts >= 0.5 "
           "sigma on a pixel, widened by the field's motion over the history + 1 px; stars of "
           "nominal peak SNR >= bright_star_peak_snr) are dropped, as a detector with a star "
           "catalogue would; the threshold is chosen again outside the mask, over the area "
           "outside it; movers inside it stay trials (and are missed)")
      .set("completeness_95", "Wilson 95 % interval, trials taken as independent")
      .set("false_alarm_rate_95", "exact Poisson 95 % interval over the area");
}

Json cell_json(const CellScore& c) {
  return Json::object()
      .set("peak_snr", c.cell.snr)
      .set("speed", c.cell.speed)
      .set("seed", static_cast<unsigned long long>(c.cell.seed))
      .set("trials", c.trials)
      .set("distinct_movers", c.distinct_movers)
      .set("hits", c.hits)
      .update(with_95("completeness", c.completeness))
      .set("eta", c.eta)
      .set("filter_loss", c.filter_loss)
      .set("mean_ideal_snr", c.mean_ideal_snr)
      .set("mean_snr_at_truth", c.mean_snr_at_truth)
      .set("eta_frame_sigma", c.eta_frame_sigma)
      .set("star_mask", Json::object()
                            .set("hits", c.hits_star_mask)
                            .update(with_95("completeness", c.completeness_star_mask)));
}

Json method_json(const MethodSummary& m) {
  Json cells = Json::array();
  for (const CellScore& c : m.cells) cells.push(cell_json(c));
  return Json::object()
      .set("name", m.name)
      .set("threshold_snr", static_cast<double>(m.threshold.threshold))
      .set("threshold_at_floor", m.threshold.at_floor)
      .set("false_alarms_allowed", m.threshold.allowed)
      .set("false_alarms", m.threshold.false_alarms)
      .update(with_95("false_alarm_rate",
                      static_cast<double>(m.threshold.false_alarms) / m.threshold.area_mpix_frames,
                      m.false_alarm_rate_95))
      .set("star_mask",
           Json::object()
               .set("threshold_snr", static_cast<double>(m.threshold_star_mask.threshold))
               .set("threshold_at_floor", m.threshold_star_mask.at_floor)
               .set("area_mpix_frames", m.threshold_star_mask.area_mpix_frames)
               .set("false_alarms_allowed", m.threshold_star_mask.allowed)
               .set("false_alarms", m.threshold_star_mask.false_alarms))
      .set("held_out_false_alarms", m.held_out_false_alarms)
      .update(with_95("held_out_rate", m.held_out_rate, m.held_out_rate_95))
      .set("false_alarm_places", places(m.false_alarm_places))
      .set("candidates_above_5_places", places(m.candidate_places_5))
      .set("snr_scale", m.snr_scale)
      .set("noise_ratio", m.noise_ratio)
      .set("noise_floor", m.noise_floor)
      .set("shift_error_px", distribution(m.shift_error))
      .set("leakage", distribution(m.leakage))
      .set("leakage_null", distribution(m.leakage_null))
      .set("ms_per_frame", m.ms_per_frame)
      .set("cells", std::move(cells));
}

}  // namespace

void write_json(const QualityReport& r, const std::string& version, const std::string& date,
                std::ostream& out) {
  Json scenes = Json::array();
  for (const SceneSummary& s : r.scenes) {
    Json methods = Json::array();
    for (const MethodSummary& m : s.methods) methods.push(method_json(m));
    Json chains = Json::array();
    for (const ChainSummary& ch : s.chains) chains.push(chain_json(r.config, ch));
    scenes.push(Json::object()
                    .set("name", s.scene.name)
                    .set("area_mpix_frames", s.area_mpix_frames)
                    .set("star_mask_mpix_frames", s.masked_mpix_frames)
                    .set("scored_frames", s.frames)
                    .set("trials", s.trials)
                    .set("mean_motion_over_history_px", s.mean_motion)
                    .set("stars_per_cell", s.stars_per_cell)
                    .set("hot_pixels_per_cell", s.hot_pixels_per_cell)
                    .set("bright_stars", s.bright_stars)
                    .set("methods", std::move(methods))
                    .set("chains", std::move(chains)));
  }
  const Json doc = Json::object()
                       .set("command", "starsift quality")
                       .set("version", version)
                       .set("date", date)
                       .set("backend", std::string(to_string(r.config.backend.backend)))
                       .set("backend_reason", r.config.backend.reason)
                       .set("threads", static_cast<int>(r.threads))
                       .set("wall_seconds", r.seconds)
                       .set("config", config_json(r))
                       .set("definitions", definitions().update(chain_definitions()))
                       .set("scenes", std::move(scenes));
  out << doc << '\n';
}

}  // namespace starsift::quality
