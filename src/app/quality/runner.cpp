// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/runner.hpp"

#include <chrono>
#include <cmath>

#include "app/quality/baselines.hpp"
#include "pipeline/sky/sky_psf.hpp"

namespace starsift::quality {

namespace {

// The cell nearest to (snr, speed): the one whose first scored frame is drawn.
int picture_cell(const QualityConfig& config, const std::vector<Cell>& cells) {
  int best = 0;
  double best_distance = INFINITY;
  for (const Cell& c : cells) {
    const double d =
        std::fabs(c.snr - config.picture_snr) + std::fabs(c.speed - config.picture_speed);
    if (d < best_distance) {
      best = c.index;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace

QualityReport run_quality(const QualityConfig& config, ThreadPool& pool,
                          const QualityProgress& progress, std::vector<PictureFrame>* pictures) {
  const auto start = std::chrono::steady_clock::now();
  config.validate();
  const std::vector<Cell> cells = make_cells(config);
  const std::vector<SceneSpec> scenes = config.scenes();

  QualityReport report;
  report.config = config;
  report.sky = sky_params_for(config, scenes.front(), cells.front());
  const sky::Psf psf(report.sky.psf, report.sky.fwhm, report.sky.moffat_beta);
  report.kernel = make_psf_kernel(psf);
  report.median_floor = median_noise_floor(config.history);
  report.threads = pool.size();

  const int picture = picture_cell(config, cells);
  const int total = static_cast<int>(cells.size() * scenes.size());
  int done = 0;
  for (const SceneSpec& scene : scenes) {
    std::vector<CellResult> results;
    for (const Cell& cell : cells) {
      PictureFrame* frame = nullptr;
      if (pictures != nullptr && cell.index == picture) frame = &pictures->emplace_back();
      results.push_back(run_cell(config, scene, cell, report.kernel, pool, frame));
      if (progress) progress(scene.name, cell, ++done, total);
    }
    report.scenes.push_back(summarise(config, scene, results));
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace starsift::quality
