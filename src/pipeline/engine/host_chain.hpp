// SPDX-License-Identifier: LGPL-2.1-or-later
// The host side of a chain, for the CPU engine: stage i reads one scratch frame and writes
// the other, the first reads the input, the last writes the output, and each stage that
// declares a result writes it right after its frame. A stage that keeps its frame writes
// none: the next reads what it read (when every stage keeps its frame, `out` is `in`).
// Allocated once per shape.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "pipeline/host_frame.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"
#include "pipeline/stage.hpp"

namespace starsift {

class HostChainFrames {
 public:
  // Scratch for the intermediates between the stages whose shapes are `shapes` (as
  // configure_stage_shapes() returned them).
  void allocate(const std::vector<FrameShape>& shapes);
  // Runs `stages` on `in` (shapes.front()) into `out` (shapes.back()); the results go to
  // `results` (host memory) as `placements` say. `stage_ms`, when given, receives each
  // stage's wall time.
  void run(const std::vector<std::unique_ptr<FilterStage>>& stages, ConstImageView in,
           ImageView out, std::byte* results, std::span<const ResultPlacement> placements,
           double* stage_ms = nullptr);

 private:
  std::vector<FrameShape> shapes_;
  HostFrame scratch_[2];
};

}  // namespace starsift
