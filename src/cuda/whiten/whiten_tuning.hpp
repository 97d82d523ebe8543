// SPDX-License-Identifier: LGPL-2.1-or-later
// Tuning of the whitening kernels, kept apart from the algorithm (whiten_*.cu). The grid
// sizes that carry partial sums are fixed numbers, not derived from the device: the order in
// which doubles are added then depends only on the frame, so results are the same run to run
// and on every GPU.
#pragma once

#include <ostream>

namespace starsift::cuda {

struct WhitenTuning {
  int block = 256;            // threads per block of every per-pixel kernel
  int pixel_blocks = 1056;    // blocks of the per-pixel passes (grid-stride; 8 per SM on
                              // a 132-SM H100): each leaves one row of partial dots
  int excluded_blocks = 512;  // blocks of the excluded-pixel pass, one contiguous range each
                              // (whole steps of 32768 pixels: one at 4096^2); a multiple of 32
  int register_lags = 24;     // lags kept in registers per pixel; more spill to local memory
  bool operator==(const WhitenTuning&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const WhitenTuning& t) {
  return os << "{block " << t.block << ", pixel blocks " << t.pixel_blocks << ", excluded blocks "
            << t.excluded_blocks << ", register lags " << t.register_lags << "}";
}

// Not yet measured on a GPU (bench/whiten_bench.cpp measures it): a first choice for
// memory-bound grid-stride passes on Hopper.
inline constexpr WhitenTuning kWhitenTuning{};

// Compile-time copies for kernels and shared-memory sizes.
inline constexpr int kWhitenBlock = kWhitenTuning.block;
inline constexpr int kWhitenPixelBlocks = kWhitenTuning.pixel_blocks;
inline constexpr int kWhitenExcludedBlocks = kWhitenTuning.excluded_blocks;
inline constexpr int kWhitenRegisterLags = kWhitenTuning.register_lags;

}  // namespace starsift::cuda
