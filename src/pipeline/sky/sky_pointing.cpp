// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/sky/sky_pointing.hpp"

#include "pipeline/sky/sky_random.hpp"

namespace starsift::sky {

Pointing::Pointing(const SkyParams& params)
    : seed_(params.seed),
      jitter_(params.jitter),
      keep_(1.0 - params.jitter_reversion),
      drift_x_(params.drift_x),
      drift_y_(params.drift_y) {}

Shift Pointing::shift(std::uint64_t frame) {
  if (frame < walked_to_) {
    walked_to_ = 0;
    walk_ = {};
  }
  if (jitter_ > 0.0) {
    while (walked_to_ < frame) {
      ++walked_to_;
      SkyRng rng = SkyRng::stream(seed_, Stream::Jitter, walked_to_);
      const double step_x = rng.normal();
      const double step_y = rng.normal();
      walk_.x = keep_ * walk_.x + jitter_ * step_x;
      walk_.y = keep_ * walk_.y + jitter_ * step_y;
    }
  } else {
    walked_to_ = frame;
  }
  const double k = static_cast<double>(frame);
  return {drift_x_ * k + walk_.x, drift_y_ * k + walk_.y};
}

}  // namespace starsift::sky
