// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/publish/mqtt_publisher.hpp"

#include <mosquitto.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "pipeline/error.hpp"

namespace starsift::daemon {

namespace {

using Clock = std::chrono::steady_clock;

// How often the feeder looks at the connection when nothing else wakes it.
constexpr std::chrono::seconds kSupervisePeriod{1};
// Disconnected this long, the network thread is started again: libmosquitto ends it by
// itself after errors it counts fatal (a failed TLS handshake), and would never retry.
constexpr std::chrono::seconds kMinStaleLimit{60};

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

MqttPublisher::MqttPublisher(MqttPublisherSettings settings, PublishCounters& counters,
                             std::shared_ptr<spdlog::logger> log, std::deque<std::string> carried)
    : settings_(std::move(settings)),
      counters_(counters),
      log_(log ? std::move(log) : spdlog::default_logger()),
      queue_(settings_.queue) {
  for (std::string& line : carried) counters_.dropped.fetch_add(queue_.push(std::move(line)));
  update_queued();
  counters_.connected.store(false);
  try {
    MqttConnection::Events& events = *this;  // a private base: converted here
    connection_ = std::make_unique<MqttConnection>(settings_, events);
  } catch (const Error& e) {
    log_->error("{}; allowed: {}; detections are not published", e.problem(), e.allowed());
  }
  down_since_ = loop_started_ = Clock::now();
  feeder_ = std::thread([this] { run(); });
}

MqttPublisher::~MqttPublisher() {
  finish(std::chrono::milliseconds(0));
}

bool MqttPublisher::connected() const {
  const std::lock_guard lock(mutex_);
  return connected_;
}

void MqttPublisher::push(std::string payload) {
  counters_.pushed.fetch_add(1, std::memory_order_relaxed);
  {
    const std::lock_guard lock(mutex_);
    if (!accepting_ || !connection_) {
      counters_.failed.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    counters_.dropped.fetch_add(queue_.push(std::move(payload)), std::memory_order_relaxed);
    update_queued();
  }
  changed_.notify_all();
}

void MqttPublisher::update_queued() {
  counters_.queued.store(queue_.size() + inflight_, std::memory_order_relaxed);
}

bool MqttPublisher::sendable() const {
  return connected_ && !resending_ && inflight_ < kInflightWindow && !queue_.empty();
}

void MqttPublisher::run() {
  // Resolving the broker's name may block here, never on a caller of push().
  if (connection_) {
    log_->info("MQTT: publishing to {} on {} (client id {}, QoS {}, queue {})",
               settings_.broker_text(), settings_.topic, settings_.client_id, settings_.qos,
               settings_.queue);
    connection_->start();
  }
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    changed_.wait_for(lock, kSupervisePeriod, [this] { return stopping_ || sendable(); });
    if (stopping_) break;
    send_ready(lock);
    supervise(lock);
  }
}

// Called with the lock held; libmosquitto is called without it (its callbacks take it).
// The feeder is the only thread that publishes, so lines leave in queue order.
void MqttPublisher::send_ready(std::unique_lock<std::mutex>& lock) {
  while (sendable()) {
    std::string message = queue_.pop();
    ++inflight_;
    lock.unlock();
    const int rc = connection_->publish(message);
    lock.lock();
    if (rc == MOSQ_ERR_SUCCESS) continue;
    --inflight_;
    if (rc == MOSQ_ERR_NO_CONN) {
      // Gone between the check and the call: it waits for the next connection.
      counters_.dropped.fetch_add(queue_.push_front(std::move(message)));
      connected_ = false;
      break;
    }
    // The message itself is refused (larger than the broker allows, out of memory).
    const std::uint64_t failures = counters_.failed.fetch_add(1);
    if (failures % 1000 == 0) {
      log_->error("MQTT: a detections line of {} bytes was refused: {}", message.size(),
                  MqttConnection::error_text(rc));
    }
  }
  update_queued();
}

void MqttPublisher::supervise(std::unique_lock<std::mutex>& lock) {
  if (connected_ || !connection_) return;
  const auto limit = std::max<std::chrono::seconds>(
      kMinStaleLimit, std::chrono::seconds(3 * settings_.reconnect_max_s));
  if (Clock::now() - down_since_ < limit || Clock::now() - loop_started_ < limit) return;
  loop_started_ = Clock::now();
  const double down = seconds_since(down_since_);
  lock.unlock();
  log_->warn("MQTT: no connection to {} for {:.0f} s; starting the network thread again",
             settings_.broker_text(), down);
  connection_->restart_loop();
  lock.lock();
}

void MqttPublisher::on_connected() {
  bool first = false;
  double down = 0;
  std::size_t waiting = 0;
  {
    const std::lock_guard lock(mutex_);
    connected_ = true;
    resending_ = inflight_ > 0;
    first = !ever_connected_;
    ever_connected_ = true;
    last_refusal_ = 0;
    down = seconds_since(down_since_);
    waiting = queue_.size() + inflight_;
    counters_.connected.store(true);
    counters_.connections.fetch_add(1);
  }
  changed_.notify_all();
  if (first) {
    log_->info("MQTT: connected to {}", settings_.broker_text());
  } else {
    log_->info("MQTT: connected to {} again after {:.1f} s; {} lines waiting",
               settings_.broker_text(), down, waiting);
  }
}

void MqttPublisher::on_refused(int reason, const std::string& text) {
  {
    const std::lock_guard lock(mutex_);
    if (reason == last_refusal_) return;
    last_refusal_ = reason;
  }
  log_->error("MQTT: {} refused the connection: {}; trying again with backoff",
              settings_.broker_text(), text);
}

void MqttPublisher::on_disconnected(int rc, const std::string& text) {
  if (rc == 0) return;  // asked for by finish()
  std::size_t waiting = 0;
  {
    const std::lock_guard lock(mutex_);
    // A connection that never completed (the broker refused it): said by on_refused().
    if (!connected_) return;
    connected_ = false;
    down_since_ = Clock::now();
    counters_.connected.store(false);
    // QoS 0 messages libmosquitto had not written yet are discarded with the connection;
    // QoS 1 and 2 ones it keeps and sends again after reconnecting.
    if (settings_.qos == 0) {
      counters_.failed.fetch_add(inflight_);
      inflight_ = 0;
    }
    update_queued();
    waiting = queue_.size() + inflight_;
  }
  log_->warn(
      "MQTT: lost the connection to {} ({}); reconnecting with backoff {}..{} s, {} lines "
      "waiting, at most {} kept",
      settings_.broker_text(), text, settings_.reconnect_initial_s, settings_.reconnect_max_s,
      waiting, settings_.queue);
}

void MqttPublisher::on_published() {
  {
    const std::lock_guard lock(mutex_);
    if (inflight_ > 0) --inflight_;
    if (inflight_ == 0) resending_ = false;
    update_queued();
  }
  counters_.published.fetch_add(1, std::memory_order_relaxed);
  changed_.notify_all();
}

void MqttPublisher::finish(std::chrono::milliseconds drain, std::deque<std::string>* leftover) {
  bool was_connected = false;
  {
    std::unique_lock lock(mutex_);
    if (finished_) return;
    finished_ = true;
    accepting_ = false;
    changed_.wait_for(lock, drain,
                      [this] { return !connected_ || (queue_.empty() && inflight_ == 0); });
    stopping_ = true;
  }
  changed_.notify_all();
  if (feeder_.joinable()) feeder_.join();
  {
    const std::lock_guard lock(mutex_);
    was_connected = connected_;
  }
  if (connection_) connection_->stop(was_connected);  // no callbacks after this
  std::size_t unsent = 0;
  {
    const std::lock_guard lock(mutex_);
    std::deque<std::string> rest = queue_.take_all();
    if (leftover != nullptr) {
      *leftover = std::move(rest);
    } else {
      unsent += rest.size();
    }
    unsent += inflight_;
    inflight_ = 0;
    connected_ = false;
    counters_.failed.fetch_add(unsent);
    counters_.queued.store(leftover != nullptr ? leftover->size() : 0);
    counters_.connected.store(false);
  }
  if (unsent > 0) {
    log_->warn("MQTT: stopped with {} detections lines not confirmed by {} (counted as failed)",
               unsent, settings_.broker_text());
  }
}

}  // namespace starsift::daemon
