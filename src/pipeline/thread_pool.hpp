// SPDX-License-Identifier: LGPL-2.1-or-later
// A fixed set of worker threads for the CPU backend: created once, reused for every frame,
// so the per-frame path starts no threads and allocates nothing. The CPU stages share one
// process-wide pool (shared_thread_pool()), so a long chain or many elements start no more
// threads than the machine has cores.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace starsift {

// A non-owning reference to a loop body, body(begin, end): a lambda passes as it is. A
// std::function would copy a lambda of more than a few captures to the heap at every call,
// which is every frame. The referenced callable must outlive the call it is passed to (a
// temporary lambda lives to the end of the statement: long enough).
class ChunkBody {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, ChunkBody>>>
  ChunkBody(F&& body) noexcept  // NOLINT(google-explicit-constructor): lambdas pass as they are
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(body)))),
        call_([](void* object, int begin, int end) {
          (*static_cast<std::remove_reference_t<F>*>(object))(begin, end);
        }) {}
  void operator()(int begin, int end) const { call_(object_, begin, end); }

 private:
  void* object_;
  void (*call_)(void*, int, int);
};

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
  // chunk is rethrown here.
  // Callers on different threads are served one at a time: a second caller waits until the
  // first one's loop is done (the pool has one set of workers and one job slot). A body that
  // calls parallel_for on the same pool again runs that inner loop itself, serially, since
  // waiting for the pool from inside one of its own jobs would never end.
  void parallel_for(int count, ChunkBody body);

 private:
  void worker_loop(unsigned index);
  void run_chunk(unsigned index);

  std::vector<std::thread> workers_;
  std::mutex caller_mutex_;  // held for a whole parallel_for: one caller at a time
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable work_done_;
  const ChunkBody* body_ = nullptr;
  int count_ = 0;
  std::uint64_t generation_ = 0;
  unsigned pending_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
};

// The process's pool for the CPU stages, one thread per hardware thread (the caller being
// one of them), created on first use and never destroyed: stages on other threads may still
// run while the process exits. Callers on several threads share it through parallel_for's
// one-at-a-time rule, so frames of two streams are filtered in turn, each with every core.
ThreadPool& shared_thread_pool();

}  // namespace starsift
