// SPDX-License-Identifier: LGPL-2.1-or-later
// The CUDA engine at depth 1 (one upload, stages on device memory, one download) is bit-exact
// with its stages run one by one on the CPU.
#include <catch2/catch.hpp>

#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/median/median_stage.hpp"
#include "pipeline/median/reference.hpp"
#include "support/run_frame.hpp"
#include "support/test_image.hpp"

using namespace starsift;
using namespace starsift::test;

TEST_CASE("CUDA engine at depth 1 equals the CPU stages one by one", "[chain][cuda]") {
  const BackendChoice gpu = resolve_backend(Backend::Cuda, 0);
  ThreadPool pool;
  const std::vector<std::vector<int>> chains = {{3}, {3, 5}, {5, 3, 7}, {3, 3, 3, 3, 3}, {15, 9}};
  for (const auto& sizes : chains) {
    std::vector<MedianParams> params;
    std::vector<std::unique_ptr<FilterStage>> stages;
    for (int size : sizes) {
      MedianParams p;
      p.size = size;
      p.border = size == 5 ? BorderMode::Constant : BorderMode::Reflect101;
      p.border_value = 9;
      params.push_back(p);
      stages.push_back(make_median_stage(p, gpu));
    }
    auto chain = make_streaming_chain(std::move(stages), gpu, 1);
    chain->set_stage_timing_interval(1);
    REQUIRE(chain->backend() == Backend::Cuda);
    for (const FrameShape shape :
         {FrameShape{301, 203, PixelFormat::Gray16, 12}, FrameShape{130, 77, PixelFormat::Bgra, 8},
          FrameShape{64, 64, PixelFormat::Gray8, 8}}) {
      chain->configure(shape);  // caps change: re-allocates
      TestImage in(shape.width, shape.height, shape.format, 20);
      fill(in, Fill::Impulse, static_cast<std::uint32_t>(sizes.size()));
      TestImage out(shape.width, shape.height, shape.format, 4);
      run_frame(*chain, in.cview(), out.view());
      TestImage expected = in;
      for (const auto& p : params) {
        TestImage next(shape.width, shape.height, shape.format);
        median_reference(p, expected.cview(), next.view(), pool);
        expected = next;
      }
      INFO(sizes.size() << " stages, " << to_string(shape.format) << ", first diff "
                        << out.first_difference(expected));
      REQUIRE(out.same_pixels(expected));
      for (double ms : chain->counters().stage_ms_last) REQUIRE(ms > 0.0);
    }
  }
}
