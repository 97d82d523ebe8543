// SPDX-License-Identifier: LGPL-2.1-or-later
// The median by the most direct route: pad the image explicitly, then fully sort every
// window. Independent of border_index() and of nth_element, so it can check the reference.
#pragma once

#include <algorithm>
#include <vector>

#include "pipeline/median/params.hpp"
#include "support/test_image.hpp"

namespace starsift::test {

// Source coordinate of padded coordinate i on an axis of length n, by walking: a reflection
// at each edge until inside (reflect-101 does not repeat the edge pixel).
inline int brute_source(int i, int n, BorderMode mode) {
  if (mode == BorderMode::Replicate) return std::clamp(i, 0, n - 1);
  if (mode == BorderMode::Constant) return (i < 0 || i >= n) ? -1 : i;
  if (n == 1) return 0;
  while (i < 0 || i >= n) {
    if (i < 0) i = -i;
    if (i >= n) i = 2 * (n - 1) - i;
  }
  return i;
}

inline TestImage brute_median(const TestImage& in, const MedianParams& p) {
  TestImage out(in.width, in.height, in.format);
  const int r = p.radius();
  const FormatInfo& info = format_info(in.format);
  const std::uint32_t border = median_border_sample(p, in.format);
  const int pw = in.width + 2 * r, ph = in.height + 2 * r;
  for (int c = 0; c < info.channels; ++c) {
    std::vector<std::uint32_t> padded(static_cast<std::size_t>(pw) * ph);
    for (int y = 0; y < ph; ++y)
      for (int x = 0; x < pw; ++x) {
        const int sx = brute_source(x - r, in.width, p.border);
        const int sy = brute_source(y - r, in.height, p.border);
        padded[y * pw + x] = (sx < 0 || sy < 0) ? border : in.key(sx, sy, c);
      }
    for (int y = 0; y < in.height; ++y)
      for (int x = 0; x < in.width; ++x) {
        if (c >= info.color_channels) {  // alpha/padding: copied
          out.set_key(x, y, c, in.key(x, y, c));
          continue;
        }
        std::vector<std::uint32_t> w;
        for (int dy = 0; dy < p.size; ++dy)
          for (int dx = 0; dx < p.size; ++dx) w.push_back(padded[(y + dy) * pw + x + dx]);
        std::sort(w.begin(), w.end());
        out.set_key(x, y, c, w[w.size() / 2]);
      }
  }
  return out;
}

}  // namespace starsift::test
