// SPDX-License-Identifier: LGPL-2.1-or-later
// The synthetic sky allocates nothing per frame: every allocation of the process is counted
// here (this file replaces the global operator new of starsift_tests), and rendering frames
// after the first must not add to the count.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "pipeline/sky/sky_generator.hpp"
#include "sky/sky_test_support.hpp"

namespace {
std::atomic<long> allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// The nothrow form too, so that every new pairs with the deletes here: a sanitizer's runtime
// would otherwise supply it and see its memory given to free().
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

// The count so far, for other tests that check a path allocates nothing per frame
// (tests/brightness/test_brightness_cpu.cpp).
long starsift_test_allocations() {
  return allocations.load();
}

using namespace starsift;
using namespace starsift::test;

TEST_CASE("sky: rendering a frame allocates nothing once the first is done", "[sky]") {
  {
    // The counter counts.
    const long start = allocations.load();
    std::vector<int> probe(16);
    REQUIRE(probe.data() != nullptr);
    REQUIRE(allocations.load() > start);
  }
  SkyParams p;
  p.width = 200;
  p.height = 150;
  p.movers = 12;
  p.mover_speed_min = 5.0;  // replacements while rendering
  p.mover_speed_max = 40.0;
  p.jitter = 0.3;
  p.drift_x = 0.5;
  SkyGenerator sky(p, 3);
  TestImage frame(p.width, p.height, PixelFormat::Gray16);
  TestImage electrons(p.width, p.height, PixelFormat::Gray32F);
  SkyTruth truth;
  std::string line;
  sky.render(0, frame.view(), truth);
  line.reserve(4096);
  append_json_line(truth, line);

  const long before = allocations.load();
  for (std::uint64_t k = 1; k < 30; ++k) {
    sky.render(k, frame.view(), truth);
    sky.render_expected(k, electrons.view(), truth, kSkyStars | kSkyMovers);
    line.clear();
    append_json_line(truth, line);
  }
  sky.render(3, frame.view(), truth);  // back in time: walks again from frame 0
  const long after = allocations.load();
  CHECK(after - before == 0);
}
