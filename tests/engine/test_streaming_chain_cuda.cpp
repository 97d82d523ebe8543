// SPDX-License-Identifier: LGPL-2.1-or-later
// The streaming engine on CUDA (pinned slots, a stream per slot): the same schedule as the
// CPU test, outputs bit-exact with the CPU reference; kept frames neither copied nor
// downloaded.
#include "support/kept_frame_check.hpp"
#include "support/streaming_check.hpp"

using namespace starsift;
using namespace starsift::test;

TEST_CASE("CUDA streaming chain keeps count and order at every depth", "[engine][cuda]") {
  const BackendChoice gpu = resolve_backend(Backend::Cuda, 0);
  const FrameShape shape{301, 157, PixelFormat::Gray16, 12};
  // Stages one by one, and recorded once into a CUDA graph per slot: the same results.
  for (GraphPolicy graphs : {GraphPolicy::Never, GraphPolicy::Always}) {
    for (int depth = 1; depth <= kMaxStreamingDepth; ++depth) {
      INFO("depth " << depth << " graphs " << (graphs == GraphPolicy::Always));
      auto engine = make_test_streaming_chain(gpu, depth);
      REQUIRE(engine->backend() == Backend::Cuda);
      engine->set_graph_policy(graphs);
      engine->configure(shape);
      REQUIRE(engine->counters().graphed == (graphs == GraphPolicy::Always));
      check_streaming(*engine, shape, 3 * depth + 5, static_cast<std::uint32_t>(depth));
    }
  }
}

TEST_CASE("CUDA streaming chain: graphs by default for small frames only", "[engine][cuda]") {
  const BackendChoice gpu = resolve_backend(Backend::Cuda, 0);
  auto engine = make_test_streaming_chain(gpu, 2);
  engine->configure({512, 512, PixelFormat::Gray8, 8});
  CHECK(engine->counters().graphed);
  engine->configure({2048, 1024, PixelFormat::Gray8, 8});
  CHECK_FALSE(engine->counters().graphed);
}

TEST_CASE("CUDA streaming chain: flush and caps change", "[engine][cuda]") {
  auto engine = make_test_streaming_chain(resolve_backend(Backend::Cuda, 0), 4);
  check_flush_and_caps_change(*engine, {64, 48, PixelFormat::Gray8, 8},
                              {129, 65, PixelFormat::Bgrx, 8});
}

TEST_CASE("CUDA streaming chain copies large frames into its slots on several threads",
          "[engine][cuda]") {
  // 2048 x 1100 GRAY16 = 4.5 MB: above the size from which copies are split by rows.
  const FrameShape shape{2048, 1100, PixelFormat::Gray16, 16};
  auto engine = make_test_streaming_chain(resolve_backend(Backend::Cuda, 0), 2);
  engine->configure(shape);
  check_streaming(*engine, shape, 5, 11);
}

TEST_CASE("CUDA streaming chain applies parameter changes in frame order, graphs too",
          "[engine][cuda][live]") {
  const BackendChoice gpu = resolve_backend(Backend::Cuda, 0);
  for (GraphPolicy graphs : {GraphPolicy::Never, GraphPolicy::Always}) {
    for (int depth : {1, 3, 8}) {
      auto engine = make_test_streaming_chain(gpu, depth);
      engine->set_graph_policy(graphs);
      check_live_changes(*engine, gpu, {131, 67, PixelFormat::Gray16, 12});
      CHECK(engine->counters().graphed == (graphs == GraphPolicy::Always));
    }
  }
}

TEST_CASE("CUDA streaming chain hands kept frames on without a copy or a download",
          "[engine][cuda][detect]") {
  check_kept_frames(resolve_backend(Backend::Cuda, 0));
}
