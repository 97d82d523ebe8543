// SPDX-License-Identifier: LGPL-2.1-or-later
// CLAHE, the definition (clahe.hpp, clahe_layout.hpp): written for reading, not speed.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "pipeline/border.hpp"
#include "pipeline/brightness/clahe.hpp"
#include "pipeline/brightness/clahe_layout.hpp"

namespace starsift {

namespace {

// Sample (x, y) of the frame padded at the right and bottom by reflect-101, its value held
// to the top bin.
template <class T>
int padded_sample(const ClaheLayout& l, ConstImageView in, int x, int y) {
  const int sx = border_index(x, l.width, BorderMode::Reflect101);
  const int sy = border_index(y, l.height, BorderMode::Reflect101);
  return std::min<int>(in.row_as<T>(sy)[sx], l.top());
}

// Tile (tx, ty)'s map: histogram, clip and redistribution, cumulative sum scaled.
template <class T>
void tile_map(const ClaheLayout& l, ConstImageView in, int tx, int ty, std::uint16_t* map) {
  std::vector<int> hist(static_cast<std::size_t>(l.bins), 0);
  for (int y = ty * l.tile_h; y < (ty + 1) * l.tile_h; ++y)
    for (int x = tx * l.tile_w; x < (tx + 1) * l.tile_w; ++x)
      ++hist[static_cast<std::size_t>(padded_sample<T>(l, in, x, y))];

  if (l.clip > 0) {
    int clipped = 0;
    for (int& count : hist)
      if (count > l.clip) {
        clipped += count - l.clip;
        count = l.clip;
      }
    // Spread evenly; what does not divide goes one count each to every step-th bin from 0.
    const int batch = clipped / l.bins;
    int residual = clipped - batch * l.bins;
    for (int& count : hist) count += batch;
    if (residual != 0) {
      const int step = std::max(l.bins / residual, 1);
      for (int i = 0; i < l.bins && residual > 0; i += step, --residual)
        ++hist[static_cast<std::size_t>(i)];
    }
  }

  int sum = 0;
  for (int i = 0; i < l.bins; ++i) {
    sum += hist[static_cast<std::size_t>(i)];
    map[i] = static_cast<std::uint16_t>(clahe_map_value(sum, l.lut_scale, l.top()));
  }
}

template <class T>
void clahe(const ClaheLayout& l, ConstImageView in, ImageView out, ThreadPool& pool) {
  const auto bins = static_cast<std::size_t>(l.bins);
  std::vector<std::uint16_t> maps(static_cast<std::size_t>(l.tiles()) * bins);
  pool.parallel_for(l.tiles(), [&](int begin, int end) {
    for (int t = begin; t < end; ++t)
      tile_map<T>(l, in, t % l.tiles_x, t / l.tiles_x, maps.data() + t * bins);
  });
  const auto map = [&](int tx, int ty, int v) {
    return maps[static_cast<std::size_t>(ty * l.tiles_x + tx) * bins + static_cast<std::size_t>(v)];
  };
  pool.parallel_for(l.height, [&](int begin, int end) {
    for (int y = begin; y < end; ++y) {
      const ClaheAxis ay = clahe_axis(y, l.inv_tile_h, l.tiles_y);
      for (int x = 0; x < l.width; ++x) {
        const ClaheAxis ax = clahe_axis(x, l.inv_tile_w, l.tiles_x);
        const int v = std::min<int>(in.row_as<T>(y)[x], l.top());
        out.row_as<T>(y)[x] = static_cast<T>(clahe_blend(map(ax.t1, ay.t1, v), map(ax.t2, ay.t1, v),
                                                         map(ax.t1, ay.t2, v), map(ax.t2, ay.t2, v),
                                                         ax.w1, ax.w2, ay.w1, ay.w2, l.top()));
      }
    }
  });
}

}  // namespace

void clahe_reference(const BrightnessParams& params, int bit_depth, ConstImageView in,
                     ImageView out, ThreadPool& pool) {
  const ClaheLayout l = clahe_layout(params, bit_depth, in, out);
  if (in.format == PixelFormat::Gray8)
    clahe<std::uint8_t>(l, in, out, pool);
  else
    clahe<std::uint16_t>(l, in, out, pool);
}

}  // namespace starsift
