// The streaming engine on the CPU: frame count and order exact for every depth, under
// random delays, on both input paths; flush and caps change.
#include "support/streaming_check.hpp"

using namespace starsift;
using namespace starsift::test;

TEST_CASE("CPU streaming chain keeps count and order at every depth", "[engine][cpu]") {
  const BackendChoice cpu{Backend::Cpu, 0, "test"};
  const FrameShape shape{37, 21, PixelFormat::Gray16, 16};
  for (int depth = 1; depth <= kMaxStreamingDepth; ++depth) {
    auto engine = make_test_streaming_chain(cpu, depth);
    engine->configure(shape);
    check_streaming(*engine, shape, 3 * depth + 5, static_cast<std::uint32_t>(depth));
  }
}

TEST_CASE("CPU streaming chain: flush, caps change, bad depth", "[engine][cpu]") {
  const BackendChoice cpu{Backend::Cpu, 0, "test"};
  auto engine = make_test_streaming_chain(cpu, 3);
  check_flush_and_caps_change(*engine, {33, 17, PixelFormat::Gray8, 8},
                              {20, 31, PixelFormat::Rgba, 8});
  REQUIRE_THROWS_WITH(make_test_streaming_chain(cpu, 0), Catch::Contains("1..8"));
  REQUIRE_THROWS_WITH(make_test_streaming_chain(cpu, 9), Catch::Contains("1..8"));
}
