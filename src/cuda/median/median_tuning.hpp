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
  int tile_w;  // outputs per thread along x: sorted columns are shared between them
  int tile_h;  // outputs per thread along y: the rows common to them are sorted once
  bool operator==(const NetworkTuning&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const NetworkTuning& t) {
  return os << "{block " << t.block_x << "x" << t.block_y << ", tile " << t.tile_w << "x"
            << t.tile_h << "}";
}

// Sizes the register networks are built for; larger windows use the tracking schedule.
constexpr int kNetworkMaxSize = 9;

constexpr NetworkTuning network_tuning(int size) {
  switch (size) {
    case 3:
      return {16, 8, 4, 2};
    case 5:
      return {16, 8, 2, 2};
    case 7:
      return {16, 8, 2, 1};
    default:
      return {16, 8, 1, 1};
  }
}

// Tracking schedule: each thread slides along `segment` outputs of one row, a warp spans
// 32 consecutive rows (conflict-free shared-memory reads with an odd row pitch).
struct TrackingTuning {
  int rows;      // threads along y (one row each)
  int segments;  // threads along x
  int segment;   // outputs per thread
};

constexpr TrackingTuning tracking_tuning(int /*size*/) { return {32, 4, 32}; }

// Which schedule Auto uses: the networks up to this size, tracking above.
constexpr int kAutoNetworkMaxSize = 7;

}  // namespace starsift::cuda
