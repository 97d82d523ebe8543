// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/sky/sky_movers.hpp"

#include <algorithm>
#include <cmath>

#include "pipeline/sky/sky_random.hpp"

namespace starsift::sky {

namespace {
constexpr double kRadiansPerDegree = 3.141592653589793 / 180.0;
// Lifetimes beyond this many frames count as "never leaves" (and keep the arithmetic exact).
constexpr double kLongestLife = 1.0e15;
}  // namespace

MoverTracks::MoverTracks(const SkyParams& params, const SkyBackground& background,
                         double peak_fraction)
    : params_(params), background_(background), peak_fraction_(peak_fraction) {
  slots_.reserve(static_cast<std::size_t>(params_.movers));
  for (int slot = 0; slot < params_.movers; ++slot) slots_.push_back(draw(slot, 0, 0));
}

const MoverTrack& MoverTracks::at(int slot, std::uint64_t frame) {
  MoverTrack& track = slots_[static_cast<std::size_t>(slot)];
  if (frame < track.birth) track = draw(slot, 0, 0);
  while (frame >= track.death) track = draw(slot, track.generation + 1, track.death);
  return track;
}

// Frames until the centre (without jitter) crosses out of the frame's area
// [-0.5, side - 0.5] on either axis, moving at the velocity on the frame (own + drift).
std::uint64_t MoverTracks::lifetime(double x0, double y0, double vx, double vy) const {
  double frames = kLongestLife;
  const auto until_out = [&](double p, double v, int side) {
    if (v > 0.0) frames = std::min(frames, (side - 0.5 - p) / v);
    if (v < 0.0) frames = std::min(frames, (p + 0.5) / -v);
  };
  until_out(x0, vx + params_.drift_x, params_.width);
  until_out(y0, vy + params_.drift_y, params_.height);
  if (frames >= kLongestLife) return MoverTrack::kNever;
  // The first whole frame strictly beyond the crossing; at least one frame of life.
  return static_cast<std::uint64_t>(std::floor(std::max(frames, 0.0))) + 1;
}

MoverTrack MoverTracks::draw(int slot, std::uint64_t generation, std::uint64_t birth) const {
  SkyRng rng =
      SkyRng::stream(params_.seed, Stream::Mover, static_cast<std::uint64_t>(slot), generation);
  MoverTrack t;
  t.generation = generation;
  t.id = generation * static_cast<std::uint64_t>(params_.movers) + static_cast<std::uint64_t>(slot);
  t.birth = birth;
  // Appear a PSF width or two inside the edges (less on tiny frames), so a new mover's
  // image starts whole.
  const auto place = [&](int side) {
    const double margin = std::min(2.0 * params_.fwhm, 0.25 * (side - 1));
    return margin + rng.uniform() * (side - 1 - 2.0 * margin);
  };
  t.x0 = place(params_.width);
  t.y0 = place(params_.height);
  const double speed =
      params_.mover_speed_min + rng.uniform() * (params_.mover_speed_max - params_.mover_speed_min);
  const double degrees =
      params_.mover_direction < 0.0 ? rng.uniform() * 360.0 : params_.mover_direction;
  t.vx = speed * std::cos(degrees * kRadiansPerDegree);
  t.vy = speed * std::sin(degrees * kRadiansPerDegree);
  const double snr =
      params_.mover_snr_min + rng.uniform() * (params_.mover_snr_max - params_.mover_snr_min);
  // Nominal peak SNR = flux * peak_fraction / sqrt(sky + read_noise^2) where it appears.
  const double sigma =
      std::sqrt(background_.sky_at(t.x0, t.y0) + params_.read_noise * params_.read_noise);
  t.flux = snr * sigma / peak_fraction_;
  const std::uint64_t life = lifetime(t.x0, t.y0, t.vx, t.vy);
  t.death = life == MoverTrack::kNever || birth > MoverTrack::kNever - life ? MoverTrack::kNever
                                                                            : birth + life;
  return t;
}

}  // namespace starsift::sky
