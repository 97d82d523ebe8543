// SPDX-License-Identifier: LGPL-2.1-or-later
// Connected components of a detection mask: the labelling both backends agree on bit for bit.
//
// mask: one byte per pixel, row-major with `mask_stride` bytes between rows; non-zero is
// foreground. labels: one uint32 per pixel, row-major with `label_stride` elements between
// rows; 0 for background, otherwise the component's dense id: components are numbered
// 1, 2, 3, ... in raster order of their first pixel (the smallest y * width + x among their
// pixels), so the numbering does not depend on how the components were found. Pixels are
// joined to their 4 (edge) or 8 (edge and corner) neighbours.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace starsift {

enum class Connectivity { Four = 4, Eight = 8 };

// The CPU reference: union-find with path compression over the mask, then dense ids in raster
// order. Returns the number of components. `parent` is scratch of width * height entries
// (resized here when smaller: allocate once, reuse per frame). width * height must stay below
// 2^32 (pixels are indexed by 32-bit raster indices); an empty frame has no components.
std::uint32_t label_reference(const std::uint8_t* mask, std::ptrdiff_t mask_stride, int width,
                              int height, Connectivity connectivity, std::uint32_t* labels,
                              std::ptrdiff_t label_stride, std::vector<std::uint32_t>& parent);

}  // namespace starsift
