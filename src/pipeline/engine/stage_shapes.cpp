// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/engine/stage_shapes.hpp"

#include <algorithm>
#include <string>

#include "pipeline/error.hpp"

namespace starsift {

std::vector<FrameShape> configure_stage_shapes(
    const std::vector<std::unique_ptr<FilterStage>>& stages, const FrameShape& in, bool device) {
  in.validate();
  std::vector<FrameShape> shapes{in};
  shapes.reserve(stages.size() + 1);
  for (const auto& stage : stages) {
    if (device) {
      stage->configure_device(shapes.back());
    } else {
      stage->configure(shapes.back());
    }
    FrameShape out = stage->output_shape(shapes.back());
    if (out.width != in.width || out.height != in.height) {
      throw Error("stage '" + std::string(stage->name()) + "' changes the frame size",
                  "stages that keep the size (they may change the format)");
    }
    shapes.push_back(out);
  }
  return shapes;
}

std::size_t largest_intermediate_row(const std::vector<FrameShape>& shapes) {
  std::size_t row = 0;
  for (std::size_t i = 1; i + 1 < shapes.size(); ++i) {
    row = std::max(row,
                   static_cast<std::size_t>(shapes[i].width) * bytes_per_pixel(shapes[i].format));
  }
  return row;
}

}  // namespace starsift
