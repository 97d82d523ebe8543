// SPDX-License-Identifier: LGPL-2.1-or-later
// What the synthetic sky knows about each frame it renders: where the star field is and
// where every mover is, how bright and how noisy. Coordinates are 0-based pixel centres of
// the frame, x the fast axis; signal in electrons (e-) unless the name says ADU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace starsift {

struct MoverTruth {
  std::uint64_t id = 0;           // unique within a seed's sequence; a replacement gets a new one
  std::uint64_t first_frame = 0;  // the frame the mover appeared in
  double x = 0.0;                 // centre at mid-exposure, px
  double y = 0.0;
  double vx = 0.0;             // px/frame relative to the star field (its streak in one exposure);
  double vy = 0.0;             // between frames it also moves with the field's shift
  double flux = 0.0;           // e- collected over the exposure
  double peak_snr = 0.0;       // nominal: flux * PSF peak fraction / noise_sigma_e
  double noise_sigma_e = 0.0;  // background noise at (x, y): sqrt(sky + read_noise^2), e-
  double noise_sigma_adu = 0.0;  // the same in ADU: noise_sigma_e / gain
};

struct SkyTruth {
  std::uint64_t frame = 0;
  // Position of the star field relative to frame 0 (drift plus jitter), px: a star at (x, y)
  // in frame 0 is at (x + shift_x, y + shift_y) here.
  double shift_x = 0.0;
  double shift_y = 0.0;
  std::vector<MoverTruth> movers;  // every mover in the frame, ordered by slot
};

// A star of the field as it is in frame 0 (the field is periodic with the frame size, so a
// shifted star wraps around at the edges).
struct StarTruth {
  double x = 0.0;
  double y = 0.0;
  double flux = 0.0;  // e- per exposure
};

// One line of JSON for `truth`, without a newline:
// {"frame":5,"shift_x":0.012345,"shift_y":-0.1,"movers":[{"id":3,"first_frame":0,"x":...,
// "y":...,"vx":...,"vy":...,"flux":...,"peak_snr":...,"noise_sigma_e":...,
// "noise_sigma_adu":...}]}
std::string to_json_line(const SkyTruth& truth);

// Appends to_json_line(truth) and a newline to `out`, reusing its capacity.
void append_json_line(const SkyTruth& truth, std::string& out);

}  // namespace starsift
