// SPDX-License-Identifier: LGPL-2.1-or-later
// Whitening as a stage and as a chain entry: YAML keys and their refusals, the CPU stage
// through a chain against the reference, restarts, and the backend choice.
#include <catch2/catch.hpp>

#include <string>

#include "pipeline/chain/chain_config.hpp"
#include "pipeline/chain/chain_stages.hpp"
#include "pipeline/error.hpp"
#include "pipeline/whiten/whiten_stage.hpp"
#include "support/run_frame.hpp"
#include "whiten/whiten_sequence.hpp"

using namespace starsift;
using namespace starsift::test;
using Catch::Contains;
using Catch::StartsWith;

namespace {

const BackendChoice kCpu{Backend::Cpu, 0, "test"};

const WhitenParams& whiten_of(const StageConfig& stage) {
  REQUIRE(stage.filter == "whiten");
  REQUIRE(std::holds_alternative<WhitenParams>(stage.params));
  return std::get<WhitenParams>(stage.params);
}

WhitenParams parse_one(const std::string& yaml) {
  const ChainConfig config = parse_chain_yaml(yaml, "chain.yaml");
  REQUIRE(config.stages.size() == 1);
  return whiten_of(config.stages[0]);
}

// Expects the one-line `yaml` refused with a message placed at the first occurrence of `at`,
// then the key path, `says`, and `allowed` after "; allowed: ".
void require_refused(const std::string& yaml, const std::string& at, const std::string& path,
                     const std::string& says, const std::string& allowed) {
  INFO("YAML: " << yaml);
  const std::string where = "1:" + std::to_string(yaml.find(at) + 1);
  try {
    parse_chain_yaml(yaml, "chain.yaml");
    FAIL("accepted");
  } catch (const Error& e) {
    INFO("message: " << e.what());
    CHECK_THAT(e.problem(), StartsWith("chain.yaml:" + where + ": " + path + ": "));
    CHECK_THAT(e.problem(), Contains(says));
    CHECK_THAT(e.what(), Contains("; allowed: " + allowed));
  }
}

SkySequence small_sky() {
  SkySequence sky;
  sky.scene = make_star_scene(64, 48, 20, 5, 30.0, 2000.0);
  sky.noise = 8.0;
  sky.jitter = 1.0;
  sky.format = PixelFormat::Gray16;
  sky.bit_depth = 14;
  sky.movers = {{4, 5.0, 10.0, 3.0, 2.0, 300.0}};
  return sky;
}

}  // namespace

TEST_CASE("whiten in a chain: every key, and defaults for the rest", "[whiten][chain]") {
  CHECK(parse_one("- whiten:") == WhitenParams{});
  CHECK(parse_one("[{whiten: {}}]") == WhitenParams{});
  const WhitenParams p = parse_one(R"(chain:
  - whiten:
      history: 12
      gamma: 1e-3
      fit: past
      refit-interval: 4
      fit-subsample: 2
      shift: resample
      shift-window: 256
      shift-max: 5.5
      reject: none
      reject-sigma: 3
      reject-object-sigma: 2.5
      noise-frames: 30
      warmup: zeros
      output: snr
      offset: 100
      gain: -2.5
      despike: false
      history-format: half
)");
  WhitenParams expected;
  expected.history = 12;
  expected.gamma = 1e-3;
  expected.fit = WhitenFit::Past;
  expected.refit_interval = 4;
  expected.fit_subsample = 2;
  expected.shift = WhitenShift::Resample;
  expected.shift_window = 256;
  expected.shift_max = 5.5;
  expected.reject = WhitenReject::None;
  expected.reject_sigma = 3.0;
  expected.reject_object_sigma = 2.5;
  expected.noise_frames = 30.0;
  expected.warmup = WhitenWarmup::Zeros;
  expected.output = WhitenOutput::Snr;
  expected.offset = 100.0;
  expected.gain = -2.5;
  expected.despike = false;
  expected.history_format = WhitenHistoryFormat::Half;
  CHECK(p == expected);
  CHECK(parse_one("- whiten: {reject: objects}").reject == WhitenReject::Objects);
  CHECK(chain_filter_names() == "median, whiten, detect, gauss, brightness");
}

TEST_CASE("every bad whiten key or value is refused at its place", "[whiten][chain]") {
  require_refused(
      "- whiten: {histroy: 5}", "histroy", "stage 1 (whiten)", "unknown key 'histroy'",
      "history, gamma, fit, refit-interval, fit-subsample, shift, shift-window, "
      "shift-max, shift-noise, reject, reject-sigma, reject-object-sigma, noise-frames, warmup, "
      "output, offset, gain, despike, history-format");
  require_refused("- whiten: {history-format: double}", "double",
                  "stage 1 (whiten): history-format", "unknown whiten history-format 'double'",
                  "float, half");
  require_refused("- whiten: {history: 0}", "0", "stage 1 (whiten): history", "0 is not allowed",
                  "1..64");
  require_refused("- whiten: {history: 65}", "65", "stage 1 (whiten): history", "65 is not allowed",
                  "1..64");
  require_refused("- whiten: {history: twenty}", "twenty", "stage 1 (whiten): history",
                  "expected an integer, got 'twenty'", "1..64");
  require_refused("- whiten: {history: '5'}", "'5'", "stage 1 (whiten): history",
                  "(a quoted string: write the number without quotes)", "1..64");
  require_refused("- whiten: {gamma: -0.1}", "-0.1", "stage 1 (whiten): gamma",
                  "-0.1 is not allowed", "a finite number >= 0");
  require_refused("- whiten: {gamma: .inf}", ".inf", "stage 1 (whiten): gamma",
                  ".inf is not allowed", "a finite number >= 0");
  require_refused("- whiten: {fit: future}", "future", "stage 1 (whiten): fit",
                  "unknown whiten fit 'future'", "current, past");
  require_refused("- whiten: {refit-interval: 0}", "0", "stage 1 (whiten): refit-interval",
                  "0 is not allowed", "1..65536");
  require_refused("- whiten: {fit-subsample: 1.5}", "1.5", "stage 1 (whiten): fit-subsample",
                  "expected an integer, got '1.5'", "0..64");
  require_refused("- whiten: {shift: align}", "align", "stage 1 (whiten): shift",
                  "unknown whiten shift 'align'", "none, resample");
  require_refused("- whiten: {shift-window: 500}", "500", "stage 1 (whiten): shift-window",
                  "500 is not allowed", "powers of two 16..4096");
  require_refused("- whiten: {shift-max: 0}", "0", "stage 1 (whiten): shift-max",
                  "0 is not allowed", "a finite number > 0 (pixels)");
  require_refused("- whiten: {reject: clip}", "clip", "stage 1 (whiten): reject",
                  "unknown whiten reject 'clip'", "none, mask, objects");
  require_refused("- whiten: {reject-sigma: -4}", "-4", "stage 1 (whiten): reject-sigma",
                  "-4 is not allowed", "a finite number > 0");
  require_refused("- whiten: {reject-object-sigma: 0}", "0",
                  "stage 1 (whiten): reject-object-sigma", "0 is not allowed",
                  "a finite number > 0");
  require_refused("- whiten: {reject-object-sigma: three}", "three",
                  "stage 1 (whiten): reject-object-sigma", "expected a number, got 'three'",
                  "a finite number > 0");
  require_refused("- whiten: {noise-frames: 0.5}", "0.5", "stage 1 (whiten): noise-frames",
                  "0.5 is not allowed",
                  "0 (four times the history) or a finite number >= 1 (frames)");
  require_refused("- whiten: {warmup: wait}", "wait", "stage 1 (whiten): warmup",
                  "unknown whiten warmup 'wait'", "passthrough, zeros, partial");
  require_refused("- whiten: {output: [snr]}", "[snr]", "stage 1 (whiten): output",
                  "expected a name, got a sequence", "residual, significance, float, snr, sigma");
  require_refused("- whiten: {output: png}", "png", "stage 1 (whiten): output",
                  "unknown whiten output 'png'", "residual, significance, float, snr, sigma");
  require_refused("- whiten: {offset: .nan}", ".nan", "stage 1 (whiten): offset",
                  ".nan is not allowed", "a finite number");
  require_refused("- whiten: {gain: .inf}", ".inf", "stage 1 (whiten): gain", ".inf is not allowed",
                  "a finite number (0: automatic");
  require_refused("- whiten: {gain: 1, gain: 2}", "gain: 2", "stage 1 (whiten): gain",
                  "given twice", "each key once");
  require_refused("- whiten: {despike: yes}", "yes", "stage 1 (whiten): despike",
                  "expected a boolean, got 'yes'", "true or false");
  require_refused("- whiten: {despike: 'true'}", "'true'", "stage 1 (whiten): despike",
                  "expected a boolean, got 'true'", "true or false");
  require_refused("- whiten: {despike: 1}", "1", "stage 1 (whiten): despike",
                  "expected a boolean, got '1'", "true or false");
  CHECK_FALSE(parse_one("- whiten: {despike: FALSE}").despike);
  CHECK(parse_one("- whiten: {despike: True}").despike);
}

TEST_CASE("the CPU whiten stage through a YAML chain equals the reference", "[whiten][chain]") {
  const SkySequence sky = small_sky();
  const std::string yaml =
      "[{whiten: {history: 5, fit: past, shift: resample, gamma: 1e-3, output: residual, "
      "gain: 2, offset: 1000}}]";
  const ChainConfig config = parse_chain_yaml(yaml, "chain property");
  const WhitenParams params = whiten_of(config.stages[0]);
  auto chain = make_streaming_chain(build_chain_stages(config, kCpu), kCpu, 1);
  chain->configure(sky.shape());
  const WhitenRun expected =
      run_whiten(params, sky.shape(), 14, [&](int t) { return sky.frame(t); });
  for (int t = 0; t < 14; ++t) {
    const TestImage in = sky.frame(t);
    TestImage out(in.width, in.height, in.format, /*pad_bytes=*/6);
    run_frame(*chain, in.cview(), out.view());
    INFO("frame " << t);
    REQUIRE(to_plane(out).pixels == expected.out[t].pixels);
  }

  // A float output: the stage converts, and says so.
  WhitenParams floats = params;
  floats.output = WhitenOutput::Float;
  auto stages = build_chain_stages(
      parse_chain_yaml("[{whiten: {history: 5, fit: past, shift: resample, gamma: 1e-3, "
                       "output: float}}]",
                       "p"),
      kCpu);
  FilterStage& stage = *stages[0];
  CHECK(stage.name() == "whiten");
  stage.configure(sky.shape());
  const FrameShape out_shape = stage.output_shape(sky.shape());
  CHECK(out_shape == FrameShape{64, 48, PixelFormat::Gray32F, 32});
  const WhitenRun float_expected =
      run_whiten(floats, sky.shape(), 8, [&](int t) { return sky.frame(t); });
  for (int t = 0; t < 8; ++t) {
    TestImage out(64, 48, PixelFormat::Gray32F);
    stage.process(sky.frame(t).cview(), out.view());
    REQUIRE(to_plane(out).pixels == float_expected.out[t].pixels);
  }
  const auto& whiten = dynamic_cast<const WhitenStage&>(stage);
  CHECK(whiten.last_stats().frame == 7);
  CHECK(whiten.last_stats().history_used == 5);
}

TEST_CASE("the whiten stage restarts on reset, new shapes and new history parameters",
          "[whiten][stage]") {
  const SkySequence sky = small_sky();
  WhitenParams p = classic_params();
  p.history = 3;
  auto stage = make_whiten_stage(p, kCpu);
  CHECK(stage->backend() == Backend::Cpu);
  CHECK(stage->supports(PixelFormat::Gray8));
  CHECK(stage->supports(PixelFormat::Gray16));
  CHECK(stage->supports(PixelFormat::Gray32F));
  CHECK_FALSE(stage->supports(PixelFormat::Rgba));
  CHECK(stage->last_stats().frame == 0);
  TestImage out(64, 48, PixelFormat::Gray16);
  REQUIRE_THROWS_WITH(stage->process(sky.frame(0).cview(), out.view()),
                      Contains("process() before configure()"));

  stage->configure(sky.shape());
  auto run = [&](int from, int to) {
    for (int t = from; t < to; ++t) stage->process(sky.frame(t).cview(), out.view());
  };
  run(0, 5);
  CHECK(stage->last_stats().frame == 4);
  CHECK(stage->last_stats().history_used == 3);

  // Live parameters keep the history.
  WhitenParams live = p;
  live.gain = 3.0;
  live.reject_sigma = 5.0;
  stage->set_params(live);
  run(5, 6);
  CHECK(stage->last_stats().frame == 5);

  // A bad value is refused and changes nothing.
  WhitenParams bad = live;
  bad.history = 0;
  REQUIRE_THROWS_WITH(stage->set_params(bad), Contains("whiten history 0"));
  WhitenParams unfit = live;
  unfit.offset = 70000.0;  // does not fit 14-bit frames
  REQUIRE_THROWS_WITH(stage->set_params(unfit), Contains("0..16383"));
  CHECK(stage->params() == live);
  run(6, 7);
  CHECK(stage->last_stats().frame == 6);

  // A new history length restarts.
  WhitenParams longer = live;
  longer.history = 4;
  stage->set_params(longer);
  run(7, 8);
  CHECK(stage->last_stats().frame == 0);
  CHECK(stage->last_stats().history_used == 0);
  run(8, 13);
  CHECK(stage->last_stats().history_used == 4);

  // A flush.
  stage->reset_state();
  run(13, 14);
  CHECK(stage->last_stats().frame == 0);

  // New caps: another size and format.
  stage->configure({32, 32, PixelFormat::Gray8, 8});
  TestImage small(32, 32, PixelFormat::Gray8);
  fill(small, Fill::Random, 3);
  TestImage small_out(32, 32, PixelFormat::Gray8);
  stage->process(small.cview(), small_out.view());
  CHECK(stage->last_stats().frame == 0);
  REQUIRE_THROWS_AS(stage->configure({32, 32, PixelFormat::Rgbx, 8}), Error);
}

TEST_CASE("the whiten stage needs a resolved backend, and CUDA in the build", "[whiten][stage]") {
  REQUIRE_THROWS_WITH(make_whiten_stage(WhitenParams{}, BackendChoice{Backend::Auto, 0, "test"}),
                      Contains("backend must be resolved"));
#if !STARSIFT_HAVE_CUDA
  REQUIRE_THROWS_WITH(
      make_whiten_stage(WhitenParams{}, BackendChoice{Backend::Cuda, 0, "test"}),
      Contains("this build has no CUDA backend") && Contains("allowed: backend cpu"));
  const ChainConfig config = parse_chain_yaml("[{whiten: }]", "p");
  REQUIRE_THROWS_WITH(build_chain_stages(config, BackendChoice{Backend::Cuda, 0, "test"}),
                      Contains("no CUDA backend"));
#endif
  // With CUDA the stage is tested on a GPU (tests/whiten/test_whiten_cuda.cpp).
}

TEST_CASE("each frame's whitening stats come back with it from the engine at every depth",
          "[whiten][stage][engine]") {
  const SkySequence sky = small_sky();
  WhitenParams p = classic_params();
  p.history = 3;
  p.shift = WhitenShift::Resample;
  const int frames = 12;
  std::vector<WhitenStats> at_depth1;
  for (int depth : {1, 2, 3, 8}) {
    std::vector<std::unique_ptr<FilterStage>> stages;
    stages.push_back(make_whiten_stage(p, kCpu));
    auto engine = make_streaming_chain(std::move(stages), kCpu, depth);
    engine->configure(sky.shape());
    std::vector<WhitenStats> seen;
    auto take = [&] {
      const FinishedFrame done = engine->wait_oldest();
      REQUIRE(done.results.size() == 1);
      const FrameResult& r = done.results[0];
      CHECK(r.stage == 0);
      CHECK(r.stage_name == "whiten");
      CHECK(r.layout.kind == kWhitenStatsKind);
      REQUIRE(r.header().count == 1);
      const WhitenStats stats = *r.view.records<WhitenStats>();
      CHECK(stats.frame == done.tag);  // its own frame's numbers, not the newest
      seen.push_back(stats);
      engine->pop();
    };
    std::vector<TestImage> inputs;
    for (int t = 0; t < frames; ++t) inputs.push_back(sky.frame(t));
    for (int t = 0; t < frames; ++t) {
      if (engine->in_flight() == depth) take();
      engine->submit(inputs[t].cview(), static_cast<std::uint64_t>(t));
    }
    while (engine->in_flight() > 0) take();
    REQUIRE(seen.size() == static_cast<std::size_t>(frames));
    if (depth == 1) {
      at_depth1 = seen;
      CHECK(at_depth1.back().history_used == 3);
      continue;
    }
    for (int t = 0; t < frames; ++t) {
      INFO("depth " << depth << ", frame " << t);
      CHECK(seen[t].frame == at_depth1[t].frame);
      CHECK(seen[t].history_used == at_depth1[t].history_used);
      CHECK(seen[t].weight_sq_sum == at_depth1[t].weight_sq_sum);
      CHECK(seen[t].shift_x == at_depth1[t].shift_x);
      CHECK(seen[t].rejected == at_depth1[t].rejected);
    }
  }
}

TEST_CASE("the whitening example configuration parses", "[whiten][chain]") {
  const ChainConfig config =
      load_chain_file(std::string(STARSIFT_SOURCE_DIR) + "/config/examples/whiten.yaml");
  REQUIRE(config.stages.size() == 1);
  CHECK(whiten_of(config.stages[0]) == WhitenParams{});  // the defaults, written out
}
