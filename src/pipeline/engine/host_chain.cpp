// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/engine/host_chain.hpp"

#include <algorithm>
#include <chrono>

namespace starsift {

void HostChainFrames::allocate(const std::vector<FrameShape>& shapes) {
  shapes_ = shapes;
  std::size_t bytes = 0;
  for (std::size_t i = 1; i + 1 < shapes.size(); ++i) {
    bytes = std::max(bytes, HostFrame::packed_bytes(shapes[i]));
  }
  // Two intermediates are enough: stage i reads one and writes the other.
  const int needed = static_cast<int>(std::min<std::size_t>(shapes.size() - 2, 2));
  for (int i = 0; i < 2; ++i) scratch_[i].bytes.assign(i < needed ? bytes : 0, std::byte{0});
}

void HostChainFrames::run(const std::vector<std::unique_ptr<FilterStage>>& stages,
                          ConstImageView in, ImageView out, std::byte* results,
                          std::span<const ResultPlacement> placements, double* stage_ms) {
  ConstImageView src = in;
  int spare = 0;  // the scratch frame the next stage that writes one writes (src is not it)
  auto placement = placements.begin();
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const bool last = i + 1 == stages.size();
    ImageView dst;
    if (stages[i]->keeps_frame() && (!last || src.data == in.data)) {
      dst = kept_frame_out(src);  // it writes nothing: the frame it read goes on
    } else if (last) {
      dst = out;  // a last stage that keeps its frame copies it there
    } else {
      dst = scratch_[spare].as(shapes_[i + 1]);
      spare ^= 1;
    }
    const auto t0 = std::chrono::steady_clock::now();
    stages[i]->process(src, dst);
    if (placement != placements.end() && placement->stage == i) {
      stages[i]->write_result({results + placement->offset, placement->layout.bytes()});
      ++placement;
    }
    if (stage_ms) {
      stage_ms[i] =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    src = const_view(dst);
  }
}

}  // namespace starsift
