// SPDX-License-Identifier: LGPL-2.1-or-later
// Contrast-limited adaptive histogram equalisation of one integer plane (GRAY8, or GRAY16_LE
// holding `bit_depth` real bits), as BrightnessParams describes (mode clahe): the mapped
// value of every pixel, before the alpha blend and the stretch.
#pragma once

#include <cstdint>
#include <vector>

#include "pipeline/brightness/params.hpp"
#include "pipeline/image.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift {

// The definition (clahe_layout.hpp; docs/clahe.md): per tile, histogram, clip and
// redistribution, map; per pixel, the bilinear blend of the four nearest maps. `in` and `out`
// GRAY8 (bit_depth 8) or GRAY16_LE (bit_depth 1..16) of one size, distinct memory, any
// strides. Throws Error otherwise, or for a grid or clip limit out of range.
void clahe_reference(const BrightnessParams& params, int bit_depth, ConstImageView in,
                     ImageView out, ThreadPool& pool);

// The same pixels as clahe_reference(), fast: tiles' maps in parallel, then rows in parallel,
// each row in spans between tile centres that read four maps. Keeps its histograms, maps and
// per-column tables from frame to frame: after the first frame of a size, no allocation.
class ClaheCpu {
 public:
  void run(const BrightnessParams& params, int bit_depth, ConstImageView in, ImageView out,
           ThreadPool& pool);

  // One stretch of a row between two tile centres on x: the same two tiles' maps for each
  // of its pixels (x_begin, t1, t2 of clahe_axis()).
  struct Span {
    int x_begin;
    int x_end;
    int t1;
    int t2;
  };

 private:
  std::vector<std::uint32_t> histograms_;     // one working histogram per thread
  std::vector<std::uint16_t> maps_;           // tiles x bins, tile-major
  std::vector<float> column_w1_, column_w2_;  // clahe_axis() weights of every column
  std::vector<Span> spans_;
  std::vector<int> pad_columns_;  // the source column of each padding column (reflect-101)
};

}  // namespace starsift
