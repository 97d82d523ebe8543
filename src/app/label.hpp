// SPDX-License-Identifier: LGPL-2.1-or-later
// Burns short text labels into 8-bit pictures (a built-in 5x7 pixel font, no font files).
#pragma once

#include <string_view>

#include "pipeline/image.hpp"

namespace starsift::app {

// Draws `text` (letters, digits, space and ( ) - . / :; letters in upper case; anything
// else as a space) white on a black box whose top-left corner is (x, y), each font pixel
// `scale` x `scale` image pixels. Clipped to the image. `image` is GRAY8.
void draw_label(ImageView image, int x, int y, std::string_view text, int scale);

}  // namespace starsift::app
