// The streaming engine on CUDA (pinned slots, a stream per slot): the same schedule as the
// CPU test, outputs bit-exact with the CPU reference.
#include "support/streaming_check.hpp"

using namespace starsift;
using namespace starsift::test;

TEST_CASE("CUDA streaming chain keeps count and order at every depth", "[engine][cuda]") {
  const BackendChoice gpu = resolve_backend(Backend::Cuda, 0);
  const FrameShape shape{301, 157, PixelFormat::Gray16, 12};
  for (int depth = 1; depth <= kMaxStreamingDepth; ++depth) {
    auto engine = make_test_streaming_chain(gpu, depth);
    REQUIRE(engine->backend() == Backend::Cuda);
    engine->configure(shape);
    check_streaming(*engine, shape, 3 * depth + 5, static_cast<std::uint32_t>(depth));
  }
}

TEST_CASE("CUDA streaming chain: flush and caps change", "[engine][cuda]") {
  auto engine = make_test_streaming_chain(resolve_backend(Backend::Cuda, 0), 4);
  check_flush_and_caps_change(*engine, {64, 48, PixelFormat::Gray8, 8},
                              {129, 65, PixelFormat::Bgrx, 8});
}
