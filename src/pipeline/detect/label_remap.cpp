// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/detect/label_remap.hpp"

namespace starsift {

void remap_labels(ImageView labels, std::span<const std::uint32_t> new_ids,
                  std::uint32_t removed) noexcept {
  if (labels.format != PixelFormat::Gray16) return;
  constexpr std::uint32_t kClipped = 65535;
  const std::size_t mapped = new_ids.size();
  for (int y = 0; y < labels.height; ++y) {
    std::uint16_t* row = labels.row_as<std::uint16_t>(y);
    for (int x = 0; x < labels.width; ++x) {
      const std::uint32_t id = row[x];
      if (id == kClipped) continue;
      if (id < mapped) {
        row[x] = static_cast<std::uint16_t>(new_ids[id]);
      } else {
        row[x] = static_cast<std::uint16_t>(id > removed ? id - removed : 0);
      }
    }
  }
}

}  // namespace starsift
