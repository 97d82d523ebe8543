// SPDX-License-Identifier: LGPL-2.1-or-later
// One frame through a streaming engine, as an element at depth 1 runs it: submit, wait, copy
// the output out, release the slot.
#pragma once

#include <cstring>

#include "pipeline/engine/streaming_chain.hpp"

namespace starsift::test {

inline void run_frame(StreamingChain& engine, ConstImageView in, ImageView out) {
  engine.submit(in, 0);
  const FinishedFrame done = engine.wait_oldest();
  for (int y = 0; y < out.height; ++y) {
    std::memcpy(out.row(y), done.output.row(y), done.output.row_bytes());
  }
  engine.pop();
}

}  // namespace starsift::test
