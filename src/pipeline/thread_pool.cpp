// SPDX-License-Identifier: LGPL-2.1-or-later
#include "pipeline/thread_pool.hpp"

#include <algorithm>

namespace starsift {

namespace {

// The pool whose job this thread is running (a worker, or a caller inside parallel_for), to
// recognise a nested call.
thread_local const ThreadPool* running_in = nullptr;

struct RunningIn {
  explicit RunningIn(const ThreadPool* pool) : previous(running_in) { running_in = pool; }
  ~RunningIn() { running_in = previous; }
  RunningIn(const RunningIn&) = delete;
  RunningIn& operator=(const RunningIn&) = delete;
  const ThreadPool* previous;
};

}  // namespace

ThreadPool& shared_thread_pool() {
  static ThreadPool* const pool = new ThreadPool();
  return *pool;
}

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  workers_.reserve(threads - 1);
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_chunk(unsigned index) {
  const int n = static_cast<int>(size());
  const int begin = static_cast<int>((static_cast<long long>(count_) * index) / n);
  const int end = static_cast<int>((static_cast<long long>(count_) * (index + 1)) / n);
  if (begin >= end) return;
  try {
    (*body_)(begin, end);
  } catch (...) {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = std::current_exception();
  }
}

void ThreadPool::worker_loop(unsigned index) {
  const RunningIn running(this);
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    run_chunk(index);
    {
      std::lock_guard lock(mutex_);
      if (--pending_ == 0) work_done_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(int count, ChunkBody body) {
  if (count <= 0) return;
  if (running_in == this) {
    body(0, count);
    return;
  }
  const std::lock_guard caller(caller_mutex_);
  const RunningIn running(this);
  {
    std::lock_guard lock(mutex_);
    body_ = &body;
    count_ = count;
    error_ = nullptr;
    pending_ = static_cast<unsigned>(workers_.size());
    ++generation_;
  }
  work_ready_.notify_all();
  run_chunk(0);
  std::unique_lock lock(mutex_);
  work_done_.wait(lock, [&] { return pending_ == 0; });
  body_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

}  // namespace starsift
