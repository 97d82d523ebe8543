// SPDX-License-Identifier: LGPL-2.1-or-later
// A real MQTT broker for the publishing tests: Debian's mosquitto started on a free port of
// 127.0.0.1 with a config file of the test's own (persistence off), stopped and started
// again on the same port; and a subscriber, Debian's mosquitto_sub, whose output is read
// back. The tests skip, saying so, where mosquitto is not installed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace starsift::test {

// /usr/sbin/mosquitto, mosquitto_sub, mosquitto_pub and mosquitto_passwd are there.
bool mosquitto_available();
inline constexpr const char* kMosquittoMissing =
    "SKIPPED: /usr/sbin/mosquitto or mosquitto-clients missing (scripts/setup.sh installs them)";

// A process of the tests: started with argv, its stdout and stderr into `output`; SIGKILLed
// when still running at destruction.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& output);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const noexcept { return pid_; }
  void signal(int sig) const;
  // The exit status once it exits within `timeout` (-signal when a signal ended it).
  std::optional<int> wait_exit(std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// Runs argv to its end (at most `timeout`); its exit status, or nothing when it ran over.
std::optional<int> run_to_end(const std::vector<std::string>& argv,
                              const std::filesystem::path& output,
                              std::chrono::milliseconds timeout = std::chrono::seconds(10));

// The user every broker knows, for subscribers and probes; a publisher's user is added with
// add_user().
inline constexpr const char* kSubscriberUser = "sub";
inline constexpr const char* kSubscriberPassword = "sub-password";

class MosquittoBroker {
 public:
  // Files under `dir`; `port` on 127.0.0.1. Not started yet.
  MosquittoBroker(std::filesystem::path dir, int port);
  ~MosquittoBroker();  // stop()

  int port() const noexcept { return port_; }
  // Starts it and waits until it accepts connections. `anonymous`: clients without a user
  // name are let in; without, only the users of the password file.
  void start(bool anonymous = true);
  // SIGTERM, and waits until it has exited (its port is free again).
  void stop();
  // SIGSTOP: connections stay open, nothing is read or acknowledged.
  void freeze();
  // SIGKILL (frozen or not), and waits until it has exited: its clients' connections reset.
  void kill();
  // The config rewritten and read again (SIGHUP): anonymous clients let in from now on.
  void allow_anonymous();
  // A user of the password file (mosquitto_passwd), read at the next start or SIGHUP.
  void add_user(const std::string& user, const std::string& password);
  const std::filesystem::path& log_file() const noexcept { return log_; }

 private:
  void write_config(bool anonymous) const;
  std::filesystem::path dir_, config_, passwords_, log_;
  int port_;
  std::optional<ChildProcess> process_;
};

struct MqttMessage {
  std::string topic;
  std::string payload;
};

// mosquitto_sub -v -q 1 on `topic` as kSubscriberUser; it reconnects and subscribes again
// by itself when the broker comes back.
class MqttSubscriber {
 public:
  static constexpr const char* kProbeTopic = "starsift/probe";

  MqttSubscriber(const std::filesystem::path& dir, int port, const std::string& topic);

  // Every message received so far, in order; probes included.
  std::vector<MqttMessage> messages() const;
  // The payloads received on `topic`, in order.
  std::vector<std::string> payloads(const std::string& topic) const;
  // Publishes probes on kProbeTopic until one comes back, proving the subscription is in
  // place; false after `timeout`.
  bool wait_subscribed(std::chrono::milliseconds timeout);

 private:
  std::filesystem::path dir_, output_;
  int port_;
  int probes_ = 0;
  std::optional<ChildProcess> process_;
};

// What most tests start with: a broker on a free port under `dir`/broker, started, and a
// subscriber to `topic` on it, subscribed (REQUIREd).
struct BrokerAndSubscriber {
  BrokerAndSubscriber(const std::filesystem::path& dir, const std::string& topic);
  MosquittoBroker broker;
  MqttSubscriber subscriber;
};

// The lines of a JSON-lines file as they were written, without their newlines.
std::vector<std::string> text_lines(const std::filesystem::path& path);

// `received` with every message that came before removed: QoS 1 delivers at least once, and
// the messages libmosquitto had in flight when the broker went away are sent again, though
// the broker may have passed them on already. Each detections line is unique (its frame
// number), so a second copy is a repeat. `*repeats` counts them.
std::vector<std::string> first_copies(const std::vector<std::string>& received,
                                      std::size_t* repeats);

}  // namespace starsift::test
