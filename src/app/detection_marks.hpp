// SPDX-License-Identifier: LGPL-2.1-or-later
// Detections drawn on an 8-bit picture for a person to see: a box around each object and a
// ring around each mover. Shared by starsiftd's preview PNG and its live views.
#pragma once

#include <span>

#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/tracker.hpp"
#include "pipeline/image.hpp"

namespace starsift::app {

// Draws into `image` (GRAY8), in its pixels, clipped to it: each object's bounding box grown
// by 2 px, and a ring of 9 px radius around each mover's position.
void draw_detection_marks(ImageView image, std::span<const DetectedObject> objects,
                          std::span<const Track> movers);

}  // namespace starsift::app
