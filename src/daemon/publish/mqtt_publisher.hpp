// SPDX-License-Identifier: LGPL-2.1-or-later
// One pipeline's detections published to an MQTT broker, each frame's JSON line a message on
// the pipeline's topic (mqtt_settings.hpp), without ever making the caller wait on the
// network, and without losing a message uncounted.
//
//   push()        the detections writer's thread: the line joins a bounded queue (the oldest
//                 pushed out and counted as dropped when it is full); returns at once
//   feeder        a thread of this object: hands queued lines to libmosquitto while connected,
//                 at most kInflightWindow unconfirmed at a time, in order
//   network       libmosquitto's own thread (MqttConnection): connects, reconnects with
//                 backoff, writes, and reports acknowledgements, which free the window
//
// Why the window: libmosquitto keeps every QoS 1/2 message it is given until the broker
// acknowledges it, and resends those after a reconnect, but its queue has no bound. So it is
// given only kInflightWindow messages at a time (its own in-flight limit is set to the same),
// and everything else waits in PublishQueue, whose bound is the config's `queue`. While the
// broker is away the window holds at most kInflightWindow messages that libmosquitto resends
// on reconnect (QoS 1: at least once, so a message the broker took just before it went away
// may arrive twice), and the queue holds the newest `queue` lines; memory is bounded by
// (queue + kInflightWindow) lines.
//
// Every line pushed is counted once (PublishCounters): published when the broker confirms
// it, dropped when a full queue pushes it out, failed when libmosquitto refuses it or it is
// still unsent when the publisher stops, and queued meanwhile.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "daemon/publish/mqtt_connection.hpp"
#include "daemon/publish/mqtt_settings.hpp"
#include "daemon/publish/publish_counters.hpp"
#include "daemon/publish/publish_queue.hpp"

namespace spdlog {
class logger;
}

namespace starsift::daemon {

class MqttPublisher final : private MqttConnection::Events {
 public:
  // Messages handed to libmosquitto and not yet confirmed, at most: libmosquitto's own
  // default in-flight limit (MQTT 5's receive maximum is usually larger).
  static constexpr std::size_t kInflightWindow = 20;

  // Starts connecting at once, on the feeder thread. `carried` are lines a publisher this
  // one replaces did not send (a reload that changed the broker), sent first. Never throws:
  // a client libmosquitto refuses to make is logged, and every line pushed counts as failed.
  MqttPublisher(MqttPublisherSettings settings, PublishCounters& counters,
                std::shared_ptr<spdlog::logger> log, std::deque<std::string> carried = {});
  ~MqttPublisher();  // finish(0)
  MqttPublisher(const MqttPublisher&) = delete;
  MqttPublisher& operator=(const MqttPublisher&) = delete;

  // Queues `payload` for the broker. Never waits on the network: a lock held for a queue
  // operation, nothing more.
  void push(std::string payload);

  // Stops publishing. While connected, waits at most `drain` for the queued lines to be
  // confirmed; then disconnects and ends both threads. Lines still queued go to `*leftover`
  // when given (for the publisher that replaces this one), else count as failed; lines
  // libmosquitto held unconfirmed count as failed. Idempotent.
  void finish(std::chrono::milliseconds drain, std::deque<std::string>* leftover = nullptr);

  const MqttPublisherSettings& settings() const noexcept { return settings_; }
  bool connected() const;

 private:
  void run();
  bool sendable() const;
  void send_ready(std::unique_lock<std::mutex>& lock);
  void supervise(std::unique_lock<std::mutex>& lock);
  void update_queued();

  void on_connected() override;
  void on_refused(int reason, const std::string& text) override;
  void on_disconnected(int rc, const std::string& text) override;
  void on_published() override;

  const MqttPublisherSettings settings_;
  PublishCounters& counters_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<MqttConnection> connection_;  // null when libmosquitto refused to make it

  mutable std::mutex mutex_;
  std::condition_variable changed_;  // queue, window, connection or stopping changed
  PublishQueue queue_;
  std::size_t inflight_ = 0;  // handed to libmosquitto, not yet confirmed
  bool connected_ = false;
  // Reconnected with lines in flight: libmosquitto sends those again, but only after
  // on_connected() returns, so new lines wait until they are confirmed (inflight_ == 0), or
  // they would overtake them.
  bool resending_ = false;
  bool accepting_ = true;
  bool stopping_ = false;
  bool finished_ = false;
  bool ever_connected_ = false;
  int last_refusal_ = 0;  // the broker's latest refusal, said once until it changes
  std::chrono::steady_clock::time_point down_since_;
  std::chrono::steady_clock::time_point loop_started_;

  std::thread feeder_;
};

}  // namespace starsift::daemon
