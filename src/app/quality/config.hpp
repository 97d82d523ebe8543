// SPDX-License-Identifier: LGPL-2.1-or-later
// What `starsift quality` measures: the scenes, the grid of mover SNRs and speeds, the frames,
// and the scoring rules. docs/quality.md explains every choice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/quality/methods.hpp"
#include "pipeline/backend.hpp"
#include "pipeline/sky/sky_params.hpp"
#include "pipeline/whiten/params.hpp"

namespace starsift::quality {

// The shipped whiten -> detect chains the harness runs (chain_run.hpp).
enum class ChainKind {
  // `siftwhiten ! siftdetect` with no property set: whitening writes its significance (residual
  // over its own sigma_{t-1}) into the input's format (output: significance), detection reads it
  // through the scale the caps carry (background: auto).
  Defaults,
  // The pairing that shipped before: whitening writes its residual into the input's format
  // (output: residual), detection estimates background and noise in tiles (background: mesh).
  ResidualMesh,
};
inline constexpr ChainKind kAllChains[] = {ChainKind::Defaults, ChainKind::ResidualMesh};
// defaults, residual-mesh.
std::string_view chain_name(ChainKind kind) noexcept;

// A pointing regime: every cell of the grid is run once per scene.
struct SceneSpec {
  std::string name;     // jitter-on, jitter-off
  double jitter = 0.0;  // the sky's walk step (px per frame); 0: a still field
};

struct QualityConfig {
  int size = 512;          // frames are size x size GRAY16
  std::uint64_t seed = 1;  // each cell's sky seed derives from it
  // Frames before scoring: three of sigma's time constants (noise-frames, 4 x history), so the
  // chains are scored at steady state, as a camera running for minutes is.
  int warmup_frames = 240;
  int scored_frames = 16;  // frames scored per cell
  int movers = 64;         // movers in every frame
  int history = 20;        // whitening's N and the running median's frame count
  // The chains' whitening noise-frames (sigma's time constant); 0: whitening's default (2 N).
  double chain_noise_frames = 0.0;
  // The chains' whitening shift-noise (px); unset: whitening's default.
  std::optional<double> chain_shift_noise;
  // The chains' whitening fit and fit-subsample; unset: whitening's defaults.
  std::optional<WhitenFit> chain_fit;
  std::optional<int> chain_fit_subsample;
  std::vector<double> snrs = {3.0, 4.0, 5.0, 6.0, 8.0};    // nominal peak SNR of the movers
  std::vector<double> speeds = {0.5, 1.0, 2.0, 3.5, 5.0};  // px/frame
  double jitter = 0.3;            // walk step of the jitter-on scene, px per frame
  double star_density = 200.0;    // stars per megapixel (~20 per 0.1 Mpix)
  double hit_radius = 2.0;        // px from the mover's streak
  int border = 8;                 // px at each edge neither detected in nor scored
  double false_alarm_rate = 0.1;  // allowed false detections per megapixel-frame
  float peak_floor = 3.0f;        // peaks below this SNR are not kept as candidates
  double bright_star_snr = 10.0;  // star leakage: stars of at least this nominal peak SNR
  double picture_snr = 5.0;       // the cell whose first scored frame is drawn
  double picture_speed = 2.0;
  // Where the whitening stages run: resolved (resolve_backend()), never Auto. The baselines,
  // the matched filter and the scoring run on the CPU whatever it is.
  BackendChoice backend;
  // The residual methods scored by the harness's matched filter, in report order; the
  // shipped chain (chain_run.hpp) runs whatever this holds, so an empty list measures it alone.
  std::vector<MethodKind> methods{std::begin(kAllMethods), std::end(kAllMethods)};
  // The shipped chain's detection thresholds (sigma), ascending: the stage runs at each, and
  // the summary picks among them. 3.5..7 in steps of 0.25.
  std::vector<double> chain_thresholds = default_chain_thresholds();
  // The chains run, in report order.
  std::vector<ChainKind> chains{std::begin(kAllChains), std::end(kAllChains)};
  // Frames per second the false tracks per hour are counted at (the tracker's timestamps).
  double track_fps = 25.0;
  // Where each scored frame's aligned difference and truth are written for detectors outside
  // the harness (difference_export.hpp); empty: nowhere. Needs difference-aligned in methods.
  std::string export_dir;

  static std::vector<double> default_chain_thresholds();

  std::vector<SceneSpec> scenes() const;
  // Throws Error naming the field and what is allowed.
  void validate() const;
};

// One point of the grid: all its movers share a peak SNR and a speed.
struct Cell {
  int index = 0;  // snr_index * speeds + speed_index
  int snr_index = 0;
  int speed_index = 0;
  double snr = 0.0;
  double speed = 0.0;
  std::uint64_t seed = 0;  // the sky's seed: a star field, hot pixels and noise of its own
};

std::vector<Cell> make_cells(const QualityConfig& config);

// The score among `scores` (a method's or a chain's, each with its `cell`) of the cell at
// (snr, speed), or null where the grid has none: the report's tables go by grid values.
template <class Score>
const Score* find_at(const std::vector<Score>& scores, double snr, double speed) noexcept {
  for (const Score& s : scores) {
    if (s.cell.snr == snr && s.cell.speed == speed) return &s;
  }
  return nullptr;
}

// The sky of one cell in one scene: SkyParams' defaults (sky 400 e-, gradient 0.1, read noise
// 5 e-, gain 2, bias 100, 12 bits, Gaussian PSF of FWHM 3 px, hot pixels 1e-4 at 5000 e-,
// stars 300..1e6 e- with slope 1), with the size, seed, star density, jitter and movers of
// the config and the cell (random directions).
SkyParams sky_params_for(const QualityConfig& config, const SceneSpec& scene, const Cell& cell);

}  // namespace starsift::quality
