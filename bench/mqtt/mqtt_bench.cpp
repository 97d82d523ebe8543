// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift-bench-mqtt: what publishing detections to a local mosquitto costs and takes
// (docs/publishing.md, "Measured"; bench/mqtt_sweep.sh runs it and writes
// bench/results/mqtt/).
//
//   starsift-bench-mqtt publish --port P [--publishers N] [--rate R] [--seconds S]
//                               [--bytes B] [--queue Q] [--qos 0|1|2]
//       N of starsiftd's own publishers (MqttPublisher, each its own connection), each pushing
//       R lines a second of B bytes for S seconds, as N pipelines would; one subscriber in
//       this process (libmosquitto, QoS of --qos) receives them. Prints one JSON line: what
//       was offered, published (confirmed), dropped, failed, received, and the latency from
//       push() to the subscriber (each line carries its push time).
//
//   starsift-bench-mqtt listen --port P --topic T [--count C] [--seconds S]
//       Subscribes to T and, for each message, takes its "utc" (a detections line's frame
//       time) from now: starsiftd's frame-to-subscriber latency. Prints one JSON line.
#include <mosquitto.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "daemon/publish/mqtt_publisher.hpp"

using namespace starsift::daemon;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string mode;
  int port = 1883;
  int publishers = 1;
  double rate = 25;
  double seconds = 10;
  std::size_t bytes = 1000;
  int queue = 10000;
  int qos = 1;
  std::string topic = "starsift/#";
  long count = 0;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "starsift-bench-mqtt: %s\n"
               "usage: starsift-bench-mqtt publish --port P [--publishers N] [--rate R] "
               "[--seconds S] [--bytes B] [--queue Q] [--qos 0|1|2]\n"
               "       starsift-bench-mqtt listen --port P --topic T [--count C] [--seconds "
               "S]\n",
               why);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  if (argc < 2) usage("a mode is required: publish or listen");
  Options o;
  o.mode = argv[1];
  if (o.mode != "publish" && o.mode != "listen") usage("unknown mode");
  for (int i = 2; i < argc; i += 2) {
    if (i + 1 >= argc) usage("an option without its value");
    const std::string key = argv[i];
    const char* v = argv[i + 1];
    if (key == "--port")
      o.port = std::atoi(v);
    else if (key == "--publishers")
      o.publishers = std::atoi(v);
    else if (key == "--rate")
      o.rate = std::atof(v);
    else if (key == "--seconds")
      o.seconds = std::atof(v);
    else if (key == "--bytes")
      o.bytes = static_cast<std::size_t>(std::atol(v));
    else if (key == "--queue")
      o.queue = std::atoi(v);
    else if (key == "--qos")
      o.qos = std::atoi(v);
    else if (key == "--topic")
      o.topic = v;
    else if (key == "--count")
      o.count = std::atol(v);
    else
      usage(("unknown option " + key).c_str());
  }
  if (o.publishers < 1 || o.rate <= 0 || o.seconds <= 0 || o.qos < 0 || o.qos > 2) {
    usage("publishers >= 1, rate > 0, seconds > 0, qos 0..2");
  }
  return o;
}

std::int64_t steady_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch())
      .count();
}

std::int64_t utc_us() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

// "2026-11-25T01:30:00.123456Z" -> µs since the epoch; -1 when it is not that.
std::int64_t parse_utc(const char* text) {
  int y, mo, d, h, mi, s, us;
  if (std::sscanf(text, "%4d-%2d-%2dT%2d:%2d:%2d.%6dZ", &y, &mo, &d, &h, &mi, &s, &us) != 7) {
    return -1;
  }
  tm t{};
  t.tm_year = y - 1900;
  t.tm_mon = mo - 1;
  t.tm_mday = d;
  t.tm_hour = h;
  t.tm_min = mi;
  t.tm_sec = s;
  return static_cast<std::int64_t>(timegm(&t)) * 1000000 + us;
}

// A subscriber on its own libmosquitto client and thread; `on_message` sees each payload.
class Subscriber {
 public:
  using Handler = void (*)(Subscriber&, const char* payload, int length);
  Subscriber(int port, const std::string& topic, int qos, Handler handler)
      : topic_(topic), qos_(qos), handler_(handler) {
    client_ = mosquitto_new(nullptr, true, this);
    mosquitto_int_option(client_, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311);
    mosquitto_int_option(client_, MOSQ_OPT_TCP_NODELAY, 1);
    mosquitto_connect_callback_set(client_, [](mosquitto* m, void* self, int rc) {
      auto* s = static_cast<Subscriber*>(self);
      if (rc == 0) mosquitto_subscribe(m, nullptr, s->topic_.c_str(), s->qos_);
    });
    mosquitto_subscribe_callback_set(client_, [](mosquitto*, void* self, int, int, const int*) {
      static_cast<Subscriber*>(self)->subscribed = true;
    });
    mosquitto_message_callback_set(client_, [](mosquitto*, void* self, const mosquitto_message* m) {
      auto* s = static_cast<Subscriber*>(self);
      s->handler_(*s, static_cast<const char*>(m->payload), m->payloadlen);
    });
    if (mosquitto_connect(client_, "127.0.0.1", port, 60) != MOSQ_ERR_SUCCESS) {
      std::fprintf(stderr, "starsift-bench-mqtt: cannot connect to 127.0.0.1:%d\n", port);
      std::exit(1);
    }
    mosquitto_loop_start(client_);
    for (int i = 0; i < 500 && !subscribed; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ~Subscriber() {
    mosquitto_disconnect(client_);
    mosquitto_loop_stop(client_, false);
    mosquitto_destroy(client_);
  }

  std::atomic<bool> subscribed{false};
  std::atomic<long> received{0};
  std::mutex mutex;
  std::vector<double> latency_ms;

 private:
  mosquitto* client_ = nullptr;
  std::string topic_;
  int qos_;
  Handler handler_;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  const std::size_t i = std::min(v.size() - 1, static_cast<std::size_t>(p * (v.size() - 1) + 0.5));
  return v[i];
}

void print_latency(const std::vector<double>& ms) {
  std::printf("\"latency_ms\":{\"n\":%zu,\"median\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"max\":%.3f}",
              ms.size(), percentile(ms, 0.5), percentile(ms, 0.9), percentile(ms, 0.99),
              ms.empty() ? -1.0 : *std::max_element(ms.begin(), ms.end()));
}

// Lines of `bytes` bytes that look like detections lines and carry their push time.
std::string line_for(std::int64_t pushed_us, long n, std::size_t bytes) {
  std::string line = "{\"t_us\":" + std::to_string(pushed_us) + ",\"frame\":" + std::to_string(n) +
                     ",\"objects\":[";
  while (line.size() + 80 < bytes) {
    line += "{\"x\":512.25,\"y\":311.75,\"flux\":1234.5,\"peak\":88.1,\"a\":1.9,\"b\":1.7},";
  }
  if (line.back() == ',') line.pop_back();
  line += "]}";
  return line;
}

int publish(const Options& o) {
  Subscriber sub(o.port, "bench/#", o.qos, [](Subscriber& s, const char* p, int n) {
    const std::int64_t now = steady_us();
    std::int64_t t = 0;
    if (n > 8 && std::sscanf(std::string(p, std::min(n, 40)).c_str(), "{\"t_us\":%ld", &t) == 1) {
      const std::lock_guard lock(s.mutex);
      s.latency_ms.push_back(static_cast<double>(now - t) * 1e-3);
    }
    s.received.fetch_add(1);
  });
  std::vector<std::unique_ptr<PublishCounters>> counters;
  std::vector<std::unique_ptr<MqttPublisher>> publishers;
  for (int i = 0; i < o.publishers; ++i) {
    MqttPublisherSettings s;
    s.host = "127.0.0.1";
    s.port = o.port;
    s.topic = "bench/host" + std::to_string(i) + "/cam/detections";
    s.client_id = "starsift-bench-" + std::to_string(i);
    s.qos = o.qos;
    s.queue = static_cast<std::size_t>(o.queue);
    counters.push_back(std::make_unique<PublishCounters>());
    publishers.push_back(std::make_unique<MqttPublisher>(s, *counters.back(), nullptr));
  }
  for (int i = 0; i < 500; ++i) {
    bool all = true;
    for (auto& c : counters) all = all && c->connected.load();
    if (all) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // Each publisher pushes on a thread of its own at its rate, as each pipeline's detections
  // writer would; the push time is read just before push().
  const long per_publisher = static_cast<long>(o.rate * o.seconds);
  std::vector<double> push_us;  // each push()'s time, all publishers
  std::mutex push_mutex;
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int i = 0; i < o.publishers; ++i) {
    threads.emplace_back([&, i] {
      std::vector<double> mine;
      mine.reserve(static_cast<std::size_t>(per_publisher));
      for (long n = 0; n < per_publisher; ++n) {
        std::this_thread::sleep_until(
            start + std::chrono::microseconds(static_cast<std::int64_t>(n * 1e6 / o.rate)));
        const std::int64_t t = steady_us();
        std::string line = line_for(t, n, o.bytes);
        const std::int64_t before_push = steady_us();
        publishers[i]->push(std::move(line));
        mine.push_back(static_cast<double>(steady_us() - before_push));
      }
      const std::lock_guard lock(push_mutex);
      push_us.insert(push_us.end(), mine.begin(), mine.end());
    });
  }
  for (auto& t : threads) t.join();
  const double push_s = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& p : publishers) p->finish(std::chrono::seconds(10));
  // The subscriber's last deliveries: until nothing more comes for a second.
  for (long last = -1; last != sub.received.load();) {
    last = sub.received.load();
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  std::uint64_t published = 0, dropped = 0, failed = 0;
  for (auto& c : counters) {
    published += c->published;
    dropped += c->dropped;
    failed += c->failed;
  }
  const long offered = per_publisher * o.publishers;
  std::vector<double> latency;
  {
    const std::lock_guard lock(sub.mutex);
    latency = sub.latency_ms;
  }
  std::printf(
      "{\"mode\":\"publish\",\"publishers\":%d,\"rate_each\":%.1f,\"offered_per_s\":%.1f,"
      "\"achieved_per_s\":%.1f,\"seconds\":%.1f,\"bytes\":%zu,\"qos\":%d,\"queue\":%d,"
      "\"offered\":%ld,\"published\":%llu,\"dropped\":%llu,\"failed\":%llu,\"received\":%ld,"
      "\"push_us\":{\"median\":%.1f,\"p99\":%.1f,\"max\":%.1f},",
      o.publishers, o.rate, o.rate * o.publishers, static_cast<double>(offered) / push_s, push_s,
      o.bytes, o.qos, o.queue, offered, static_cast<unsigned long long>(published),
      static_cast<unsigned long long>(dropped), static_cast<unsigned long long>(failed),
      sub.received.load(), percentile(push_us, 0.5), percentile(push_us, 0.99),
      push_us.empty() ? -1.0 : *std::max_element(push_us.begin(), push_us.end()));
  print_latency(latency);
  std::printf("}\n");
  return 0;
}

int listen(const Options& o) {
  Subscriber sub(o.port, o.topic, 1, [](Subscriber& s, const char* p, int n) {
    const std::int64_t now = utc_us();
    const std::string text(p, static_cast<std::size_t>(n));
    const auto at = text.find("\"utc\":\"");
    if (at != std::string::npos) {
      const std::int64_t utc = parse_utc(text.c_str() + at + 7);
      if (utc > 0) {
        const std::lock_guard lock(s.mutex);
        s.latency_ms.push_back(static_cast<double>(now - utc) * 1e-3);
      }
    }
    s.received.fetch_add(1);
  });
  const auto end = Clock::now() + std::chrono::duration<double>(o.seconds);
  while (Clock::now() < end && (o.count == 0 || sub.received.load() < o.count)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::vector<double> latency;
  {
    const std::lock_guard lock(sub.mutex);
    latency = sub.latency_ms;
  }
  std::printf("{\"mode\":\"listen\",\"topic\":\"%s\",\"received\":%ld,", o.topic.c_str(),
              sub.received.load());
  print_latency(latency);
  std::printf("}\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  spdlog::set_level(spdlog::level::warn);
  mosquitto_lib_init();
  const int rc = o.mode == "publish" ? publish(o) : listen(o);
  return rc;
}
