// SPDX-License-Identifier: LGPL-2.1-or-later
// starsiftd publishing detections to a real mosquitto on 127.0.0.1, read by a real
// mosquitto_sub started before it: the subscriber receives exactly the lines of
// detections.jsonl, in order; with the broker stopped for seconds and started again (same
// port, persistence off) nothing within the queue's bound is lost and the overflow is counted
// (received + dropped == lines written); two daemons as two hosts on one broker, one
// subscriber receiving every detection of both in order per host; a reload that keeps the
// broker keeps the connection, one that changes it reconnects and loses nothing.
#include <signal.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <regex>
#include <string>
#include <thread>

#include "daemon_process.hpp"
#include "test_starsiftd_mqtt_broker.hpp"

using namespace starsift::test;
namespace fs = std::filesystem;

namespace {

// A sky small enough for two CPU cores at 25 fps; no FITS, preview or video, so the lines
// are what matters. `mqtt` is the top-level section's flow map.
std::string config_text(const fs::path& state, int metrics_port, const std::string& mqtt,
                        const std::string& more_pipelines = "") {
  return "state-directory: " + state.string() +
         "\nmetrics: {port: " + std::to_string(metrics_port) +
         "}\nshutdown-timeout-s: 5\nmqtt: " + mqtt + R"(
pipelines:
  - name: sky
    source:
      sky: {width: 160, height: 120, fps: 25, movers: 4, star-density: 200, seed: 3,
            mover-snr-min: 15, mover-snr-max: 30}
    chain: [{whiten: {history: 8}}, {detect: }]
    depth: 2
    outputs: {preview: {every-s: 0}}
)" + more_pipelines;
}

std::string local_broker(int port, const std::string& more = "") {
  return "{host: 127.0.0.1, port: " + std::to_string(port) + ", host-name: testhost" +
         ", reconnect: {initial-s: 1, max-s: 1}" + more + "}";
}

const std::string kTopic = "starsift/testhost/sky/detections";

double scrape(int port, const char* name) {
  return metric(http_get(port, "/metrics").body, name, "sky");
}

// The detections file's lines (one night: the test runs for seconds).
std::vector<std::string> file_lines(const fs::path& state) {
  const auto files = files_ending(state / "sky", ".jsonl");
  REQUIRE(files.size() == 1);
  return text_lines(files[0]);
}

// The summary's MQTT line: published, dropped, failed, unconfirmed.
struct MqttSummary {
  long published = -1, dropped = -1, failed = -1, unconfirmed = -1;
};
MqttSummary mqtt_summary(const std::string& output) {
  static const std::regex line(
      R"(MQTT +(\d+) published, (\d+) dropped \(queue full\), (\d+) failed, (\d+) unconfirmed)");
  std::smatch m;
  MqttSummary s;
  if (std::regex_search(output, m, line)) {
    s = {std::stol(m[1]), std::stol(m[2]), std::stol(m[3]), std::stol(m[4])};
  }
  return s;
}

// SIGTERM, then exit 0.
void stop(DaemonProcess& daemon) {
  daemon.signal(SIGTERM);
  const auto status = daemon.wait_exit(20s);
  REQUIRE(status);
  CHECK(*status == 0);
}

// `part` appears in `whole` in the same order (a subsequence).
bool in_order_within(const std::vector<std::string>& part, const std::vector<std::string>& whole) {
  std::size_t j = 0;
  for (const std::string& p : part) {
    while (j < whole.size() && whole[j] != p) ++j;
    if (j == whole.size()) return false;
    ++j;
  }
  return true;
}

}  // namespace

TEST_CASE("starsiftd publishes each frame's detections line to the broker, in order",
          "[starsiftd][mqtt]") {
  if (!mosquitto_available()) {
    WARN(kMosquittoMissing);
    return;
  }
  TempDir dir;
  BrokerAndSubscriber local(dir.path(), "starsift/#");
  MosquittoBroker& broker = local.broker;
  MqttSubscriber& subscriber = local.subscriber;

  const int port = free_port();
  const fs::path state = dir.path() / "state";
  const fs::path config = dir.path() / "starsiftd.yaml";
  // A second pipeline that does not publish: it writes its files, and nothing else.
  write_file(config, config_text(state, port, local_broker(broker.port()), R"(  - name: quiet
    source: {sky: {width: 64, height: 64, fps: 10, movers: 1}}
    chain: [{whiten: {history: 4}}, {detect: }]
    outputs: {preview: {every-s: 0}, mqtt: {enabled: false}}
)"));
  DaemonProcess daemon({"--config", config.string(), "--summary"}, dir.path() / "starsiftd.log");
  INFO(daemon.output());
  REQUIRE(eventually([&] { return scrape(port, "starsift_mqtt_published_total") >= 50; }, 30s));
  const std::string metrics = http_get(port, "/metrics").body;
  CHECK(metric(metrics, "starsift_json_lines_total", "quiet") > 0);
  CHECK(std::isnan(metric(metrics, "starsift_mqtt_published_total", "quiet")));
  CHECK(scrape(port, "starsift_mqtt_connected") == 1.0);
  CHECK(scrape(port, "starsift_mqtt_connections_total") == 1.0);
  CHECK(scrape(port, "starsift_mqtt_dropped_total") == 0.0);
  stop(daemon);

  const auto lines = file_lines(state);
  REQUIRE(lines.size() >= 50);
  REQUIRE(eventually([&] { return subscriber.payloads(kTopic).size() >= lines.size(); }, 10s));
  const auto received = subscriber.payloads(kTopic);
  CHECK(received.size() == lines.size());
  CHECK(received == lines);  // the same text, byte for byte, in the same order
  // Each message is one frame's record, the file's schema.
  const YAML::Node first = YAML::Load(received.front());
  CHECK(first["frame"].IsScalar());
  CHECK(first["utc"].as<std::string>().size() == 27);
  CHECK(first["objects"].IsSequence());
  CHECK(first["clock"].IsMap());
  const MqttSummary summary = mqtt_summary(daemon.output());
  CHECK(summary.published == static_cast<long>(lines.size()));
  CHECK(summary.dropped == 0);
  CHECK(summary.failed == 0);
  CHECK(summary.unconfirmed == 0);
  for (const MqttMessage& m : subscriber.messages()) {
    CHECK(m.topic.find("quiet") == std::string::npos);
  }
}

TEST_CASE("starsiftd keeps detections while the broker is away, and counts what did not fit",
          "[starsiftd][mqtt]") {
  if (!mosquitto_available()) {
    WARN(kMosquittoMissing);
    return;
  }
  const bool tiny = GENERATE(false, true);
  const int queue = tiny ? 5 : 10000;
  INFO("queue " << queue);
  TempDir dir;
  BrokerAndSubscriber local(dir.path(), "starsift/#");
  MosquittoBroker& broker = local.broker;
  MqttSubscriber& subscriber = local.subscriber;

  const int port = free_port();
  const fs::path state = dir.path() / "state";
  const fs::path config = dir.path() / "starsiftd.yaml";
  write_file(config, config_text(state, port,
                                 local_broker(broker.port(), ", queue: " + std::to_string(queue))));
  DaemonProcess daemon({"--config", config.string(), "--summary"}, dir.path() / "starsiftd.log");
  INFO(daemon.output());
  REQUIRE(eventually([&] { return scrape(port, "starsift_mqtt_published_total") >= 10; }, 30s));

  // The broker away for 3 s: about 75 frames' lines wait, or overflow a queue of 5.
  broker.stop();
  REQUIRE(eventually([&] { return scrape(port, "starsift_mqtt_connected") == 0.0; }, 10s));
  std::this_thread::sleep_for(3s);
  const double waiting = scrape(port, "starsift_mqtt_queued");
  if (tiny) {
    CHECK(waiting <= 5 + 20);  // the queue, and what libmosquitto held when it went
    CHECK(scrape(port, "starsift_mqtt_dropped_total") > 0);
  } else {
    CHECK(waiting > 25);
    CHECK(scrape(port, "starsift_mqtt_dropped_total") == 0);
  }

  // Back on the same port; the publisher is let in once the subscriber is subscribed again.
  broker.start(false);
  REQUIRE(subscriber.wait_subscribed(20s));
  broker.allow_anonymous();
  REQUIRE(eventually([&] { return scrape(port, "starsift_mqtt_connections_total") == 2; }, 20s));
  const double published = scrape(port, "starsift_mqtt_published_total");
  REQUIRE(eventually([&] { return scrape(port, "starsift_mqtt_published_total") > published + 10; },
                     20s));
  stop(daemon);

  const auto lines = file_lines(state);
  const MqttSummary summary = mqtt_summary(daemon.output());
  REQUIRE(summary.published >= 0);
  CHECK(summary.failed == 0);
  CHECK(summary.unconfirmed == 0);
  std::size_t repeats = 0;
  REQUIRE(eventually(
      [&] {
        return first_copies(subscriber.payloads(kTopic), &repeats).size() +
                   static_cast<std::size_t>(summary.dropped) >=
               lines.size();
      },
      10s));
  const auto received = first_copies(subscriber.payloads(kTopic), &repeats);
  CHECK(repeats <= 20);  // at most libmosquitto's window, sent again after the reconnect
  // Every line written is received or counted as dropped.
  CHECK(received.size() + static_cast<std::size_t>(summary.dropped) == lines.size());
  if (tiny) {
    CHECK(summary.dropped > 0);
    CHECK(in_order_within(received, lines));
  } else {
    CHECK(summary.dropped == 0);
    CHECK(received == lines);  // nothing lost, in order
  }
}

TEST_CASE("two hosts publish to one broker; one subscriber receives every detection of both",
          "[starsiftd][mqtt][multi-host]") {
  if (!mosquitto_available()) {
    WARN(kMosquittoMissing);
    return;
  }
  TempDir dir;
  MosquittoBroker broker(dir.path() / "broker", free_port());
  broker.add_user("east", "east-password");
  broker.add_user("west", "west-password");
  broker.start(false);  // no anonymous clients: each host logs in
  MqttSubscriber subscriber(dir.path(), broker.port(), "starsift/#");
  REQUIRE(subscriber.wait_subscribed(10s));

  struct Host {
    std::string name;
    int port;
    fs::path state;
  };
  std::vector<Host> hosts{{"east", free_port(), dir.path() / "east"},
                          {"west", free_port(), dir.path() / "west"}};
  std::vector<std::unique_ptr<DaemonProcess>> daemons;
  for (const Host& h : hosts) {
    const fs::path config = dir.path() / (h.name + ".yaml");
    write_file(config, config_text(h.state, h.port,
                                   "{host: 127.0.0.1, port: " + std::to_string(broker.port()) +
                                       ", host-name: " + h.name + ", username: " + h.name +
                                       ", password: " + h.name +
                                       "-password, topic-prefix: " + "starsift/site-a}"));
    daemons.push_back(std::make_unique<DaemonProcess>(
        std::vector<std::string>{"--config", config.string(), "--summary"},
        dir.path() / (h.name + ".log")));
  }
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    INFO(hosts[i].name << ":\n" << daemons[i]->output());
    REQUIRE(eventually(
        [&] {
          return metric(http_get(hosts[i].port, "/metrics").body, "starsift_mqtt_published_total",
                        "sky") >= 40;
        },
        30s));
  }
  for (auto& d : daemons) stop(*d);

  for (std::size_t i = 0; i < hosts.size(); ++i) {
    INFO(hosts[i].name);
    const std::string topic = "starsift/site-a/" + hosts[i].name + "/sky/detections";
    const auto lines = file_lines(hosts[i].state);
    REQUIRE(lines.size() >= 40);
    REQUIRE(eventually([&] { return subscriber.payloads(topic).size() >= lines.size(); }, 10s));
    CHECK(subscriber.payloads(topic) == lines);
  }
  // One stream, both hosts interleaved as they came.
  std::size_t east = 0, west = 0;
  for (const MqttMessage& m : subscriber.messages()) {
    east += m.topic == "starsift/site-a/east/sky/detections";
    west += m.topic == "starsift/site-a/west/sky/detections";
  }
  CHECK(east >= 40);
  CHECK(west >= 40);
}

TEST_CASE("a reload keeps the broker's connection unless the broker settings change",
          "[starsiftd][mqtt][reload]") {
  if (!mosquitto_available()) {
    WARN(kMosquittoMissing);
    return;
  }
  TempDir dir;
  BrokerAndSubscriber local(dir.path(), "#");
  MosquittoBroker& broker = local.broker;
  MqttSubscriber& subscriber = local.subscriber;

  const int port = free_port();
  const fs::path state = dir.path() / "state";
  const fs::path config = dir.path() / "starsiftd.yaml";
  write_file(config, config_text(state, port, local_broker(broker.port())));
  NotifySocket notify(dir.path() / "notify.sock");
  DaemonProcess daemon({"--config", config.string()}, dir.path() / "starsiftd.log", {&notify, {}});
  INFO(daemon.output());
  REQUIRE(notify.wait_for("READY=1", 30s));
  REQUIRE(eventually([&] { return scrape(port, "starsift_mqtt_published_total") >= 10; }, 30s));

  const auto reload = [&](const std::string& text) {
    write_file(config, text);
    const std::size_t mark = notify.messages().size();
    daemon.signal(SIGHUP);
    const auto reloading = notify.wait_for("RELOADING=1", 10s, mark);
    REQUIRE(reloading);
    REQUIRE(notify.wait_for("READY=1", 10s, *reloading));
  };

  // Another key of the file, the same broker: the same connection.
  std::string text = config_text(state, port, local_broker(broker.port()));
  text.replace(text.find("shutdown-timeout-s: 5"), 21, "shutdown-timeout-s: 6");
  reload(text);
  double published = scrape(port, "starsift_mqtt_published_total");
  REQUIRE(eventually([&] { return scrape(port, "starsift_mqtt_published_total") > published + 10; },
                     20s));
  CHECK(scrape(port, "starsift_mqtt_connections_total") == 1.0);

  // Another topic prefix: a new connection, and from the next line on, the new topic.
  reload(config_text(state, port, local_broker(broker.port(), ", topic-prefix: moved")));
  REQUIRE(eventually([&] { return scrape(port, "starsift_mqtt_connections_total") == 2.0; }, 5s));
  published = scrape(port, "starsift_mqtt_published_total");
  REQUIRE(eventually([&] { return scrape(port, "starsift_mqtt_published_total") > published + 10; },
                     20s));
  CHECK(daemon.output().find("reload: mqtt: the broker settings changed") != std::string::npos);
  CHECK(scrape(port, "starsift_mqtt_dropped_total") == 0.0);
  CHECK(scrape(port, "starsift_mqtt_failed_total") == 0.0);
  stop(daemon);

  // Nothing lost across the change: the old topic's lines, then the new one's, are the file.
  const auto lines = file_lines(state);
  std::vector<std::string> received;
  REQUIRE(eventually(
      [&] {
        received = subscriber.payloads(kTopic);
        const auto moved = subscriber.payloads("moved/testhost/sky/detections");
        received.insert(received.end(), moved.begin(), moved.end());
        return received.size() >= lines.size();
      },
      10s));
  CHECK(!subscriber.payloads("moved/testhost/sky/detections").empty());
  CHECK(received == lines);
}
