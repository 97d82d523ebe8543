// A fixed set of worker threads for the CPU backend: created once, reused for every frame,
// so the per-frame path starts no threads and allocates nothing.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace starsift {

class ThreadPool {
 public:
  // 0 threads means one per hardware thread.
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const noexcept { return static_cast<unsigned>(workers_.size()) + 1; }

  // Calls body(begin, end) over [0, count) split into contiguous chunks, on the workers and
  // the calling thread, and returns when all are done. The first exception thrown by a
  // chunk is rethrown here. Not re-entrant.
  void parallel_for(int count, const std::function<void(int begin, int end)>& body);

 private:
  void worker_loop(unsigned index);
  void run_chunk(unsigned index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  const std::function<void(int, int)>* body_ = nullptr;
  int count_ = 0;
  std::uint64_t generation_ = 0;
  unsigned pending_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
};

}  // namespace starsift
