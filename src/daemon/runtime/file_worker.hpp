// SPDX-License-Identifier: LGPL-2.1-or-later
// A thread that does a pipeline's file writing in order, so a slow disk (an SD card's
// fdatasync, a FITS file) never holds a streaming thread. Its queue is bounded: a job that
// finds it full is refused, and the caller counts what was lost, instead of memory growing
// without end behind a dead disk.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace starsift::daemon {

class FileWorker {
 public:
  // `name` names the thread (at most 15 characters reach the kernel); `capacity` >= 1.
  FileWorker(std::string name, std::size_t capacity);
  ~FileWorker();  // finish()
  FileWorker(const FileWorker&) = delete;
  FileWorker& operator=(const FileWorker&) = delete;

  // Queues `job`; false (and the job dropped) when `capacity` jobs are waiting or the worker
  // is finishing. A job's exceptions are its own to handle: one that escapes is logged.
  bool post(std::function<void()> job);
  // Runs what is queued, then stops the thread. Idempotent.
  void finish();
  // Jobs waiting or running.
  std::size_t pending() const;

 private:
  void run();

  std::string name_;
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool running_job_ = false;
  bool finishing_ = false;
  std::thread thread_;
};

}  // namespace starsift::daemon
