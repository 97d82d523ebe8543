// SPDX-License-Identifier: LGPL-2.1-or-later
// The demo's picture: a frame before and after filtering, side by side, in 8 bits.
#pragma once

#include <string_view>

#include "app/host_image.hpp"
#include "pipeline/image.hpp"

namespace starsift::app {

// GRAY16 `before` and `after` (same size) -> GRAY8 [before | gap | after], both halves with
// the asinh stretch fitted to `after` (so equal pixel values look equal), each half
// labelled in its top-left corner.
HostImage make_before_after(ConstImageView before, ConstImageView after,
                            std::string_view before_label, std::string_view after_label);

}  // namespace starsift::app
