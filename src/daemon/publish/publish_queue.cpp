// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/publish/publish_queue.hpp"

#include <utility>

namespace starsift::daemon {

PublishQueue::PublishQueue(std::size_t capacity) : capacity_(capacity > 0 ? capacity : 1) {}

std::size_t PublishQueue::push(std::string message) {
  std::size_t dropped = 0;
  if (messages_.size() >= capacity_) {
    messages_.pop_front();
    dropped = 1;
  }
  messages_.push_back(std::move(message));
  return dropped;
}

std::size_t PublishQueue::push_front(std::string message) {
  // The oldest of all: when there is no room, it is the one to go.
  if (messages_.size() >= capacity_) return 1;
  messages_.push_front(std::move(message));
  return 0;
}

std::string PublishQueue::pop() {
  std::string message = std::move(messages_.front());
  messages_.pop_front();
  return message;
}

std::deque<std::string> PublishQueue::take_all() {
  std::deque<std::string> all;
  all.swap(messages_);
  return all;
}

}  // namespace starsift::daemon
