// SPDX-License-Identifier: LGPL-2.1-or-later
// The MQTT publisher alone (src/daemon/publish): its queue and names without a broker, then
// against a real mosquitto on 127.0.0.1 read by a real mosquitto_sub: every line arrives in
// order; with the broker stopped and started again nothing within the queue's bound is lost
// and the overflow is counted; push() never waits on the network; a broker that refuses the
// client, and credentials it accepts; a stop with the broker away ends at once.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>

#include "daemon/publish/mqtt_publisher.hpp"
#include "daemon/publish/publish_queue.hpp"
#include "daemon_process.hpp"
#include "test_starsiftd_mqtt_broker.hpp"

using namespace starsift::daemon;
using namespace starsift::test;
using namespace std::chrono_literals;

namespace {

MqttPublisherSettings local_settings(int port, std::size_t queue) {
  MqttConfig broker;
  broker.host = "127.0.0.1";
  broker.port = port;
  broker.host_name = "testhost";
  broker.queue = static_cast<int>(queue);
  broker.reconnect = {1, 1};  // the tests wait for reconnects: no long backoff
  return mqtt_publisher_settings(broker, "cam");
}

std::vector<std::string> numbered(int from, int to) {
  std::vector<std::string> lines;
  for (int i = from; i < to; ++i) lines.push_back("{\"frame\":" + std::to_string(i) + "}");
  return lines;
}

// Every count adds up: pushed == published + dropped + failed + queued.
void check_balance(const PublishCounters& c) {
  INFO("pushed " << c.pushed << ", published " << c.published << ", dropped " << c.dropped
                 << ", failed " << c.failed << ", queued " << c.queued);
  CHECK(c.pushed.load() ==
        c.published.load() + c.dropped.load() + c.failed.load() + c.queued.load());
}

}  // namespace

TEST_CASE("the publish queue keeps the newest lines and says what it pushed out",
          "[mqtt][publish]") {
  PublishQueue queue(3);
  CHECK(queue.push("a") == 0);
  CHECK(queue.push("b") == 0);
  CHECK(queue.push("c") == 0);
  CHECK(queue.push("d") == 1);  // "a" goes
  CHECK(queue.size() == 3);
  CHECK(queue.pop() == "b");
  CHECK(queue.push_front("b") == 0);  // back where it was
  CHECK(queue.push("e") == 1);        // "b" goes again
  CHECK(queue.push_front("x") == 1);  // full: the oldest of all is the one to go
  const auto all = queue.take_all();
  CHECK(std::vector<std::string>(all.begin(), all.end()) ==
        std::vector<std::string>{"c", "d", "e"});
  CHECK(queue.empty());
  CHECK(PublishQueue(0).capacity() == 1);
}

TEST_CASE("a pipeline's topic and client id come from the host and the pipeline",
          "[mqtt][publish]") {
  MqttConfig broker;
  broker.host = "broker.lan";
  broker.topic_prefix = "network/site-a";
  broker.host_name = "roof";
  const MqttPublisherSettings s = mqtt_publisher_settings(broker, "east");
  CHECK(s.topic == "network/site-a/roof/east/detections");
  CHECK(s.client_id == "starsift-roof-east");
  CHECK(s.broker_text() == "mqtt://broker.lan:1883");
  broker.host_name.clear();  // the system's name
  const MqttPublisherSettings system = mqtt_publisher_settings(broker, "east");
  CHECK(system.topic == "network/site-a/" + system_host_name() + "/east/detections");
  CHECK_FALSE(system_host_name().empty());
  broker.host = "::1";
  broker.tls.ca_file = "/etc/ca.pem";
  broker.port = 8883;
  CHECK(mqtt_publisher_settings(broker, "east").broker_text() == "mqtts://[::1]:8883");
}

TEST_CASE("every line pushed reaches a subscriber, in order", "[mqtt][publish][broker]") {
  if (!mosquitto_available()) {
    WARN(kMosquittoMissing);
    return;
  }
  TempDir dir;
  BrokerAndSubscriber local(dir.path(), "starsift/#");
  MosquittoBroker& broker = local.broker;
  MqttSubscriber& subscriber = local.subscriber;

  PublishCounters counters;
  const MqttPublisherSettings settings = local_settings(broker.port(), 1000);
  MqttPublisher publisher(settings, counters, nullptr);
  REQUIRE(eventually([&] { return counters.connected.load(); }, 10s));
  const auto lines = numbered(0, 500);
  for (const auto& line : lines) publisher.push(line);
  REQUIRE(eventually([&] { return counters.published.load() == lines.size(); }, 20s));
  REQUIRE(
      eventually([&] { return subscriber.payloads(settings.topic).size() >= lines.size(); }, 10s));
  CHECK(subscriber.payloads(settings.topic) == lines);
  CHECK(counters.queued == 0);
  CHECK(counters.dropped == 0);
  CHECK(counters.failed == 0);
  CHECK(counters.connections == 1);
  publisher.finish(2s);
  CHECK_FALSE(counters.connected.load());
  check_balance(counters);
}

TEST_CASE("while the broker is away lines wait in the queue, and what does not fit is counted",
          "[mqtt][publish][broker]") {
  if (!mosquitto_available()) {
    WARN(kMosquittoMissing);
    return;
  }
  const bool tiny = GENERATE(false, true);
  const std::size_t queue = tiny ? 5 : 1000;
  INFO("queue " << queue);
  TempDir dir;
  BrokerAndSubscriber local(dir.path(), "starsift/#");
  MosquittoBroker& broker = local.broker;
  MqttSubscriber& subscriber = local.subscriber;
  PublishCounters counters;
  const MqttPublisherSettings settings = local_settings(broker.port(), queue);
  MqttPublisher publisher(settings, counters, nullptr);
  REQUIRE(eventually([&] { return counters.connected.load(); }, 10s));

  // No more at once than the tiny queue holds: a burst beyond it is overflow too.
  const auto before = numbered(0, 5);
  for (const auto& line : before) publisher.push(line);
  REQUIRE(eventually([&] { return counters.published.load() == before.size(); }, 10s));

  broker.stop();
  REQUIRE(eventually([&] { return !counters.connected.load(); }, 10s));
  // 100 lines while it is away; push() returns at once all the same.
  const auto during = numbered(5, 105);
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& line : during) publisher.push(line);
  const double push_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(push_s < 0.05);
  CHECK(counters.queued == (tiny ? 5u : during.size()));
  CHECK(counters.dropped == (tiny ? during.size() - 5 : 0u));

  // Back, refusing the publisher until the subscriber is in again: a subscriber late for
  // the queue's flush would miss lines no publisher lost.
  broker.start(false);
  REQUIRE(subscriber.wait_subscribed(20s));
  broker.allow_anonymous();
  REQUIRE(eventually([&] { return counters.queued.load() == 0; }, 20s));
  CHECK(counters.connections == 2);
  const auto after = numbered(105, 110);
  for (const auto& line : after) publisher.push(line);
  REQUIRE(eventually([&] { return counters.queued.load() == 0; }, 10s));
  publisher.finish(2s);
  check_balance(counters);
  CHECK(counters.failed == 0);

  std::vector<std::string> expected = before;
  if (tiny) {
    expected.insert(expected.end(), during.end() - 5, during.end());  // the newest five
  } else {
    expected.insert(expected.end(), during.begin(), during.end());
  }
  expected.insert(expected.end(), after.begin(), after.end());
  REQUIRE(eventually([&] { return subscriber.payloads(settings.topic).size() >= expected.size(); },
                     10s));
  std::size_t repeats = 0;
  const auto received = first_copies(subscriber.payloads(settings.topic), &repeats);
  CHECK(received == expected);
  CHECK(repeats <= MqttPublisher::kInflightWindow);
  CHECK(received.size() + counters.dropped.load() == before.size() + during.size() + after.size());
}

TEST_CASE("lines in flight when the broker dies are sent again before the queued ones",
          "[mqtt][publish][broker]") {
  if (!mosquitto_available()) {
    WARN(kMosquittoMissing);
    return;
  }
  TempDir dir;
  BrokerAndSubscriber local(dir.path(), "starsift/#");
  MosquittoBroker& broker = local.broker;
  MqttSubscriber& subscriber = local.subscriber;
  PublishCounters counters;
  const MqttPublisherSettings settings = local_settings(broker.port(), 1000);
  MqttPublisher publisher(settings, counters, nullptr);
  REQUIRE(eventually([&] { return counters.connected.load(); }, 10s));

  // A frozen broker takes lines into its socket and confirms none: 5 in flight, room in the
  // window for more. Killed, it loses what it had not read; 10 more queue meanwhile. On the
  // reconnect libmosquitto sends the 5 again; the 10 must not overtake them.
  broker.freeze();
  const auto first = numbered(0, 5);
  for (const auto& line : first) publisher.push(line);
  std::this_thread::sleep_for(300ms);
  CHECK(counters.queued == 5);
  CHECK(counters.published == 0);
  broker.kill();
  REQUIRE(eventually([&] { return !counters.connected.load(); }, 10s));
  const auto second = numbered(5, 15);
  for (const auto& line : second) publisher.push(line);

  broker.start(false);
  REQUIRE(subscriber.wait_subscribed(20s));
  broker.allow_anonymous();
  REQUIRE(eventually([&] { return counters.queued.load() == 0; }, 20s));
  publisher.finish(2s);
  std::vector<std::string> expected = first;
  expected.insert(expected.end(), second.begin(), second.end());
  REQUIRE(eventually([&] { return subscriber.payloads(settings.topic).size() >= expected.size(); },
                     10s));
  std::size_t repeats = 0;
  CHECK(first_copies(subscriber.payloads(settings.topic), &repeats) == expected);
  CHECK(counters.published == expected.size());
  check_balance(counters);
}

TEST_CASE("a broker that refuses the client: counted as waiting, not published; credentials",
          "[mqtt][publish][broker]") {
  if (!mosquitto_available()) {
    WARN(kMosquittoMissing);
    return;
  }
  TempDir dir;
  MosquittoBroker broker(dir.path() / "broker", free_port());
  broker.add_user("roof", "roof-password");
  broker.start(false);  // no anonymous clients
  MqttSubscriber subscriber(dir.path(), broker.port(), "starsift/#");
  REQUIRE(subscriber.wait_subscribed(10s));

  PublishCounters anonymous_counters;
  MqttPublisherSettings anonymous = local_settings(broker.port(), 100);
  MqttPublisher refused(anonymous, anonymous_counters, nullptr);
  for (const auto& line : numbered(0, 10)) refused.push(line);
  std::this_thread::sleep_for(1500ms);
  CHECK_FALSE(anonymous_counters.connected.load());
  CHECK(anonymous_counters.published == 0);
  CHECK(anonymous_counters.queued == 10);

  PublishCounters counters;
  MqttPublisherSettings user = local_settings(broker.port(), 100);
  user.username = "roof";
  user.password = "roof-password";
  user.client_id = "starsift-testhost-cam-user";
  MqttPublisher accepted(user, counters, nullptr);
  for (const auto& line : numbered(0, 10)) accepted.push(line);
  REQUIRE(eventually([&] { return counters.published.load() == 10; }, 10s));
  REQUIRE(eventually([&] { return subscriber.payloads(user.topic).size() == 10; }, 10s));

  // A stop while the broker refuses: at once, what waited counted as failed.
  const auto t0 = std::chrono::steady_clock::now();
  refused.finish(2s);
  CHECK(std::chrono::steady_clock::now() - t0 < 1500ms);
  CHECK(anonymous_counters.failed == 10);
  check_balance(anonymous_counters);
}

TEST_CASE("a stop with the broker away ends at once, and hands over what waited",
          "[mqtt][publish][broker]") {
  if (!mosquitto_available()) {
    WARN(kMosquittoMissing);
    return;
  }
  PublishCounters counters;
  MqttPublisherSettings settings = local_settings(free_port(), 100);  // nothing listens there
  settings.reconnect_initial_s = 30;
  settings.reconnect_max_s = 30;
  MqttPublisher publisher(settings, counters, nullptr);
  for (const auto& line : numbered(0, 7)) publisher.push(line);
  std::this_thread::sleep_for(300ms);  // the network thread is asleep in its backoff
  std::deque<std::string> leftover;
  const auto t0 = std::chrono::steady_clock::now();
  publisher.finish(5s, &leftover);
  CHECK(std::chrono::steady_clock::now() - t0 < 2s);
  CHECK(leftover.size() == 7);
  CHECK(counters.failed == 0);
  CHECK(counters.queued == 7);  // now the next publisher's
  publisher.push("late");       // after the stop: counted, never silently lost
  CHECK(counters.failed == 1);
}
