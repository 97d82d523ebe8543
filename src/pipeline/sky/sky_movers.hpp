// SPDX-License-Identifier: LGPL-2.1-or-later
// The movers' trajectories: `movers` slots, each holding one mover at a time. A mover
// appears at a uniform position inside the frame, moves in a straight line at a constant
// velocity relative to the star field (and with the field's drift and jitter on top), and
// when its centre leaves the frame the slot's next mover (a new id) appears in that frame.
// Everything about a slot's n-th mover comes from the stream (seed, Mover, slot, n), so
// trajectories depend on the seed alone.
#pragma once

#include <cstdint>
#include <vector>

#include "pipeline/sky/sky_background.hpp"
#include "pipeline/sky/sky_params.hpp"

namespace starsift::sky {

struct MoverTrack {
  std::uint64_t id = 0;
  std::uint64_t generation = 0;  // the slot's n-th mover
  std::uint64_t birth = 0;       // first frame it is in
  std::uint64_t death = 0;       // first frame it is not (kNever when it never leaves)
  double x0 = 0.0;               // centre at birth, before the field's jitter, px
  double y0 = 0.0;
  double vx = 0.0;  // px/frame relative to the field
  double vy = 0.0;
  double flux = 0.0;  // e- per exposure

  static constexpr std::uint64_t kNever = UINT64_MAX;

  bool alive(std::uint64_t frame) const noexcept { return frame >= birth && frame < death; }
};

class MoverTracks {
 public:
  // `peak_fraction`: the PSF's, to turn a drawn peak SNR into a flux.
  MoverTracks(const SkyParams& params, const SkyBackground& background, double peak_fraction);

  int count() const noexcept { return static_cast<int>(slots_.size()); }

  // The mover in `slot` at `frame`. Going forward the slot steps through its movers (one
  // step per replacement); an earlier frame starts again from its first mover.
  const MoverTrack& at(int slot, std::uint64_t frame);

 private:
  MoverTrack draw(int slot, std::uint64_t generation, std::uint64_t birth) const;
  std::uint64_t lifetime(double x0, double y0, double vx, double vy) const;

  const SkyParams params_;
  const SkyBackground& background_;
  double peak_fraction_;
  std::vector<MoverTrack> slots_;
};

}  // namespace starsift::sky
