#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "pipeline/thread_pool.hpp"

using starsift::ThreadPool;

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
