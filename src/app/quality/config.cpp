// SPDX-License-Identifier: LGPL-2.1-or-later
#include "app/quality/config.hpp"

#include <algorithm>
#include <cmath>

#include "app/rng.hpp"
#include "pipeline/error.hpp"

namespace starsift::quality {

namespace {

void require(bool ok, const std::string& what, const std::string& allowed) {
  if (!ok) throw Error("quality: " + what + " is not allowed", allowed);
}

bool all_positive(const std::vector<double>& values) {
  if (values.empty()) return false;
  for (const double v : values) {
    if (!(v > 0.0) || !std::isfinite(v)) return false;
  }
  return true;
}

}  // namespace

std::string_view chain_name(ChainKind kind) noexcept {
  switch (kind) {
    case ChainKind::Defaults:
      return "defaults";
    case ChainKind::ResidualMesh:
      return "residual-mesh";
  }
  return "?";
}

std::vector<double> QualityConfig::default_chain_thresholds() {
  std::vector<double> t;
  for (int i = 0; i <= 14; ++i) t.push_back(3.5 + 0.25 * i);
  return t;
}

std::vector<SceneSpec> QualityConfig::scenes() const {
  return {{"jitter-on", jitter}, {"jitter-off", 0.0}};
}

void QualityConfig::validate() const {
  require(size >= 64 && size <= 8192, "size " + std::to_string(size), "64..8192");
  require(warmup_frames > history, "warmup " + std::to_string(warmup_frames),
          "more frames than the history (" + std::to_string(history) + ")");
  require(scored_frames >= 1, "frames " + std::to_string(scored_frames), ">= 1");
  require(movers >= 1 && movers <= SkyParams::kMaxMovers, "movers " + std::to_string(movers),
          "1.." + std::to_string(SkyParams::kMaxMovers));
  require(history >= 1 && history <= 64, "history " + std::to_string(history), "1..64");
  require(chain_noise_frames == 0.0 || chain_noise_frames >= 1.0,
          "noise-frames " + std::to_string(chain_noise_frames), "0 (the default) or >= 1");
  require(all_positive(snrs), "the SNR list", "one or more numbers > 0");
  require(all_positive(speeds), "the speed list", "one or more numbers > 0");
  require(jitter > 0.0 && jitter <= SkyParams::kMaxJitter, "jitter " + std::to_string(jitter),
          "> 0 and <= 10 px");
  require(star_density >= 0.0 && star_density <= SkyParams::kMaxStarDensity,
          "star density " + std::to_string(star_density), "0..1e5 per megapixel");
  require(hit_radius > 0.0, "hit radius " + std::to_string(hit_radius), "> 0 px");
  require(border >= 1 && 2 * border < size, "border " + std::to_string(border),
          "1 px or more, less than half the size");
  require(false_alarm_rate > 0.0, "false-alarm rate " + std::to_string(false_alarm_rate), "> 0");
  require(all_positive(chain_thresholds) &&
              std::is_sorted(chain_thresholds.begin(), chain_thresholds.end()) &&
              std::adjacent_find(chain_thresholds.begin(), chain_thresholds.end()) ==
                  chain_thresholds.end(),
          "the chain's threshold list", "one or more numbers > 0, ascending, each once");
  require(track_fps > 0.0 && std::isfinite(track_fps), "frame rate " + std::to_string(track_fps),
          "> 0 frames per second");
  require(backend.backend != Backend::Auto, "backend auto", "a resolved backend: cpu or cuda");
  require(export_dir.empty() || std::find(methods.begin(), methods.end(),
                                          MethodKind::DifferenceAligned) != methods.end(),
          "exporting the aligned difference without the difference-aligned method",
          "difference-aligned among the methods (--methods difference-aligned, or all)");
}

std::vector<Cell> make_cells(const QualityConfig& config) {
  std::vector<Cell> cells;
  const int speeds = static_cast<int>(config.speeds.size());
  for (int i = 0; i < static_cast<int>(config.snrs.size()); ++i) {
    for (int j = 0; j < speeds; ++j) {
      Cell c;
      c.index = i * speeds + j;
      c.snr_index = i;
      c.speed_index = j;
      c.snr = config.snrs[static_cast<std::size_t>(i)];
      c.speed = config.speeds[static_cast<std::size_t>(j)];
      c.seed = app::Rng::derive(config.seed, static_cast<std::uint64_t>(c.index));
      cells.push_back(c);
    }
  }
  return cells;
}

SkyParams sky_params_for(const QualityConfig& config, const SceneSpec& scene, const Cell& cell) {
  SkyParams p;
  p.width = config.size;
  p.height = config.size;
  p.seed = cell.seed;
  p.star_density = config.star_density;
  p.jitter = scene.jitter;
  p.movers = config.movers;
  p.mover_snr_min = p.mover_snr_max = cell.snr;
  p.mover_speed_min = p.mover_speed_max = cell.speed;
  p.mover_direction = SkyParams::kRandomDirection;
  p.validate_for(PixelFormat::Gray16);
  return p;
}

}  // namespace starsift::quality
