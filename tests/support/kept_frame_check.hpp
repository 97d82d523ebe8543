// SPDX-License-Identifier: LGPL-2.1-or-later
// Chains with a stage that keeps its frame (detection with output: input), on either backend:
// the next stage reads, and the chain hands back, the frame that stage read; a chain of such
// stages alone hands back the submitted frame itself and writes none. Shared by the CPU and
// GPU tests so both engines face the same chains.
#pragma once

#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <vector>

#include "pipeline/detect/detect_stage.hpp"
#include "pipeline/engine/streaming_chain.hpp"
#include "support/streaming_check.hpp"

namespace starsift::test {

// A median of the test chain's ("a": 3 x 3, "b": 5 x 5) or a detection that keeps its frame.
inline std::unique_ptr<FilterStage> kept_test_stage(char which, const BackendChoice& choice) {
  if (which == 'd') {
    DetectParams p;  // output: input
    p.background = DetectBackground::Global;
    return make_detect_stage(p, choice);
  }
  return make_median_stage(streaming_test_chain()[which == 'a' ? 0 : 1], choice);
}

inline TestImage median_of(const TestImage& in, int which) {
  static ThreadPool pool(2);
  TestImage out(in.width, in.height, in.format);
  median_reference(streaming_test_chain()[which], in.cview(), out.view(), pool);
  return out;
}

inline void check_kept_frames(const BackendChoice& choice) {
  const FrameShape shape{61, 43, PixelFormat::Gray16, 16};
  TestImage in(shape.width, shape.height, shape.format, 8);
  fill(in, Fill::Impulse, 5);
  const TestImage a = median_of(in, 0);
  struct Case {
    const char* stages;
    const TestImage* expected;
  };
  const TestImage ab = median_of(a, 1);
  const Case cases[] = {{"d", &in}, {"da", &a}, {"ad", &a}, {"adb", &ab}, {"dd", &in}};
  for (const Case& c : cases) {
    for (int depth : {1, 3}) {
      INFO("stages " << c.stages << " depth " << depth);
      std::vector<std::unique_ptr<FilterStage>> stages;
      for (const char* s = c.stages; *s; ++s) stages.push_back(kept_test_stage(*s, choice));
      std::size_t detections = 0;
      for (const char* s = c.stages; *s; ++s) detections += *s == 'd';
      auto engine = make_streaming_chain(std::move(stages), choice, depth);
      engine->configure(shape);
      const bool all_kept = c.expected == &in;
      CHECK(engine->keeps_frame() == all_kept);
      // The caller's held frame, a copied one and the slot's own memory, each twice.
      std::vector<const std::byte*> submitted(6);
      int taken = 0;
      const auto take = [&] {
        const FinishedFrame done = engine->wait_oldest();
        CHECK(done.tag == static_cast<std::uint64_t>(taken));
        CHECK(done.results.size() == detections);
        TestImage out(shape.width, shape.height, shape.format);
        for (int y = 0; y < shape.height; ++y) {
          std::memcpy(out.view().row(y), done.output.row(y), done.output.row_bytes());
        }
        CHECK(out.same_pixels(*c.expected));
        // Kept throughout: the frame handed back is the one read, in place where it was held.
        if (all_kept && taken % 3 != 1) CHECK(done.output.data == submitted[taken]);
        engine->pop();
        ++taken;
      };
      for (int i = 0; i < 6; ++i) {
        if (engine->in_flight() == depth) take();
        const int path = i % 3;
        ConstImageView frame = in.cview();
        if (path == 2) {
          const ImageView slot = engine->next_input();
          for (int y = 0; y < shape.height; ++y) {
            std::memcpy(slot.row(y), frame.row(y), frame.row_bytes());
          }
          frame = const_view(slot);
        }
        submitted[i] = frame.data;
        engine->submit(frame, static_cast<std::uint64_t>(i),
                       path == 0 ? InputMemory::HeldPinned : InputMemory::Any);
      }
      while (engine->in_flight() > 0) take();
      CHECK(taken == 6);
    }
  }
  // A running stage that keeps its frame is replaced only by one that keeps it too.
  std::vector<std::unique_ptr<FilterStage>> stages;
  stages.push_back(kept_test_stage('a', choice));
  stages.push_back(kept_test_stage('d', choice));
  auto engine = make_streaming_chain(std::move(stages), choice, 2);
  engine->configure(shape);
  DetectParams labels;
  labels.background = DetectBackground::Global;
  labels.output = DetectOutput::Labels;  // GRAY16 from GRAY16: the same shape
  REQUIRE_THROWS_WITH(engine->replace_stage(1, make_detect_stage(labels, choice)),
                      Catch::Contains("writes a frame where 'detect' does not"));
}

}  // namespace starsift::test
