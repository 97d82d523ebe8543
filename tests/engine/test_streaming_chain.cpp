// SPDX-License-Identifier: LGPL-2.1-or-later
// The streaming engine on the CPU: frame count and order exact for every depth, under
// random delays, on both input paths; flush and caps change; per-frame results of fixed and
// variable length handed back with their own frame; parameter changes in frame order; a
// stage that keeps its frame hands on the one it read.
#include <algorithm>

#include "pipeline/error.hpp"
#include "support/kept_frame_check.hpp"
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

namespace {

// Copies its frame and hands back a list of first-pixel-value records: up to kCapacity of
// them, the rest counted as overflow (the shape of a catalogue with a capacity).
class ListStage final : public FilterStage {
 public:
  static constexpr std::uint32_t kCapacity = 4;
  std::string_view name() const override { return "list"; }
  Backend backend() const override { return Backend::Cpu; }
  bool supports(PixelFormat f) const override { return f == PixelFormat::Gray8; }
  void configure(const FrameShape&) override {}
  std::optional<ResultLayout> result_layout() const override {
    return ResultLayout{"test-list", sizeof(std::uint32_t), kCapacity, false};
  }
  void process(ConstImageView in, ImageView out) override {
    for (int y = 0; y < in.height; ++y) std::memcpy(out.row(y), in.row(y), in.row_bytes());
    wanted_ = static_cast<std::uint32_t>(in.row_as<std::uint8_t>(0)[0]) % 7;
  }
  void write_result(ResultView result) const override {
    auto* header = reinterpret_cast<ResultHeader*>(result.data);
    header->count = std::min(wanted_, kCapacity);
    header->overflow = wanted_ - header->count;
    for (std::uint32_t i = 0; i < header->count; ++i) {
      result.records<std::uint32_t>()[i] = wanted_ * 100 + i;
    }
  }

 private:
  std::uint32_t wanted_ = 0;
};

}  // namespace

TEST_CASE("CPU streaming chain hands each frame's results back with it", "[engine][cpu][result]") {
  const BackendChoice cpu{Backend::Cpu, 0, "test"};
  const FrameShape shape{9, 5, PixelFormat::Gray8, 8};
  for (int depth = 1; depth <= kMaxStreamingDepth; ++depth) {
    std::vector<std::unique_ptr<FilterStage>> stages;
    stages.push_back(make_median_stage(MedianParams{}, cpu));  // declares none
    stages.push_back(std::make_unique<ListStage>());
    auto engine = make_streaming_chain(std::move(stages), cpu, depth);
    engine->configure(shape);
    const int frames = 3 * depth + 4;
    std::vector<TestImage> inputs;
    for (int i = 0; i < frames; ++i) {
      inputs.emplace_back(shape.width, shape.height, shape.format);
      fill(inputs.back(), Fill::Constant, static_cast<std::uint32_t>(i));
    }
    int out = 0;
    auto take = [&] {
      const FinishedFrame done = engine->wait_oldest();
      REQUIRE(done.results.size() == 1);
      const FrameResult& r = done.results[0];
      CHECK(r.stage == 1);
      CHECK(r.stage_name == "list");
      const auto wanted = static_cast<std::uint32_t>(done.output.row_as<std::uint8_t>(0)[0]) % 7;
      INFO("depth " << depth << ", frame " << done.tag);
      REQUIRE(r.header().count == std::min(wanted, ListStage::kCapacity));
      CHECK(r.header().overflow == wanted - r.header().count);
      for (std::uint32_t k = 0; k < r.header().count; ++k) {
        CHECK(r.view.records<std::uint32_t>()[k] == wanted * 100 + k);
      }
      engine->pop();
      ++out;
    };
    for (int i = 0; i < frames; ++i) {
      if (engine->in_flight() == depth) take();
      engine->submit(inputs[i].cview(), static_cast<std::uint64_t>(i));
    }
    while (engine->in_flight() > 0) take();
    CHECK(out == frames);
  }
}

TEST_CASE("CPU streaming chain applies parameter changes in frame order", "[engine][cpu][live]") {
  const BackendChoice cpu{Backend::Cpu, 0, "test"};
  for (int depth : {1, 2, 3, 8}) {
    auto engine = make_test_streaming_chain(cpu, depth);
    check_live_changes(*engine, cpu, {29, 17, PixelFormat::Gray16, 16});
  }
  // A replacement that writes other frames or hands back another result is refused.
  auto engine = make_test_streaming_chain(cpu, 2);
  engine->configure({16, 8, PixelFormat::Gray8, 8});
  REQUIRE_THROWS_WITH(engine->replace_stage(0, std::make_unique<ListStage>()),
                      Catch::Contains("another result"));
  REQUIRE_THROWS_WITH(engine->replace_stage(5, make_median_stage(MedianParams{}, cpu)),
                      Catch::Contains("no stage 5"));
}

TEST_CASE("CPU streaming chain hands kept frames on without a copy", "[engine][cpu][detect]") {
  check_kept_frames({Backend::Cpu, 0, "test"});
}
