// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/report_markdown.hpp"

#include <cmath>
#include <cstdio>

#include "app/quality/frame_layout.hpp"
#include "app/quality/markdown_cells.hpp"
#include "app/quality/report_chain.hpp"

namespace starsift::quality {

namespace {

// The completeness target: >= 90 % at peak SNR 5 over every speed, with jitter (targets.md).
constexpr double kTargetSnr = 5.0;
constexpr double kTargetCompleteness = 0.9;

// The cells of method `m` at peak SNR `snr`, one per speed, each its completeness and
// interval as `masked` selects, then whether every speed meets the target; ends the row.
void speed_cells(const QualityConfig& c, const MethodSummary& m, double snr, bool masked,
                 std::ostream& out) {
  const bool meets = write_speed_cells(
      c.speeds, m, snr,
      [masked](const CellScore& x) { return masked ? x.completeness_star_mask : x.completeness; },
      kTargetCompleteness, out);
  out << " " << (meets ? "yes" : "no") << " |\n";
}

// The grid's SNR nearest to the target's.
double target_snr(const QualityConfig& config) {
  double best = config.snrs.front();
  for (const double s : config.snrs) {
    if (std::fabs(s - kTargetSnr) < std::fabs(best - kTargetSnr)) best = s;
  }
  return best;
}

void summary_table(const QualityReport& r, std::ostream& out) {
  const QualityConfig& c = r.config;
  const double snr = target_snr(c);
  out << "## Summary\n\n"
      << "Target (docs/targets.md): completeness >= 90 % at peak SNR 5 for 0.5-5 px/frame with "
         "jitter, at <= "
      << fmt("%g", c.false_alarm_rate)
      << " false detections per megapixel-frame. Completeness in % at peak SNR " << fmt("%g", snr)
      << " per speed (px/frame), 95 % interval in brackets.\n\n"
      << "| scene | method | threshold (S) | false / Mpix-frame [95 %] | held out |"
      << speed_header(c.speeds) << " meets target |\n"
      << rule(5 + c.speeds.size() + 1) << "\n";
  for (const SceneSummary& s : r.scenes) {
    for (const MethodSummary& m : s.methods) {
      const double rate =
          static_cast<double>(m.threshold.false_alarms) / m.threshold.area_mpix_frames;
      out << "| " << s.scene.name << " | " << m.name << " | " << fmt("%.2f", m.threshold.threshold)
          << (m.threshold.at_floor ? " (floor)" : "") << " | "
          << with_interval("%.3f", rate, m.false_alarm_rate_95) << " | "
          << fmt("%.3f", m.held_out_rate) << " |";
      speed_cells(c, m, snr, false, out);
    }
  }
  out << "\n";
}

void masked_summary_table(const QualityReport& r, std::ostream& out) {
  const QualityConfig& c = r.config;
  const double snr = target_snr(c);
  out << "## Summary with a bright-star mask\n\n"
      << "The same, with detections dropped inside the halo of every star of nominal peak SNR "
         ">= "
      << fmt("%g", c.bright_star_snr)
      << " (where it puts >= 0.5 sigma on a pixel, widened by the field's motion over the "
         "history + 1 px), as a detector with a star catalogue would; the threshold is chosen "
         "again outside the mask. Masked: ";
  for (const SceneSummary& s : r.scenes) {
    out << s.scene.name << " "
        << fmt("%.2f",
               s.area_mpix_frames > 0 ? 100.0 * s.masked_mpix_frames / s.area_mpix_frames : 0.0)
        << " % of the area; ";
  }
  out << "movers inside the mask stay trials and are missed.\n\n"
      << "| scene | method | threshold (S) | false / Mpix-frame |" << speed_header(c.speeds)
      << " meets target |\n"
      << rule(4 + c.speeds.size() + 1) << "\n";
  for (const SceneSummary& s : r.scenes) {
    for (const MethodSummary& m : s.methods) {
      const ThresholdChoice& t = m.threshold_star_mask;
      out << "| " << s.scene.name << " | " << m.name << " | " << fmt("%.2f", t.threshold)
          << (t.at_floor ? " (floor)" : "") << " | "
          << fmt("%.3f", static_cast<double>(t.false_alarms) / t.area_mpix_frames) << " |";
      speed_cells(c, m, snr, true, out);
    }
  }
  out << "\n";
}

void completeness_tables(const QualityReport& r, std::ostream& out) {
  const QualityConfig& c = r.config;
  out << "## Completeness per cell\n\n"
      << "Per cell: " << c.movers << " movers x " << c.scored_frames
      << " scored frames (trials: movers inside the interior, about "
      << (r.scenes.empty() || r.scenes.front().methods.empty()
              ? 0
              : r.scenes.front().trials / static_cast<long long>(std::max<std::size_t>(
                                              1, r.scenes.front().methods.front().cells.size())))
      << " per cell; the JSON has each cell's count and distinct movers). Rows: peak SNR; "
         "columns: speed in px/frame; % [Wilson 95 %].\n\n";
  for (const SceneSummary& s : r.scenes) {
    for (const MethodSummary& m : s.methods) {
      out << "### " << s.scene.name << ", " << m.name << " (threshold S > "
          << fmt("%.2f", m.threshold.threshold) << ")\n\n"
          << "| peak SNR |" << speed_header(c.speeds) << "\n"
          << rule(1 + c.speeds.size()) << "\n";
      for (const double snr : c.snrs) {
        out << "| " << fmt("%g", snr) << " |";
        for (const double v : c.speeds) {
          const CellScore* cell = find_cell(m, snr, v);
          out << " " << (cell ? percent_text(cell->completeness) : "-") << " |";
        }
        out << "\n";
      }
      out << "\n";
    }
  }
}

// Mean over the grid's SNRs of a cell quantity at one speed.
template <class F>
double mean_over_snr(const QualityConfig& c, const MethodSummary& m, double speed, F f) {
  double sum = 0.0;
  int n = 0;
  for (const double snr : c.snrs) {
    if (const CellScore* cell = find_cell(m, snr, speed)) {
      sum += f(*cell);
      ++n;
    }
  }
  return n > 0 ? sum / n : 0.0;
}

void efficiency_table(const QualityReport& r, std::ostream& out) {
  const QualityConfig& c = r.config;
  out << "## SNR efficiency\n\n"
      << "eta = measured matched-filter SNR at the mover's truth pixel (S / snr_scale) over "
         "its ideal single-frame matched-filter SNR (flux sqrt(sum P^2) / sigma), mean over "
         "the SNR cells of each speed. `filter` is the same ratio for the noise-free mover "
         "seen by the point-source filter (streak and sub-pixel position): the most any "
         "background subtraction can give this detector; eta / filter is what the "
         "subtraction itself keeps. Rows `..., frame sigma`: whitening's residual filtered "
         "with one robust sigma per frame instead of its variance map (as the baselines "
         "are), to show what the map costs where movers raise it.\n\n"
      << "| scene | method |" << speed_header(c.speeds) << " eta / filter at "
      << fmt("%g", c.speeds.front()) << " | at " << fmt("%g", c.speeds.back()) << " |\n"
      << rule(2 + c.speeds.size() + 2) << "\n";
  for (const SceneSummary& s : r.scenes) {
    if (s.methods.empty()) continue;
    out << "| " << s.scene.name << " | filter |";
    for (const double v : c.speeds) {
      out << " "
          << fmt("%.3f", mean_over_snr(c, s.methods.front(), v,
                                       [](const CellScore& x) { return x.filter_loss; }))
          << " |";
    }
    out << " | |\n";
    for (const MethodSummary& m : s.methods) {
      const auto row = [&](const std::string& label, double (*eta_of)(const CellScore&)) {
        out << "| " << s.scene.name << " | " << label << " |";
        for (const double v : c.speeds)
          out << " " << fmt("%.3f", mean_over_snr(c, m, v, eta_of)) << " |";
        for (const double v : {c.speeds.front(), c.speeds.back()}) {
          const double eta = mean_over_snr(c, m, v, eta_of);
          const double loss =
              mean_over_snr(c, m, v, [](const CellScore& x) { return x.filter_loss; });
          out << " " << fmt("%.3f", loss > 0.0 ? eta / loss : 0.0) << " |";
        }
        out << "\n";
      };
      row(m.name, [](const CellScore& x) { return x.eta; });
      if (!m.cells.empty() && m.cells.front().eta_frame_sigma > 0.0) {
        row(m.name + ", frame sigma", [](const CellScore& x) { return x.eta_frame_sigma; });
      }
    }
  }
  out << "\n";
}

void noise_table(const QualityReport& r, std::ostream& out) {
  out << "## Residual noise\n\n"
      << "Residual sigma (1.4826 MAD over quiet pixels: no star, hot pixel or mover within "
         "reach) over the frame's sigma, median over scored frames, next to the method's "
         "floor for independent frames (whitening: sqrt(1 + sum a^2) from last_stats(), mean; "
         "difference: sqrt 2; running median of "
      << r.config.history << ": " << fmt("%.4f", r.median_floor)
      << " by Monte Carlo). `SNR scale`: the robust sigma of the SNR image S over the "
         "interior (1 when the method's sigma is right and its residual white). `shift "
         "error`: |measured - true field shift| per scored frame, for the methods that "
         "measure one.\n\n"
      << "| scene | method | residual / frame sigma | floor | ratio / floor | SNR scale | "
         "shift error median / max (px) |\n"
      << rule(7) << "\n";
  for (const SceneSummary& s : r.scenes) {
    for (const MethodSummary& m : s.methods) {
      out << "| " << s.scene.name << " | " << m.name << " | " << fmt("%.4f", m.noise_ratio) << " | "
          << fmt("%.4f", m.noise_floor) << " | "
          << fmt("%.3f", m.noise_floor > 0 ? m.noise_ratio / m.noise_floor : 0.0) << " | "
          << fmt("%.3f", m.snr_scale) << " | ";
      if (m.shift_error.count > 0) {
        out << fmt("%.3f", m.shift_error.median) << " / " << fmt("%.3f", m.shift_error.max);
      }
      out << " |\n";
    }
  }
  out << "\n";
}

void leakage_table(const QualityReport& r, std::ostream& out) {
  out << "## Star leakage\n\n"
      << "Peak |residual| / frame sigma within 2 FWHM of stars of nominal peak SNR >= "
      << fmt("%g", r.config.bright_star_snr)
      << ", one sample per star and scored frame; `quiet` is the same statistic around "
         "fixed star-free spots (what noise alone gives).\n\n"
      << "| scene | method | samples | median | 90 % | 99 % | max | quiet median | quiet 99 % |\n"
      << rule(9) << "\n";
  for (const SceneSummary& s : r.scenes) {
    for (const MethodSummary& m : s.methods) {
      out << "| " << s.scene.name << " | " << m.name << " | " << m.leakage.count << " | "
          << fmt("%.1f", m.leakage.median) << " | " << fmt("%.1f", m.leakage.p90) << " | "
          << fmt("%.1f", m.leakage.p99) << " | " << fmt("%.1f", m.leakage.max) << " | "
          << fmt("%.1f", m.leakage_null.median) << " | " << fmt("%.1f", m.leakage_null.p99)
          << " |\n";
    }
  }
  out << "\n";
}

void places_table(const QualityReport& r, std::ostream& out) {
  out << "## Where the false alarms lie\n\n"
      << "Detections that are no mover, by the nearest thing: near a saturated star, another "
         "star, a hot pixel, a mover (outside its hit zone), or clear sky; at the chosen threshold "
         "and, to show "
         "the tails, for all candidates with S > 5.\n\n"
      << "| scene | method | at threshold: saturated star / star / hot / mover / clear | S > 5: "
         "saturated star / star / hot / mover / clear |\n"
      << rule(4) << "\n";
  const auto row = [](const std::array<long long, kPlaces>& a) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%lld / %lld / %lld / %lld / %lld", a[0], a[1], a[2], a[3],
                  a[4]);
    return std::string(buf);
  };
  for (const SceneSummary& s : r.scenes) {
    for (const MethodSummary& m : s.methods) {
      out << "| " << s.scene.name << " | " << m.name << " | " << row(m.false_alarm_places) << " | "
          << row(m.candidate_places_5) << " |\n";
    }
  }
  out << "\n";
}

void cost_table(const QualityReport& r, std::ostream& out) {
  out << "## Cost on this machine\n\n"
      << "Milliseconds per scored frame in the method and its matched filter and peak search "
         "(whitening: two stages in step, rho and sigma, on the "
      << to_string(r.config.backend.backend)
      << " backend; the baselines, the filter and the peak search on the CPU, " << r.threads
      << " threads); the harness is not tuned for speed.\n\n"
      << "| scene | method | ms / frame |\n"
      << rule(3) << "\n";
  for (const SceneSummary& s : r.scenes) {
    for (const MethodSummary& m : s.methods) {
      out << "| " << s.scene.name << " | " << m.name << " | " << fmt("%.1f", m.ms_per_frame)
          << " |\n";
    }
  }
  out << "\n";
}

}  // namespace

void write_markdown(const QualityReport& r, const std::string& version, const std::string& date,
                    const std::string& command, std::ostream& out) {
  const QualityConfig& c = r.config;
  out << "# Faint movers: whitening against frame differencing and a running median\n\n"
      << "`" << command << "`: starsift " << version << ", " << date << ", whitening on the "
      << to_string(r.config.backend.backend) << " backend"
      << (r.config.backend.reason.empty() ? "" : " (" + r.config.backend.reason + ")") << ", "
      << r.threads << " threads, " << fmt("%.0f", r.seconds) << " s.\n\n"
      << c.size << "x" << c.size << " GRAY16 (" << r.sky.bit_depth << " bits), "
      << fmt("%g", c.star_density) << " stars/Mpix, "
      << r.config.snrs.size() * r.config.speeds.size()
      << " cells (peak SNR x speed), each its own seeded sky; " << c.warmup_frames
      << " warm-up frames, then " << c.scored_frames << " scored; " << c.movers
      << " movers per frame; history " << c.history << ". Scenes:";
  for (const SceneSummary& s : r.scenes) {
    out << " " << s.scene.name << " (walk step " << fmt("%g", s.scene.jitter)
        << " px, field motion over the history " << fmt("%.2f", s.mean_motion) << " px on average, "
        << fmt("%.1f", s.area_mpix_frames) << " Mpix-frames, " << s.trials << " trials);";
  }
  out << " hit radius " << fmt("%g", c.hit_radius) << " px from the streak, border " << c.border
      << " px. docs/quality.md defines every number.\n\n";
  write_chain_markdown(r, out);
  summary_table(r, out);
  masked_summary_table(r, out);
  efficiency_table(r, out);
  noise_table(r, out);
  leakage_table(r, out);
  places_table(r, out);
  completeness_tables(r, out);
  cost_table(r, out);
}

}  // namespace starsift::quality
