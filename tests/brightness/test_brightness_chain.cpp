// SPDX-License-Identifier: LGPL-2.1-or-later
// The brightness correction in a chain: `brightness:` read with its keys and refusals, checked
// against the frames, built as the CPU stage (CUDA refused by name), run on a frame as
// BrightnessCpu runs it, and changed live.
#include <catch2/catch.hpp>

#include <string>

#include "brightness_frames.hpp"
#include "pipeline/brightness/brightness_cpu.hpp"
#include "pipeline/brightness/brightness_stage.hpp"
#include "pipeline/chain/chain_config.hpp"
#include "pipeline/chain/chain_stages.hpp"
#include "pipeline/error.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

void check_refused(const char* yaml, const std::string& expected) {
  try {
    parse_chain_yaml(yaml, "t");
    FAIL("accepted: " << yaml);
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find(expected) != std::string::npos);
  }
}

const BackendChoice kCpu{Backend::Cpu, 0, ""};

}  // namespace

TEST_CASE("a chain's brightness stage: its keys and defaults", "[brightness][chain]") {
  const ChainConfig chain = parse_chain_yaml(
      "- brightness: {sigma: 25, strength: 1.5, alpha: 0.8, stretch: percentile,\n"
      "               low-percentile: 1, high-percentile: 99.9}\n"
      "- brightness: {mode: clahe, tiles-x: 4, tiles-y: 6, clip-limit: 3, stretch: fixed,\n"
      "               stretch-min: 10, stretch-max: 200}\n"
      "- brightness:\n",
      "t");
  REQUIRE(chain.stages.size() == 3);
  CHECK(chain.stages[0].filter == "brightness");
  const auto& local = std::get<BrightnessParams>(chain.stages[0].params);
  CHECK(local.mode == BrightnessMode::Local);
  CHECK(local.sigma == 25.0);
  CHECK(local.strength == 1.5);
  CHECK(local.alpha == 0.8);
  CHECK(local.stretch == BrightnessStretch::Percentile);
  CHECK(local.low_percentile == 1.0);
  CHECK(local.high_percentile == 99.9);
  const auto& clahe = std::get<BrightnessParams>(chain.stages[1].params);
  CHECK(clahe.mode == BrightnessMode::Clahe);
  CHECK(clahe.tiles_x == 4);
  CHECK(clahe.tiles_y == 6);
  CHECK(clahe.clip_limit == 3.0);
  CHECK(clahe.stretch == BrightnessStretch::Fixed);
  CHECK(clahe.stretch_min == 10.0);
  CHECK(clahe.stretch_max == 200.0);
  CHECK(std::get<BrightnessParams>(chain.stages[2].params) == BrightnessParams{});
  // Both percentiles moved past the defaults' order: judged as a pair.
  const auto high = std::get<BrightnessParams>(
      parse_chain_yaml("- brightness: {low-percentile: 99.7, high-percentile: 100}\n", "t")
          .stages[0]
          .params);
  CHECK(high.low_percentile == 99.7);
}

TEST_CASE("a chain's brightness stage: refusals name the key and the range",
          "[brightness][chain]") {
  check_refused("- brightness: {sigma: 0}\n",
                "stage 1 (brightness): sigma: 0 is not allowed; allowed: finite numbers above 0 "
                "up to 1000 px");
  check_refused("- brightness: {strength: 5}\n", "strength: 5 is not allowed");
  check_refused("- brightness: {tiles-x: 0}\n", "tiles-x: 0 is not allowed; allowed: 1..64");
  check_refused("- brightness: {clip-limit: 0.5}\n",
                "clip-limit: 0.5 is not allowed; allowed: 0 (no limit) or a finite number from 1");
  check_refused("- brightness: {alpha: -1}\n", "alpha: -1 is not allowed");
  check_refused("- brightness: {mode: gamma}\n",
                "mode: unknown brightness mode 'gamma'; allowed: local, clahe");
  check_refused("- brightness: {stretch: auto}\n", "allowed: none, fixed, percentile");
  check_refused("- brightness: {high-percentile: 101}\n",
                "high-percentile: 101 is not allowed; allowed: finite numbers from 0 up to 100 %");
  check_refused("- brightness: {low-percentile: 60, high-percentile: 40}\n",
                "stage 1 (brightness): brightness low-percentile 60 is not allowed; allowed: "
                "below high-percentile (40)");
  check_refused("- brightness: {stretch: fixed, stretch-max: 0}\n",
                "below stretch-max (0) when stretch is fixed");
  check_refused("- brightness: {sigma: 2, size: 5}\n",
                "unknown key 'size'; allowed: mode, sigma, strength, tiles-x, tiles-y, clip-limit, "
                "alpha, stretch, stretch-min, stretch-max, low-percentile, high-percentile");
}

TEST_CASE("a chain's brightness stage is checked against the frames it gets",
          "[brightness][chain]") {
  const ChainConfig fixed =
      parse_chain_yaml("- brightness: {stretch: fixed, stretch-min: 0, stretch-max: 4095}\n", "t");
  CHECK_NOTHROW(chain_shapes(fixed, {64, 64, PixelFormat::Gray16, 12}));
  try {
    chain_shapes(fixed, {64, 64, PixelFormat::Gray16, 10});
    FAIL("a stretch-max beyond 10 bits accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("stage 1 (brightness): brightness stretch-max 4095") !=
          std::string::npos);
    CHECK(e.allowed() == "0..1023 for GRAY16_LE at bit depth 10");
  }
  const ChainConfig clahe = parse_chain_yaml("- brightness: {mode: clahe}\n", "t");
  CHECK_THROWS_WITH(chain_shapes(clahe, {64, 64, PixelFormat::Gray32F, 32}),
                    Catch::Contains("mode clahe does not take GRAY32F"));
  CHECK(chain_shapes(clahe, {64, 64, PixelFormat::Rgba, 8}).back().format == PixelFormat::Rgba);
  CHECK(chain_output_format(clahe, PixelFormat::Bgrx) == PixelFormat::Bgrx);
}

TEST_CASE("a chain's brightness stage runs as BrightnessCpu does, and changes live",
          "[brightness][chain]") {
  const ChainConfig chain = parse_chain_yaml("- brightness: {sigma: 10}\n", "t");
  const auto stages = build_chain_stages(chain, kCpu);
  REQUIRE(stages.size() == 1);
  CHECK(stages[0]->name() == "brightness");
  CHECK(stages[0]->backend() == Backend::Cpu);
  TestImage in(60, 40, PixelFormat::Gray8);
  fill_random(in, 120, 3);
  const FrameShape shape = shape_of(in);
  stages[0]->configure(shape);
  TestImage a(60, 40, PixelFormat::Gray8), b(60, 40, PixelFormat::Gray8);
  stages[0]->process(in.cview(), a.view());
  ThreadPool pool(2);
  BrightnessCpu().run(std::get<BrightnessParams>(chain.stages[0].params), shape, in.cview(),
                      b.view(), pool);
  CHECK(a.same_pixels(b));
  CHECK_FALSE(a.same_pixels(in));

  const ChainConfig stronger = parse_chain_yaml("- brightness: {sigma: 10, strength: 3}\n", "t");
  const auto plan = plan_chain_update(chain, stronger);
  REQUIRE(plan);
  CHECK((*plan)[0] == StageChange::Live);
  CHECK((*plan_chain_update(chain, chain))[0] == StageChange::Same);
  apply_stage_params(*stages[0], stronger.stages[0].params);
  stages[0]->process(in.cview(), b.view());
  CHECK_FALSE(b.same_pixels(a));
  // Refused live: a fixed stretch beyond the configured frames keeps the running parameters.
  BrightnessParams beyond;
  beyond.stretch = BrightnessStretch::Fixed;
  beyond.stretch_max = 300.0;
  CHECK_THROWS_AS(apply_stage_params(*stages[0], beyond), Error);
  CHECK(dynamic_cast<BrightnessStage&>(*stages[0]).params().strength == 3.0);
}

#if !STARSIFT_HAVE_CUDA
TEST_CASE("a chain's brightness stage refuses the CUDA backend in a build without it",
          "[brightness][chain]") {
  CHECK_THROWS_WITH(make_brightness_stage(BrightnessParams{}, BackendChoice{Backend::Cuda, 0, ""}),
                    Catch::Contains("brightness: the CUDA backend"));
}
#endif
