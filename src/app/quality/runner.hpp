// SPDX-License-Identifier: LGPL-2.1-or-later
// The whole measurement: every cell of the grid in every scene, then each scene's summary.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "app/quality/cell_run.hpp"
#include "app/quality/config.hpp"
#include "app/quality/summary.hpp"
#include "pipeline/detect/psf_kernel.hpp"
#include "pipeline/sky/sky_params.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift::quality {

struct QualityReport {
  QualityConfig config;
  SkyParams sky;  // the first cell's sky: what every cell shares (seed, movers, jitter differ)
  PsfKernel kernel;
  double median_floor = 0.0;  // the running median's noise floor at this history
  std::vector<SceneSummary> scenes;
  double seconds = 0.0;  // wall time of the measurement
  unsigned threads = 0;
};

// Called after each cell: scene name, cell, cells done, cells in all.
using QualityProgress =
    std::function<void(const std::string& scene, const Cell& cell, int done, int total)>;

// Runs the grid. `pictures` (may be null) receives the picture cell's first scored frame of
// each scene, in scene order.
QualityReport run_quality(const QualityConfig& config, ThreadPool& pool,
                          const QualityProgress& progress, std::vector<PictureFrame>* pictures);

}  // namespace starsift::quality
