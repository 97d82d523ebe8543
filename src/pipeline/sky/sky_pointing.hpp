// SPDX-License-Identifier: LGPL-2.1-or-later
// Where the field points in each frame: a constant drift plus a mean-reverting random walk
// (jitter), as a mount's tracking error and guiding corrections move a real field.
#pragma once

#include <cstdint>

#include "pipeline/sky/sky_params.hpp"

namespace starsift::sky {

struct Shift {
  double x = 0.0;
  double y = 0.0;
};

class Pointing {
 public:
  explicit Pointing(const SkyParams& params);

  // The field's shift in `frame` relative to frame 0: drift * frame + the walk
  // j[k] = (1 - reversion) j[k-1] + jitter * N(0, 1) per axis, j[0] = 0, whose steps come from
  // the stream (seed, Jitter, k). The walk's last state is kept, so frames in order cost one
  // step each; an earlier frame walks again from frame 0 (to the same values).
  Shift shift(std::uint64_t frame);

 private:
  std::uint64_t seed_;
  double jitter_;
  double keep_;  // 1 - reversion
  double drift_x_;
  double drift_y_;
  std::uint64_t walked_to_ = 0;  // the frame `walk_` belongs to
  Shift walk_;
};

}  // namespace starsift::sky
