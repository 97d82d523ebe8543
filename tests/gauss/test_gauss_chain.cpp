// SPDX-License-Identifier: LGPL-2.1-or-later
// The Gaussian blur in a chain: `gauss:` read with its keys and refusals, built as the CPU
// stage, run on a frame as the stage runs it, and changed live.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "pipeline/chain/chain_config.hpp"
#include "pipeline/chain/chain_stages.hpp"
#include "pipeline/error.hpp"
#include "pipeline/gauss/gauss_cpu.hpp"
#include "pipeline/thread_pool.hpp"

using namespace starsift;

TEST_CASE("a chain's gauss stage: its keys, defaults and refusals", "[gauss][chain]") {
  const ChainConfig chain =
      parse_chain_yaml("- gauss: {sigma: 2.5, radius-y: 3, border: replicate}\n- gauss:\n", "t");
  REQUIRE(chain.stages.size() == 2);
  const auto& p = std::get<GaussParams>(chain.stages[0].params);
  CHECK(p.sigma_x == 2.5);
  CHECK(p.sigma_y == 2.5);
  CHECK(p.radius_x == 0);
  CHECK(p.radius_y == 3);
  CHECK(p.border == BorderMode::Replicate);
  CHECK(std::get<GaussParams>(chain.stages[1].params) == GaussParams{});
  const auto axes = std::get<GaussParams>(
      parse_chain_yaml("- gauss: {sigma: 2, sigma-y: 0}\n", "t").stages[0].params);
  CHECK(axes.sigma_x == 2.0);
  CHECK(axes.sigma_y == 0.0);

  const auto refused = [](const char* yaml, const char* allowed) {
    try {
      parse_chain_yaml(yaml, "t");
      FAIL("accepted: " << yaml);
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(allowed) != std::string::npos);
    }
  };
  refused("- gauss: {sigma: -1}\n", "0..1000 px");
  refused("- gauss: {sigma-x: 2000}\n", "0..1000 px");
  refused("- gauss: {radius: 9000}\n", "1..4000");
  refused("- gauss: {sigma: 2, size: 5}\n", "sigma, sigma-x, sigma-y");
}

TEST_CASE("a chain's gauss stage blurs as the CPU stage does, and changes live", "[gauss][chain]") {
  const ChainConfig chain = parse_chain_yaml("- gauss: {sigma: 1.5}\n", "t");
  const auto stages = build_chain_stages(chain, BackendChoice{Backend::Cpu, 0, ""});
  REQUIRE(stages.size() == 1);
  CHECK(stages[0]->name() == "gauss");
  std::vector<std::uint8_t> frame(40 * 30), a(40 * 30), b(40 * 30);
  std::mt19937 rng(8);
  for (auto& v : frame) v = static_cast<std::uint8_t>(rng());
  const ConstImageView in{reinterpret_cast<const std::byte*>(frame.data()), 40, 30, 40,
                          PixelFormat::Gray8};
  stages[0]->configure(FrameShape{40, 30, PixelFormat::Gray8, 8});
  stages[0]->process(
      in, ImageView{reinterpret_cast<std::byte*>(a.data()), 40, 30, 40, PixelFormat::Gray8});
  ThreadPool pool(2);
  GaussCpu().run(std::get<GaussParams>(chain.stages[0].params), in,
                 ImageView{reinterpret_cast<std::byte*>(b.data()), 40, 30, 40, PixelFormat::Gray8},
                 pool);
  CHECK(a == b);
  CHECK(a != frame);

  const ChainConfig wider = parse_chain_yaml("- gauss: {sigma: 4}\n", "t");
  const auto plan = plan_chain_update(chain, wider);
  REQUIRE(plan);
  CHECK((*plan)[0] == StageChange::Live);
  apply_stage_params(*stages[0], wider.stages[0].params);
  stages[0]->process(
      in, ImageView{reinterpret_cast<std::byte*>(b.data()), 40, 30, 40, PixelFormat::Gray8});
  CHECK(b != a);
}
