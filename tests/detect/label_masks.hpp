// SPDX-License-Identifier: LGPL-2.1-or-later
// Masks the labelling tests share (CPU reference and CUDA): the shapes where 4 and 8
// connectivity differ, where one component spans the frame, and random fills of every density.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "pipeline/detect/labels.hpp"

namespace starsift::test {

struct Mask {
  std::string name;
  int width = 0;
  int height = 0;
  std::ptrdiff_t stride = 0;        // bytes between rows (>= width; padding holds 0xEE)
  std::vector<std::uint8_t> bytes;  // stride * height

  Mask(std::string n, int w, int h, int pad = 0)
      : name(std::move(n)),
        width(w),
        height(h),
        stride(w + pad),
        bytes(static_cast<std::size_t>(w + pad) * h, 0) {
    for (int y = 0; y < h; ++y)
      for (int x = w; x < w + pad; ++x) bytes[y * stride + x] = 0xEE;
  }
  std::uint8_t& at(int x, int y) { return bytes[y * stride + x]; }
  bool on(int x, int y) const {
    return x >= 0 && y >= 0 && x < width && y < height && bytes[y * stride + x] != 0;
  }
};

// Foreground with probability `density`; foreground bytes are 1..255, not only 1.
inline Mask random_mask(int w, int h, double density, std::uint32_t seed, int pad = 0) {
  Mask m("random " + std::to_string(density), w, h, pad);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int> value(1, 255);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      if (u(rng) < density) m.at(x, y) = static_cast<std::uint8_t>(value(rng));
  return m;
}

inline Mask checkerboard(int w, int h) {
  Mask m("checkerboard", w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) m.at(x, y) = (x + y) % 2 == 0;
  return m;
}

// A square spiral of 1-pixel arms with 1-pixel gaps: one long component whose every part is
// joined through the far end, so unions must travel its whole length.
inline Mask spiral(int n) {
  Mask m("spiral", n, n);
  int x0 = 0, y0 = 0, x1 = n - 1, y1 = n - 1;
  int x = 0, y = 0;
  while (x0 <= x1 && y0 <= y1) {
    for (x = x0; x <= x1; ++x) m.at(x, y0) = 1;
    for (y = y0; y <= y1; ++y) m.at(x1, y) = 1;
    if (y1 - 2 < y0) break;
    for (x = x1; x >= x0; --x) m.at(x, y1) = 1;
    if (x0 + 2 > x1) break;
    for (y = y1; y >= y0 + 2; --y) m.at(x0, y) = 1;
    m.at(x0 + 1, y0 + 2) = 1;
    x0 += 2;
    y0 += 2;
    x1 -= 2;
    y1 -= 2;
  }
  return m;
}

// Diagonal lines: one component each with 8 connectivity, a pixel each with 4.
inline Mask diagonals(int w, int h) {
  Mask m("diagonals", w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) m.at(x, y) = (x + y) % 5 == 0 || (x - y + 1000) % 7 == 0;
  return m;
}

// Labels by flood fill from each unlabelled pixel in raster order: the first pixel met
// starts the next id, which is the numbering the contract asks for.
inline std::vector<std::uint32_t> flood_fill_labels(const Mask& m, Connectivity c,
                                                    std::uint32_t& count) {
  std::vector<std::uint32_t> out(static_cast<std::size_t>(m.width) * m.height, 0);
  std::vector<std::pair<int, int>> stack;
  count = 0;
  for (int y = 0; y < m.height; ++y)
    for (int x = 0; x < m.width; ++x) {
      if (!m.on(x, y) || out[y * m.width + x]) continue;
      out[y * m.width + x] = ++count;
      stack.assign(1, {x, y});
      while (!stack.empty()) {
        const auto [cx, cy] = stack.back();
        stack.pop_back();
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            if ((dx == 0 && dy == 0) || (c == Connectivity::Four && dx != 0 && dy != 0)) continue;
            const int nx = cx + dx, ny = cy + dy;
            if (m.on(nx, ny) && !out[ny * m.width + nx]) {
              out[ny * m.width + nx] = count;
              stack.push_back({nx, ny});
            }
          }
      }
    }
  return out;
}

// Every mask the tests run, at small and odd sizes.
inline std::vector<Mask> small_masks() {
  std::vector<Mask> v;
  std::uint32_t seed = 11;
  const int shapes[][2] = {{1, 1},   {1, 37},  {37, 1},  {2, 2},    {31, 33},
                           {33, 31}, {64, 64}, {65, 97}, {133, 70}, {385, 289}};
  for (const auto& s : shapes)
    for (double d : {0.01, 0.1, 0.3, 0.5, 0.6, 0.9})
      v.push_back(random_mask(s[0], s[1], d, ++seed, s[0] % 3 == 0 ? 5 : 0));
  for (int n : {1, 7, 32, 33, 100}) v.push_back(spiral(n));
  v.push_back(checkerboard(37, 29));
  v.push_back(checkerboard(64, 64));
  v.push_back(diagonals(101, 77));
  Mask single("single pixel", 50, 40);
  single.at(17, 23) = 1;
  v.push_back(single);
  Mask corner("last pixel", 50, 40);
  corner.at(49, 39) = 1;
  v.push_back(corner);
  Mask full("full frame", 97, 65, 3);
  for (int y = 0; y < full.height; ++y)
    for (int x = 0; x < full.width; ++x) full.at(x, y) = 1;
  v.push_back(full);
  v.push_back(Mask("empty", 45, 45));
  Mask row("1xN full", 300, 1);
  for (int x = 0; x < 300; ++x) row.at(x, 0) = x % 17 != 5;
  v.push_back(row);
  Mask col("Nx1 full", 1, 300);
  for (int y = 0; y < 300; ++y) col.at(0, y) = y % 13 != 4;
  v.push_back(col);
  return v;
}

}  // namespace starsift::test
