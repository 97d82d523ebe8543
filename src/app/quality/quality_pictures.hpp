// SPDX-License-Identifier: LGPL-2.1-or-later
// The pictures of `starsift quality`: one frame's input and each method's residual side by
// side, the movers' truth positions circled, full frame and zoomed on one mover.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "app/quality/cell_run.hpp"
#include "app/quality/config.hpp"

namespace starsift::app {

// Writes DIR/frame-SCENE.png and DIR/zoom-SCENE.png for each picture (scene order) and
// returns the file names. The input panel has an asinh stretch; every residual panel maps
// -5..+5 frame sigma linearly to black..white, mid-grey at 0.
std::vector<std::string> write_quality_pictures(const std::vector<quality::PictureFrame>& pictures,
                                                const std::vector<quality::SceneSpec>& scenes,
                                                const std::filesystem::path& dir);

}  // namespace starsift::app
