// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/report_chain.hpp"

#include <algorithm>
#include <string>

#include "app/quality/json_values.hpp"
#include "app/quality/markdown_cells.hpp"
#include "pipeline/detect/params.hpp"
#include "pipeline/detect/tracker.hpp"

namespace starsift::quality {

namespace {

using bench::Json;

// The requirement: >= 95 % per frame at peak SNR 5 over every speed, >= 90 % at peak SNR 4
// once linked into tracks, both with jitter.
constexpr double kFrameSnr = 5.0, kFrameTarget = 0.95;
constexpr double kTrackSnr = 4.0, kTrackTarget = 0.90;

// One row per scene and SNR, a column per speed, and whether the row meets `target` when
// its SNR is `target_snr`.
void grid(const QualityReport& r, bool tracks, double target_snr, double target,
          std::ostream& out) {
  const QualityConfig& c = r.config;
  out << "| scene | chain | peak SNR |" << speed_header(c.speeds)
      << " >= " << fmt("%g", 100.0 * target) << " % |\n"
      << rule(4 + c.speeds.size()) << "\n";
  for (const SceneSummary& s : r.scenes) {
    for (const ChainSummary& ch : s.chains) {
      for (const double snr : c.snrs) {
        out << "| " << s.scene.name << " | " << ch.name << " | " << fmt("%g", snr) << " |";
        const bool meets = write_speed_cells(
            c.speeds, ch, snr,
            [tracks](const ChainCellScore& x) {
              return tracks ? x.track_completeness : x.held_out_completeness;
            },
            target, out);
        out << " " << (snr == target_snr ? (meets ? "yes" : "no") : "") << " |\n";
      }
    }
  }
  out << "\n";
}

// The lowest threshold within the rate counting false detections away from stars only.
std::string off_stars(const ChainSummary& ch) {
  std::string text = "none within";
  if (ch.chosen_off_stars >= 0) {
    const auto t = static_cast<std::size_t>(ch.chosen_off_stars);
    text = fmt("%g", ch.thresholds[t]) + ", " +
           fmt("%.3f", static_cast<double>(ch.scan[t].false_off_stars) / ch.area_mpix_frames);
  }
  text += "; held out " + fmt("%g", ch.held_out_off_stars_low);
  if (ch.held_out_off_stars_high > ch.held_out_off_stars_low) {
    text += fmt("-%g", ch.held_out_off_stars_high);
  }
  return text + ", " + fmt("%.3f", ch.held_out_off_stars_rate);
}

void summary(const QualityReport& r, std::ostream& out) {
  out << "| scene | chain | threshold on all cells | false / Mpix-frame | held out: thresholds | "
         "false / Mpix-frame [95 %] | false tracks / hour [95 %] | of them still | "
         "off stars: threshold, false / Mpix-frame | catalogue overflow | ms / frame |\n"
      << rule(11) << "\n";
  for (const SceneSummary& s : r.scenes) {
    for (const ChainSummary& ch : s.chains) {
      if (ch.cells.empty()) continue;
      double lo = ch.cells.front().held_out_threshold, hi = lo;
      for (const ChainCellScore& c : ch.cells) {
        lo = std::min(lo, c.held_out_threshold);
        hi = std::max(hi, c.held_out_threshold);
      }
      out << "| " << s.scene.name << " | " << ch.name << " | "
          << fmt("%g", ch.thresholds[static_cast<std::size_t>(ch.chosen)])
          << (ch.within ? "" : " (none within)") << " | "
          << fmt("%.3f", static_cast<double>(ch.false_detections) / ch.area_mpix_frames) << " | "
          << fmt("%g", lo) << (hi > lo ? fmt("-%g", hi) : "")
          << (ch.held_out_none_within > 0
                  ? fmt(" (%g cells: none within, scored at the threshold on all cells)",
                        ch.held_out_none_within)
                  : "")
          << " | " << with_interval("%.3f", ch.held_out_rate, ch.held_out_rate_95) << " | "
          << with_interval("%.0f", ch.held_out_false_tracks_per_hour,
                           ch.held_out_false_tracks_per_hour_95)
          << " (" << ch.held_out_false_tracks << " in " << ch.frames << " frames) | "
          << ch.held_out_still_false_tracks << " | " << off_stars(ch) << " | " << ch.overflow
          << " | " << fmt("%.1f", ch.ms_per_frame) << " |\n";
    }
  }
  out << "\n";
}

void scan(const QualityReport& r, std::ostream& out) {
  const QualityConfig& c = r.config;
  out << "Every threshold run, all cells together: false detections per Mpix-frame; "
         "completeness per frame at each peak SNR (all speeds pooled / the worst speed); the "
         "same by tracks (movers followed); false tracks per hour (of them still); where the false "
         "detections lie (their centroid: as the harness's false alarms, above).\n\n"
      << "| scene | chain | threshold | false / Mpix-frame |";
  for (const double snr : c.snrs) out << " SNR " << fmt("%g", snr) << " |";
  for (const double snr : c.snrs) out << " tracks SNR " << fmt("%g", snr) << " |";
  out << " false tracks / hour | false at: saturated star / star / hot / mover / clear |\n"
      << rule(6 + 2 * c.snrs.size()) << "\n";
  for (const SceneSummary& s : r.scenes) {
    for (const ChainSummary& ch : s.chains) {
      for (const ChainThresholdRow& row : ch.scan) {
        out << "| " << s.scene.name << " | " << ch.name << " | " << fmt("%g", row.threshold)
            << " | " << fmt("%.3f", row.false_rate) << " |";
        for (std::size_t i = 0; i < c.snrs.size(); ++i) {
          out << " " << fmt("%.1f", 100.0 * row.completeness[i]) << " / "
              << fmt("%.1f", 100.0 * row.worst_completeness[i]) << " |";
        }
        for (std::size_t i = 0; i < c.snrs.size(); ++i) {
          out << " " << fmt("%.1f", 100.0 * row.track_completeness[i]) << " / "
              << fmt("%.1f", 100.0 * row.worst_track_completeness[i]) << " |";
        }
        out << " " << fmt("%.0f", row.false_tracks_per_hour) << " (" << row.still_false_tracks
            << ") | " << row.places[0] << " / " << row.places[1] << " / " << row.places[2] << " / "
            << row.places[3] << " / " << row.places[4] << " |\n";
      }
    }
  }
  out << "\n";
}

}  // namespace

void write_chain_markdown(const QualityReport& r, std::ostream& out) {
  const QualityConfig& c = r.config;
  const TrackerParams tracker;
  out << "## The shipped chain: whiten, detect, track\n\n"
      << "`siftwhiten ! siftdetect` with no property set but the threshold (chain `defaults`: "
         "whitening writes its significance, detection thresholds it through the scale on the "
         "caps; the 3 x 3 filter, min-area "
      << DetectParams::kDefaultMinArea
      << "), and chain `residual-mesh`, the former pairing (output: residual, detection's mesh "
         "background of "
      << DetectParams::kDefaultMesh << " px)"
      << (c.chain_noise_frames > 0.0
              ? fmt(", whitening's noise-frames set to %g", c.chain_noise_frames)
              : std::string())
      << (c.chain_shift_noise ? fmt(", whitening's shift-noise set to %g px", *c.chain_shift_noise)
                              : std::string())
      << (c.chain_fit ? ", whitening's fit set to " + std::string(to_string(*c.chain_fit))
                      : std::string())
      << (c.chain_fit_subsample
              ? fmt(", whitening's fit-subsample set to %d", *c.chain_fit_subsample)
              : std::string())
      << ", on the " << to_string(c.backend.backend) << " backend, run at each threshold from "
      << fmt("%g", c.chain_thresholds.front()) << " to " << fmt("%g", c.chain_thresholds.back())
      << " sigma; each threshold's catalogues "
      << "linked by the tracker's defaults (gate " << fmt("%g", tracker.gate) << " px, confirm "
      << tracker.confirm << ", coast " << tracker.coast << ", max-speed "
      << fmt("%g", tracker.max_speed)
      << ") over the scored frames. An object is a hit when its centroid or peak pixel lies "
         "within "
      << fmt("%g", c.hit_radius)
      << " px of a mover's path; objects centred in the border are not scored. The threshold "
         "is the lowest run with at most "
      << fmt("%g", c.false_alarm_rate)
      << " false detections per Mpix-frame; held out: each cell is scored at the threshold "
         "chosen on the other cells. Off stars: the same rule counting only the false "
         "detections at hot pixels, near movers or on clear sky, the noise a threshold "
         "controls (with residual-mesh, star residuals stay above every threshold run: "
         "detection measures the noise in tiles). False tracks: confirmed tracks whose detections "
         "are mostly "
         "false, per hour at "
      << fmt("%g", c.track_fps) << " frames/s of " << c.size << "² frames; still: slower than "
      << fmt("%g", TrackScorer::kStillSpeed)
      << " px/frame (star residuals; `min-speed` hides them). "
         "docs/quality.md, \"The shipped chain\".\n\n";
  summary(r, out);
  out << "### Completeness per frame, held out\n\nTrials as above; % [Wilson 95 %]; the target "
         "is >= "
      << fmt("%g", 100.0 * kFrameTarget) << " % at peak SNR " << fmt("%g", kFrameSnr)
      << " with jitter.\n\n";
  grid(r, false, kFrameSnr, kFrameTarget, out);
  out << "### Completeness by tracks, held out\n\nMovers that are trials in at least "
      << tracker.confirm
      << " scored frames; found when a confirmed track follows them; the target is >= "
      << fmt("%g", 100.0 * kTrackTarget) << " % at peak SNR " << fmt("%g", kTrackSnr)
      << " with jitter.\n\n";
  grid(r, true, kTrackSnr, kTrackTarget, out);
  out << "### Every threshold\n\n";
  scan(r, out);
}

Json chain_json(const QualityConfig& config, const ChainSummary& ch) {
  Json cells = Json::array();
  for (const ChainCellScore& c : ch.cells) {
    cells.push(Json::object()
                   .set("peak_snr", c.cell.snr)
                   .set("speed", c.cell.speed)
                   .set("trials", c.trials)
                   .set("hits", c.hits)
                   .update(with_95("completeness", c.completeness))
                   .set("held_out_threshold", c.held_out_threshold)
                   .set("held_out_hits", c.held_out_hits)
                   .update(with_95("held_out_completeness", c.held_out_completeness))
                   .set("held_out_false_detections", c.held_out_false_detections)
                   .set("track_movers", c.track_movers)
                   .set("tracked", c.tracked)
                   .update(with_95("track_completeness", c.track_completeness))
                   .set("false_tracks", c.false_tracks)
                   .set("hits_per_threshold", counts(c.hits_at))
                   .set("tracked_per_threshold", counts(c.tracked_at))
                   .set("false_detections_per_threshold", counts(c.false_at)));
  }
  Json scan = Json::array();
  for (const ChainThresholdRow& row : ch.scan) {
    scan.push(Json::object()
                  .set("threshold", row.threshold)
                  .set("false_detections", row.false_detections)
                  .set("false_rate", row.false_rate)
                  .set("false_places", places(row.places))
                  .set("false_off_stars", row.false_off_stars)
                  .set("tracks", row.tracks)
                  .set("false_tracks", row.false_tracks)
                  .set("still_false_tracks", row.still_false_tracks)
                  .set("false_tracks_per_hour", row.false_tracks_per_hour)
                  .set("completeness_per_snr", numbers(row.completeness))
                  .set("worst_completeness_per_snr", numbers(row.worst_completeness))
                  .set("track_completeness_per_snr", numbers(row.track_completeness))
                  .set("worst_track_completeness_per_snr", numbers(row.worst_track_completeness)));
  }
  return Json::object()
      .set("name", ch.name)
      .set("thresholds", numbers(ch.thresholds))
      .set("peak_snrs", numbers(config.snrs))
      .set("threshold",
           ch.thresholds.empty() ? 0.0 : ch.thresholds[static_cast<std::size_t>(ch.chosen)])
      .set("threshold_within_rate", ch.within)
      .set("threshold_off_stars",
           ch.chosen_off_stars < 0
               ? Json()
               : Json(ch.thresholds[static_cast<std::size_t>(ch.chosen_off_stars)]))
      .set("false_detections", ch.false_detections)
      .set("area_mpix_frames", ch.area_mpix_frames)
      .set("frames", ch.frames)
      .set("hours", ch.hours)
      .set("frame_rate", config.track_fps)
      .set("held_out_off_stars_false_detections", ch.held_out_off_stars)
      .set("held_out_off_stars_rate", ch.held_out_off_stars_rate)
      .set("held_out_off_stars_thresholds",
           Json::array().push(ch.held_out_off_stars_low).push(ch.held_out_off_stars_high))
      .set("held_out_false_detections", ch.held_out_false_detections)
      .update(with_95("held_out_rate", ch.held_out_rate, ch.held_out_rate_95))
      .set("held_out_cells_none_within", ch.held_out_none_within)
      .set("held_out_false_tracks", ch.held_out_false_tracks)
      .set("held_out_still_false_tracks", ch.held_out_still_false_tracks)
      .update(with_95("held_out_false_tracks_per_hour", ch.held_out_false_tracks_per_hour,
                      ch.held_out_false_tracks_per_hour_95))
      .set("catalogue_overflow", ch.overflow)
      .set("ms_per_frame", ch.ms_per_frame)
      .set("cells", std::move(cells))
      .set("scan", std::move(scan));
}

Json chain_definitions() {
  return Json::object()
      .set("chain",
           "the shipped stages as siftwhiten ! siftdetect run them with no property set "
           "(WhitenParams{} with the harness's history, and noise-frames when set; DetectParams{}; "
           "chain residual-mesh: output residual, background mesh), "
           "detection run at each of `thresholds`; each threshold's catalogues linked by a "
           "Tracker with TrackerParams{} over the scored frames (started at the first)")
      .set("chain_hit",
           "an object whose centroid lies in the interior and whose centroid or peak pixel lies "
           "within hit_radius_px of a mover's path during the exposure; the nearest mover wins; "
           "objects centred outside the interior are not scored")
      .set("chain_false_detection", "an object centred in the interior and near no mover")
      .set("chain_threshold",
           "the lowest threshold run whose false detections over the cells are at most rate x "
           "their Mpix-frames; held out: each cell at the threshold so chosen on the other cells")
      .set("track_follows",
           "a confirmed track's detections from its confirmation on, by label (a mover, false, "
           "not scored): the most frequent decides, ties towards a mover")
      .set("track_completeness",
           "movers that are trials in >= confirm scored frames and that a track follows, over "
           "those movers")
      .set("false_tracks_per_hour",
           "confirmed tracks whose detections are mostly false detections, over the scored "
           "frames at frame_rate; still: slower than 0.4 px/frame at their latest report");
}

}  // namespace starsift::quality
