// SPDX-License-Identifier: LGPL-2.1-or-later
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "pipeline/backend.hpp"
#include "pipeline/median/median_stage.hpp"
#include "pipeline/thread_pool.hpp"
#include "pipeline/whiten/whiten_stage.hpp"

using starsift::ThreadPool;

namespace {

// Threads of this process now (Linux: one entry per thread in /proc/self/task).
int process_threads() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry :
       std::filesystem::directory_iterator("/proc/self/task")) {
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("parallel_for covers every index exactly once, repeatedly", "[thread_pool]") {
  ThreadPool pool(4);
  for (int count : {0, 1, 3, 4, 5, 1000}) {
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(count));
    for (int round = 0; round < 20; ++round) {
      pool.parallel_for(count, [&](int b, int e) {
        for (int i = b; i < e; ++i) hits[i]++;
      });
    }
    for (auto& h : hits) REQUIRE(h.load() == 20);
  }
}

TEST_CASE("parallel_for rethrows a chunk's exception and stays usable", "[thread_pool]") {
  ThreadPool pool(3);
  REQUIRE_THROWS_AS(pool.parallel_for(9,
                                      [](int b, int) {
                                        if (b > 0) throw std::runtime_error("boom");
                                      }),
                    std::runtime_error);
  std::atomic<int> n{0};
  pool.parallel_for(9, [&](int b, int e) { n += e - b; });
  REQUIRE(n == 9);
}

TEST_CASE("parallel_for serves callers on several threads one at a time", "[thread_pool]") {
  ThreadPool pool(3);
  constexpr int kCallers = 4;
  constexpr int kRounds = 200;
  constexpr int kCount = 37;
  // Each caller counts into its own array: a chunk run for the wrong caller, or a loop that
  // returns before all its chunks ran, shows as a count other than kRounds.
  std::vector<std::vector<std::atomic<int>>> hits(kCallers);
  for (auto& h : hits) h = std::vector<std::atomic<int>>(kCount);
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int round = 0; round < kRounds; ++round) {
        pool.parallel_for(kCount, [&](int b, int e) {
          for (int i = b; i < e; ++i) hits[c][i]++;
        });
      }
    });
  }
  for (auto& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) {
    for (int i = 0; i < kCount; ++i) {
      INFO("caller " << c << ", index " << i);
      REQUIRE(hits[c][i].load() == kRounds);
    }
  }
}

TEST_CASE("parallel_for called from inside its own loop runs the inner loop serially",
          "[thread_pool]") {
  ThreadPool pool(3);
  std::atomic<int> inner{0};
  pool.parallel_for(6, [&](int b, int e) {
    for (int i = b; i < e; ++i) {
      pool.parallel_for(10, [&](int ib, int ie) { inner += ie - ib; });
    }
  });
  REQUIRE(inner == 60);
}

TEST_CASE("the CPU stages share one pool instead of starting threads each", "[thread_pool]") {
  ThreadPool& shared = starsift::shared_thread_pool();
  CHECK(&shared == &starsift::shared_thread_pool());
  CHECK(shared.size() == std::max(1u, std::thread::hardware_concurrency()));

  const int before = process_threads();
  const starsift::BackendChoice cpu{starsift::Backend::Cpu, 0, "test"};
  std::vector<std::unique_ptr<starsift::MedianStage>> medians;
  std::vector<std::unique_ptr<starsift::WhitenStage>> whitens;
  for (int i = 0; i < 100; ++i) {
    medians.push_back(starsift::make_median_stage(starsift::MedianParams{}, cpu));
    whitens.push_back(starsift::make_whiten_stage(starsift::WhitenParams{}, cpu));
  }
  // 200 stages with a pool each would have started 200 x (cores - 1) threads.
  CHECK(process_threads() - before <= static_cast<int>(shared.size()));
}
