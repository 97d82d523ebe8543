// SPDX-License-Identifier: LGPL-2.1-or-later
// The CPU engine at depth 1 (how every element runs a frame at depth 1) equals running its
// stages one by one, for any length, through its own scratch.
#include <catch2/catch.hpp>

#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/error.hpp"
#include "pipeline/median/median_stage.hpp"
#include "pipeline/median/reference.hpp"
#include "support/run_frame.hpp"
#include "support/test_image.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

MedianParams median(int size, BorderMode border = BorderMode::Reflect101) {
  MedianParams p;
  p.size = size;
  p.border = border;
  return p;
}

std::vector<std::unique_ptr<FilterStage>> build(const std::vector<MedianParams>& params,
                                                const BackendChoice& choice) {
  std::vector<std::unique_ptr<FilterStage>> stages;
  for (const auto& p : params) stages.push_back(make_median_stage(p, choice));
  return stages;
}

// Each stage's reference in turn, through fresh buffers.
TestImage one_by_one(const TestImage& in, const std::vector<MedianParams>& params) {
  ThreadPool pool(2);
  TestImage cur = in;
  for (const auto& p : params) {
    TestImage next(in.width, in.height, in.format);
    median_reference(p, cur.cview(), next.view(), pool);
    cur = next;
  }
  return cur;
}

}  // namespace

TEST_CASE("CPU engine at depth 1 equals its stages run one by one", "[chain][cpu]") {
  const BackendChoice cpu{Backend::Cpu, 0, "test"};
  const std::vector<std::vector<MedianParams>> chains = {
      {median(3)},
      {median(3), median(5)},
      {median(5), median(3, BorderMode::Replicate), median(7, BorderMode::Constant)},
      {median(3), median(3), median(3), median(3)},
  };
  for (const auto& params : chains) {
    for (PixelFormat format : {PixelFormat::Gray8, PixelFormat::Gray16, PixelFormat::Rgba}) {
      auto chain = make_streaming_chain(build(params, cpu), cpu, 1);
      REQUIRE(chain->backend() == Backend::Cpu);
      REQUIRE(chain->size() == params.size());
      chain->configure({41, 23, format, default_bit_depth(format)});
      TestImage in(41, 23, format, 8);
      fill(in, Fill::Impulse, static_cast<std::uint32_t>(params.size()));
      for (int frame = 0; frame < 3; ++frame) {
        TestImage out(41, 23, format, 4);
        run_frame(*chain, in.cview(), out.view());
        const TestImage expected = one_by_one(in, params);
        INFO(params.size() << " stages, " << to_string(format) << ", frame " << frame
                           << ", first diff " << out.first_difference(expected));
        REQUIRE(out.same_pixels(expected));
      }
      REQUIRE(chain->counters().completed == 3);
      REQUIRE(chain->counters().stage_ms_total.size() == params.size());
    }
  }
}

TEST_CASE("chains refuse to be empty or to mix backends", "[chain][cpu]") {
  const BackendChoice cpu{Backend::Cpu, 0, "test"};
  REQUIRE_THROWS_WITH(make_streaming_chain({}, cpu, 1), Catch::Contains("at least one stage"));
}

TEST_CASE("a CPU stage has no device-resident form", "[chain][cpu]") {
  auto stage = make_median_stage(MedianParams{}, BackendChoice{Backend::Cpu, 0, "test"});
  REQUIRE_THROWS_WITH(stage->configure_device({8, 8, PixelFormat::Gray8, 8}),
                      Catch::Contains("no device-resident form"));
}
