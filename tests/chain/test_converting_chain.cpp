// SPDX-License-Identifier: LGPL-2.1-or-later
// Chains whose stages change the format on the way (as whitening does when it writes a
// float residual): every stage gets the frames its predecessor writes, on the synchronous
// chain and the streaming engine alike.
#include <catch2/catch.hpp>

#include <cstring>

#include "pipeline/engine/stage_shapes.hpp"
#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/error.hpp"
#include "support/test_image.hpp"

using namespace starsift;
using namespace starsift::test;

namespace {

// Gray16 in, Gray32F out: each sample times `scale`. The smallest stage that converts.
class ToFloatStage final : public FilterStage {
 public:
  explicit ToFloatStage(float scale) : scale_(scale) {}
  std::string_view name() const override { return "to-float"; }
  Backend backend() const override { return Backend::Cpu; }
  bool supports(PixelFormat f) const override { return f == PixelFormat::Gray16; }
  FrameShape output_shape(const FrameShape& in) const override {
    return {in.width, in.height, PixelFormat::Gray32F, 32};
  }
  void configure(const FrameShape& shape) override {
    if (!supports(shape.format)) throw Error("to-float takes GRAY16", "GRAY16");
  }
  void process(ConstImageView in, ImageView out) override {
    for (int y = 0; y < in.height; ++y) {
      const auto* src = in.row_as<std::uint16_t>(y);
      auto* dst = out.row_as<float>(y);
      for (int x = 0; x < in.width; ++x) dst[x] = scale_ * static_cast<float>(src[x]);
    }
  }

 private:
  float scale_;
};

// Gray32F in and out: adds `offset`. Refuses anything else, so a wrong shape is caught.
class AddStage final : public FilterStage {
 public:
  explicit AddStage(float offset) : offset_(offset) {}
  std::string_view name() const override { return "add"; }
  Backend backend() const override { return Backend::Cpu; }
  bool supports(PixelFormat f) const override { return f == PixelFormat::Gray32F; }
  void configure(const FrameShape& shape) override {
    if (!supports(shape.format)) throw Error("add takes GRAY32F", "GRAY32F");
  }
  void process(ConstImageView in, ImageView out) override {
    for (int y = 0; y < in.height; ++y) {
      for (int x = 0; x < in.width; ++x) out.row_as<float>(y)[x] = in.row_as<float>(y)[x] + offset_;
    }
  }

 private:
  float offset_;
};

std::vector<std::unique_ptr<FilterStage>> converting_chain() {
  std::vector<std::unique_ptr<FilterStage>> stages;
  stages.push_back(std::make_unique<ToFloatStage>(0.5f));
  stages.push_back(std::make_unique<AddStage>(1.0f));
  stages.push_back(std::make_unique<AddStage>(0.25f));
  return stages;
}

void check_converted(const TestImage& in, ConstImageView out) {
  REQUIRE(out.format == PixelFormat::Gray32F);
  for (int y = 0; y < in.height; ++y) {
    for (int x = 0; x < in.width; ++x) {
      const auto v = static_cast<float>(in.cview().row_as<std::uint16_t>(y)[x]);
      REQUIRE(out.row_as<float>(y)[x] == 0.5f * v + 1.25f);
    }
  }
}

}  // namespace

TEST_CASE("stage shapes follow each stage's output", "[chain][convert]") {
  auto stages = converting_chain();
  const auto shapes = configure_stage_shapes(stages, {19, 7, PixelFormat::Gray16, 12}, false);
  REQUIRE(shapes.size() == 4);
  REQUIRE(shapes[0].format == PixelFormat::Gray16);
  for (std::size_t i = 1; i < shapes.size(); ++i) REQUIRE(shapes[i].format == PixelFormat::Gray32F);
  REQUIRE(largest_intermediate_row(shapes) == 19 * 4);
  // A stage that cannot take its predecessor's output refuses at configure time.
  std::vector<std::unique_ptr<FilterStage>> wrong;
  wrong.push_back(std::make_unique<AddStage>(1.0f));
  REQUIRE_THROWS_WITH(configure_stage_shapes(wrong, {19, 7, PixelFormat::Gray16, 16}, false),
                      Catch::Contains("GRAY32F"));
}

TEST_CASE("a converting chain runs on the CPU engine at every depth", "[chain][convert]") {
  const BackendChoice cpu{Backend::Cpu, 0, "test"};
  const FrameShape shape{23, 11, PixelFormat::Gray16, 16};
  TestImage in(shape.width, shape.height, shape.format, 6);
  fill(in, Fill::Random, 5);

  for (int depth : {1, 2, 3, 8}) {
    auto engine = make_streaming_chain(converting_chain(), cpu, depth);
    engine->configure(shape);
    REQUIRE(engine->output_shape().format == PixelFormat::Gray32F);
    TestImage held(shape.width, shape.height, PixelFormat::Gray32F, 12);
    engine->submit(in.cview(), 0);
    if (depth == 1) {
      check_converted(in, engine->wait_oldest().output);
      engine->pop();
    }
    engine->submit(in.cview(), 1, InputMemory::Any, held.view());
    if (depth == 1) {
      const FinishedFrame done = engine->wait_oldest();
      check_converted(in, done.output);
      REQUIRE(done.output.data == held.cview().data);
      engine->pop();
      continue;
    }
    if (depth >= 3) {
      REQUIRE_THROWS_WITH(engine->submit(in.cview(), 2, InputMemory::Any, in.view()),
                          Catch::Contains("differs from the chain's output"));
    }
    for (int i = 0; i < 2; ++i) {
      const FinishedFrame done = engine->wait_oldest();
      check_converted(in, done.output);
      REQUIRE((done.output.data == held.cview().data) == (i == 1));
      engine->pop();
    }
  }
}
