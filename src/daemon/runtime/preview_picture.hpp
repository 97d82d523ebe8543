// SPDX-License-Identifier: LGPL-2.1-or-later
// The preview a person opens to see that a pipeline works: three panels side by side, each
// labelled: RAW (the camera's frame), WHITENED (what the chain hands to detection) and
// DETECTIONS (the same with a box around each object and a ring around each mover), in 8 bits
// with an asinh stretch fitted to each panel.
#pragma once

#include <filesystem>
#include <span>

#include "app/host_image.hpp"
#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/tracker.hpp"
#include "pipeline/image.hpp"

namespace starsift::daemon {

// `raw` and `whitened` are GRAY8 or GRAY16 and may differ in size (each panel keeps its own);
// `raw` may be empty (width 0): its panel is then grey. Objects and movers are drawn in the
// whitened frame's pixels.
app::HostImage make_preview(ConstImageView raw, ConstImageView whitened,
                            std::span<const DetectedObject> objects, std::span<const Track> movers);

// Writes `picture` as PNG to `path`, through a temporary file renamed over it, so a viewer
// never reads half a picture. Throws Error naming the file.
void write_preview_png(const std::filesystem::path& path, const app::HostImage& picture);

}  // namespace starsift::daemon
