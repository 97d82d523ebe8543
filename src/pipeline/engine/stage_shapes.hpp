// SPDX-License-Identifier: LGPL-2.1-or-later
// The frame shape at every point of a chain. A stage may convert (whitening can write a
// float residual), so stage i's input is stage i-1's output_shape(), not the chain's input.
#pragma once

#include <memory>
#include <vector>

#include "pipeline/pixel_format.hpp"
#include "pipeline/stage.hpp"

namespace starsift {

// Configures every stage, in order, for the frames it will receive (configure_device()
// when `device`, else configure()) and returns the shapes: [i] is stage i's input, back()
// the chain's output. Throws Error from the stage that refuses its input.
std::vector<FrameShape> configure_stage_shapes(
    const std::vector<std::unique_ptr<FilterStage>>& stages, const FrameShape& in, bool device);

// The largest tightly packed row, in bytes, among the intermediates shapes[1..size-1)
// (the frames between two stages); 0 for a single stage.
std::size_t largest_intermediate_row(const std::vector<FrameShape>& shapes);

}  // namespace starsift
