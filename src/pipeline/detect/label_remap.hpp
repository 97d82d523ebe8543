// SPDX-License-Identifier: LGPL-2.1-or-later
// Renumbering of a label frame (detection's `output: labels`, GRAY16) after the catalogue was
// renumbered on the host: siftdetect's streak merge joins records and numbers the catalogue
// 1, 2, ... again, and the frame's pixels must follow it. docs/detect.md, "Streak merge".
#pragma once

#include <cstdint>
#include <span>

#include "pipeline/image.hpp"

namespace starsift {

// Each pixel's id k of the GRAY16 frame `labels` becomes new_ids[k] for k < new_ids.size()
// (merge_streaks()'s map: 0 stays the background). Ids beyond it belong to objects past the
// catalogue's capacity (counted as overflow), which the merge never saw: they move down by
// `removed`, the records the merge removed, so the ids stay dense after the catalogue's.
// 65535 stands for every id from 65535 on (the frame clips them) and stays. A frame of
// another format is left alone. Allocates nothing.
void remap_labels(ImageView labels, std::span<const std::uint32_t> new_ids,
                  std::uint32_t removed) noexcept;

}  // namespace starsift
