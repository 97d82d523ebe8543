// SPDX-License-Identifier: LGPL-2.1-or-later
// Drives a StreamingChain the way an element does, with random delays on both sides, and
// checks every frame against the CPU reference in input order. Shared by the CPU and GPU
// tests so both backends face the same schedule.
#pragma once

#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/median/median_stage.hpp"
#include "pipeline/median/reference.hpp"
#include "support/test_image.hpp"

namespace starsift::test {

inline std::vector<MedianParams> streaming_test_chain() {
  MedianParams a;
  a.size = 3;
  MedianParams b;
  b.size = 5;
  b.border = BorderMode::Replicate;
  return {a, b};
}

inline std::unique_ptr<StreamingChain> make_test_streaming_chain(const BackendChoice& choice,
                                                                 int depth) {
  std::vector<std::unique_ptr<FilterStage>> stages;
  for (const auto& p : streaming_test_chain()) stages.push_back(make_median_stage(p, choice));
  return make_streaming_chain(std::move(stages), choice, depth);
}

inline TestImage expected_output(const TestImage& in) {
  static ThreadPool pool(2);
  TestImage cur = in;
  for (const auto& p : streaming_test_chain()) {
    TestImage next(in.width, in.height, in.format);
    median_reference(p, cur.cview(), next.view(), pool);
    cur = next;
  }
  return cur;
}

// Pushes `frames` distinct frames through `engine` (configured for `shape`), rotating through
// the input paths (the slot's own memory, a copied frame, a frame held in place) and the
// output paths (the slot's memory, every other frame into memory the caller holds), sleeping
// at random, and checks count, order and per-stage times.
inline void check_streaming(StreamingChain& engine, const FrameShape& shape, int frames,
                            std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<TestImage> inputs;
  std::vector<TestImage> expected;
  std::vector<TestImage> held;  // outputs the caller holds, for even frames
  for (int i = 0; i < frames; ++i) {
    held.emplace_back(shape.width, shape.height, shape.format, 8);
    inputs.emplace_back(shape.width, shape.height, shape.format, 4);
    fill(inputs.back(), Fill::Impulse, seed + static_cast<std::uint32_t>(i));
    expected.push_back(expected_output(inputs.back()));
  }
  const auto before = engine.counters();
  std::uint64_t next_out = 0;
  auto collect = [&] {
    if (rng() % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 2000));
    const FinishedFrame done = engine.wait_oldest();
    REQUIRE(done.tag == next_out);  // output order = input order
    const bool in_held = next_out % 2 == 0;
    REQUIRE((done.output.data == held[next_out].cview().data) == in_held);
    REQUIRE(engine.counters().stage_ms_last.size() == streaming_test_chain().size());
    for (double ms : engine.counters().stage_ms_last) REQUIRE(ms >= 0.0);
    TestImage got(shape.width, shape.height, shape.format);
    for (int y = 0; y < shape.height; ++y) {
      std::memcpy(got.view().row(y), done.output.row(y), done.output.row_bytes());
    }
    INFO("frame " << next_out << " depth " << engine.depth() << " first diff "
                  << got.first_difference(expected[next_out]));
    REQUIRE(got.same_pixels(expected[next_out]));
    engine.pop();
    ++next_out;
  };
  auto out = [&](int i) { return i % 2 == 0 ? held[i].view() : ImageView{}; };
  for (int i = 0; i < frames; ++i) {
    if (engine.in_flight() == engine.depth()) collect();
    if (rng() % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 1000));
    if (i % 3 == 0) {  // the source writes into the engine's own (pinned) slot
      ImageView slot = engine.next_input();
      for (int y = 0; y < shape.height; ++y) {
        std::memcpy(slot.row(y), inputs[i].cview().row(y), slot.row_bytes());
      }
      engine.submit(const_view(slot), static_cast<std::uint64_t>(i), InputMemory::Any, out(i));
    } else if (i % 3 == 1) {  // any host frame: copied into the slot
      engine.submit(inputs[i].cview(), static_cast<std::uint64_t>(i), InputMemory::Any, out(i));
    } else {  // held by the caller until popped: read in place
      engine.submit(inputs[i].cview(), static_cast<std::uint64_t>(i), InputMemory::HeldPinned,
                    out(i));
    }
  }
  while (engine.in_flight() > 0) collect();  // drain, as on EOS
  REQUIRE(next_out == static_cast<std::uint64_t>(frames));
  const auto& after = engine.counters();
  REQUIRE(after.submitted - before.submitted == static_cast<std::uint64_t>(frames));
  REQUIRE(after.completed - before.completed == static_cast<std::uint64_t>(frames));
  const auto copied = static_cast<std::uint64_t>((frames + 1) / 3);  // i % 3 == 1
  REQUIRE(after.copied - before.copied == copied);
  REQUIRE(after.zero_copy - before.zero_copy == static_cast<std::uint64_t>(frames) - copied);
  REQUIRE(after.held_outputs - before.held_outputs == static_cast<std::uint64_t>(frames + 1) / 2);
}

// Fills the ring, resets (a flush), checks the drop count, then streams again; then a caps
// change mid-stream.
inline void check_flush_and_caps_change(StreamingChain& engine, const FrameShape& first,
                                        const FrameShape& second) {
  engine.configure(first);
  TestImage frame(first.width, first.height, first.format);
  fill(frame, Fill::Random, 3);
  for (int i = 0; i < engine.depth(); ++i) engine.submit(frame.cview(), 100 + i);
  REQUIRE_THROWS_WITH(engine.submit(frame.cview(), 999), Catch::Contains("slots in flight"));
  const auto dropped = engine.counters().dropped;
  engine.reset();
  REQUIRE(engine.in_flight() == 0);
  REQUIRE(engine.counters().dropped - dropped == static_cast<std::uint64_t>(engine.depth()));
  check_streaming(engine, first, 2 * engine.depth() + 1, 77);
  engine.submit(frame.cview(), 1);  // in flight while the caps change
  engine.configure(second);
  REQUIRE(engine.in_flight() == 0);
  check_streaming(engine, second, engine.depth() + 2, 78);
  REQUIRE_THROWS_WITH(engine.submit(frame.cview(), 5), Catch::Contains("differs"));
}

// Parameter changes through the engine while frames are in flight: update_stage() (the second
// median's size) and replace_stage() (a new first median) apply to the frames submitted after
// them, never to those already in flight, and nothing is drained.
inline void check_live_changes(StreamingChain& engine, const BackendChoice& choice,
                               const FrameShape& shape) {
  engine.configure(shape);
  std::vector<MedianParams> before = streaming_test_chain();
  std::vector<MedianParams> after = before;
  after[0].size = 7;
  after[1].size = 3;
  const int frames = 4 * engine.depth() + 3;
  const int changed_at = 2 * engine.depth() + 1;
  std::vector<TestImage> inputs;
  for (int i = 0; i < frames; ++i) {
    inputs.emplace_back(shape.width, shape.height, shape.format);
    fill(inputs.back(), Fill::Impulse, 500 + static_cast<std::uint32_t>(i));
  }
  auto expect = [&](const TestImage& in, const std::vector<MedianParams>& chain) {
    static ThreadPool pool(2);
    TestImage cur = in;
    for (const auto& p : chain) {
      TestImage next(in.width, in.height, in.format);
      median_reference(p, cur.cview(), next.view(), pool);
      cur = next;
    }
    return cur;
  };
  std::uint64_t next_out = 0;
  auto collect = [&] {
    const FinishedFrame done = engine.wait_oldest();
    REQUIRE(done.tag == next_out);
    TestImage got(shape.width, shape.height, shape.format);
    for (int y = 0; y < shape.height; ++y) {
      std::memcpy(got.view().row(y), done.output.row(y), done.output.row_bytes());
    }
    const bool changed = static_cast<int>(next_out) >= changed_at;
    INFO("frame " << next_out << ", depth " << engine.depth());
    REQUIRE(got.same_pixels(expect(inputs[next_out], changed ? after : before)));
    engine.pop();
    ++next_out;
  };
  const auto dropped = engine.counters().dropped;
  for (int i = 0; i < frames; ++i) {
    if (engine.in_flight() == engine.depth()) collect();
    if (i == changed_at) {
      const int in_flight = engine.in_flight();
      const MedianParams second = after[1];
      engine.update_stage(1, [second](FilterStage& stage) {
        dynamic_cast<MedianStage&>(stage).set_params(second);
      });
      engine.replace_stage(0, make_median_stage(after[0], choice));
      REQUIRE(engine.in_flight() == in_flight);  // no drain
    }
    engine.submit(inputs[i].cview(), static_cast<std::uint64_t>(i));
  }
  while (engine.in_flight() > 0) collect();
  REQUIRE(engine.counters().dropped == dropped);
  REQUIRE(engine.counters().live_updates >= 1);
  REQUIRE(engine.counters().stage_replaced >= 1);
  REQUIRE(engine.stage(0).name() == "median");
}

}  // namespace starsift::test
