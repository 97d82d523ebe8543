// SPDX-License-Identifier: LGPL-2.1-or-later
// Tuning of the median schedules, kept apart from the algorithms (median_kernels.cu).
// Each entry names the benchmark that chose it (bench/results/).
#pragma once

#include <ostream>

namespace starsift::cuda {

// Register-network schedule: a block of block_x * block_y threads; each thread computes
// tile_w adjacent columns x tile_h adjacent rows of outputs, per lane (packed integer
// schedules hold two row groups per register, so a block covers twice the rows).
struct NetworkTuning {
  int block_x;
  int block_y;
  int tile_w;          // outputs per thread along x: sorted columns are shared between them
  int tile_h;          // outputs per thread along y: the rows common to them are sorted once
  int min_blocks = 0;  // __launch_bounds__ blocks per SM (caps registers); 0: compiler's choice
  // Sort each column window of the block once into shared memory for all threads (needs
  // tile_w = tile_h = 1); otherwise each thread sorts the columns it reads.
  bool shared_columns = false;
  bool operator==(const NetworkTuning&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const NetworkTuning& t) {
  return os << "{block " << t.block_x << "x" << t.block_y << ", tile " << t.tile_w << "x"
            << t.tile_h << ", min blocks " << t.min_blocks
            << (t.shared_columns ? ", shared columns" : "") << "}";
}

// Sizes the register networks are built for; larger windows use the tracking schedule.
constexpr int kNetworkMaxSize = 15;

// STARSIFT_NETWORK_TUNING selects an alternative table at build time, so a benchmark can
// compare schedules without the library carrying every one (bench/CMakeLists.txt builds
// starsift-bench-tuning1 and -tuning2 from it with STARSIFT_BENCH_TUNING_VARIANTS=ON).
#ifndef STARSIFT_NETWORK_TUNING
#define STARSIFT_NETWORK_TUNING 0
#endif

// H200, 4096x4096, frames rotated beyond L2 (bench/results/median-tuning/README.md): wider
// tiles won from 5x5 to 9x9, sorting each column window once per block in shared memory
// won from 5x5 up (+4..24 %), two output rows per thread won at 9x9. At 3x3, 8 outputs per
// thread lost 13 % (variant 1) and 256-thread blocks were within 2 % (variant 2).
constexpr NetworkTuning network_tuning(int size) {
  switch (size) {
    case 3:
#if STARSIFT_NETWORK_TUNING == 1
      return {16, 8, 8, 2};
#elif STARSIFT_NETWORK_TUNING == 2
      return {16, 16, 4, 2};
#else
      return {16, 8, 4, 2};
#endif
    case 5:
      return {16, 8, 4, 2, 0, true};
    case 7:
      return {16, 8, 4, 2, 0, true};
    case 9:
      return {16, 8, 2, 2, 0, true};
    default:
      return {16, 8, 1, 1, 0, true};
  }
}

// Tracking schedule: each thread slides along `segment` outputs of one row, a warp spans
// 32 consecutive rows (conflict-free shared-memory reads with an odd row pitch).
struct TrackingTuning {
  int rows;      // threads along y (one row each)
  int segments;  // threads along x
  int segment;   // outputs per thread
};

constexpr TrackingTuning tracking_tuning(int /*size*/) {
  return {32, 4, 32};
}

// Which schedule Auto uses: the networks up to this size, tracking above.
// bench/results/median-*.json: at 9x9 the packed network ran 20 Gpix/s, tracking 4.
constexpr int kAutoNetworkMaxSize = 15;

}  // namespace starsift::cuda
