// SPDX-License-Identifier: LGPL-2.1-or-later
// The physical limit of a streaming chain: pinned host<->device copy bandwidth, measured in
// the same run as the chain it bounds.
#pragma once

#include <cstddef>
#include <vector>

namespace starsift::bench {

// GB/s of pinned host<->device copies of `bytes`, one direction or both at once.
struct TransferBound {
  double h2d, d2h, both;
  // Frames/s when each frame of `frame_bytes` goes in and comes out (both directions at once).
  double frames_per_s(std::size_t frame_bytes) const { return both * 1e9 / (2.0 * frame_bytes); }
};

TransferBound measure_transfers(std::size_t bytes);

// The p-quantile (0..1) of `v`, nearest rank below.
double percentile(std::vector<double> v, double p);

}  // namespace starsift::bench
