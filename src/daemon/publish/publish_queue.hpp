// SPDX-License-Identifier: LGPL-2.1-or-later
// The messages waiting for the broker: a FIFO of at most `capacity` payloads. When it is
// full, a new message pushes the oldest out, and that one is counted by the caller: a camera
// network wants the latest detections when its broker comes back, as the chain's own queue
// drops the oldest frame first. Not thread-safe: the publisher holds its lock around it.
#pragma once

#include <cstddef>
#include <deque>
#include <string>

namespace starsift::daemon {

class PublishQueue {
 public:
  explicit PublishQueue(std::size_t capacity);

  // Appends `message`; returns how many older messages it pushed out (0 or 1).
  std::size_t push(std::string message);
  // Puts a message taken with pop() back at the front (libmosquitto refused it for want of
  // a connection). Returns 1 when the queue had filled meanwhile and it is dropped itself.
  std::size_t push_front(std::string message);
  // The oldest message, removed. The queue must not be empty.
  std::string pop();
  // Every message, oldest first; the queue is left empty.
  std::deque<std::string> take_all();

  bool empty() const noexcept { return messages_.empty(); }
  std::size_t size() const noexcept { return messages_.size(); }
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  std::size_t capacity_;
  std::deque<std::string> messages_;
};

}  // namespace starsift::daemon
