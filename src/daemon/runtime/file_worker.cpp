// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/runtime/file_worker.hpp"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <exception>

namespace starsift::daemon {

FileWorker::FileWorker(std::string name, std::size_t capacity)
    : name_(std::move(name)), capacity_(capacity == 0 ? 1 : capacity) {
  thread_ = std::thread([this] { run(); });
  pthread_setname_np(thread_.native_handle(), name_.substr(0, 15).c_str());
}

FileWorker::~FileWorker() {
  finish();
}

bool FileWorker::post(std::function<void()> job) {
  {
    const std::lock_guard lock(mutex_);
    if (finishing_ || jobs_.size() >= capacity_) return false;
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
  return true;
}

void FileWorker::finish() {
  {
    const std::lock_guard lock(mutex_);
    finishing_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

std::size_t FileWorker::pending() const {
  const std::lock_guard lock(mutex_);
  return jobs_.size() + (running_job_ ? 1 : 0);
}

void FileWorker::run() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return finishing_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // finishing, nothing left
      job = std::move(jobs_.front());
      jobs_.pop_front();
      running_job_ = true;
    }
    try {
      job();
    } catch (const std::exception& e) {
      spdlog::error("{}: {}", name_, e.what());
    }
    const std::lock_guard lock(mutex_);
    running_job_ = false;
  }
}

}  // namespace starsift::daemon
