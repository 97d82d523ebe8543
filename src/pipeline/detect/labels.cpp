// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/detect/labels.hpp"

#include <cstddef>

namespace starsift {

namespace {

// Root of `i`, halving the path on the way (every node then points two steps closer).
std::uint32_t find_root(std::vector<std::uint32_t>& parent, std::uint32_t i) {
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

// Joins the sets of `a` and `b`, the larger root under the smaller: every node keeps
// parent <= index, so a set's root is its smallest raster index, its first pixel.
void unite(std::vector<std::uint32_t>& parent, std::uint32_t a, std::uint32_t b) {
  a = find_root(parent, a);
  b = find_root(parent, b);
  if (a < b) {
    parent[b] = a;
  } else if (b < a) {
    parent[a] = b;
  }
}

}  // namespace

std::uint32_t label_reference(const std::uint8_t* mask, std::ptrdiff_t mask_stride, int width,
                              int height, Connectivity connectivity, std::uint32_t* labels,
                              std::ptrdiff_t label_stride, std::vector<std::uint32_t>& parent) {
  if (width <= 0 || height <= 0) return 0;
  const std::size_t w = static_cast<std::size_t>(width);
  const std::size_t pixels = w * static_cast<std::size_t>(height);
  if (parent.size() < pixels) parent.resize(pixels);
  const bool eight = connectivity == Connectivity::Eight;
  auto fg = [&](int x, int y) {
    return x >= 0 && x < width && y >= 0 && mask[y * mask_stride + x] != 0;
  };

  // Union with the neighbours already visited (left, and the row above).
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      if (!fg(x, y)) continue;
      const std::uint32_t i = static_cast<std::uint32_t>(y * w + x);
      parent[i] = i;
      if (fg(x - 1, y)) unite(parent, i, i - 1);
      if (fg(x, y - 1)) unite(parent, i, i - width);
      if (eight) {
        if (fg(x - 1, y - 1)) unite(parent, i, i - width - 1);
        if (fg(x + 1, y - 1)) unite(parent, i, i - width + 1);
      }
    }
  }

  // Raster order meets each root before the rest of its set, so one pass numbers the roots
  // densely and copies the number to the others. parent[j] for j < i is already j's root.
  std::uint32_t count = 0;
  for (int y = 0; y < height; ++y) {
    std::uint32_t* row = labels + y * label_stride;
    for (int x = 0; x < width; ++x) {
      if (!fg(x, y)) {
        row[x] = 0;
        continue;
      }
      const std::uint32_t i = static_cast<std::uint32_t>(y * w + x);
      const std::uint32_t root = parent[parent[i]];
      parent[i] = root;
      row[x] = root == i ? ++count : labels[(root / w) * label_stride + root % w];
    }
  }
  return count;
}

}  // namespace starsift
