// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/publish/mqtt_connection.hpp"

#include <mosquitto.h>

#include <chrono>
#include <mutex>

#include "pipeline/error.hpp"

namespace starsift::daemon {

namespace {

// mosquitto_lib_init() once per process, before the first client; never cleaned up (a
// client of another pipeline may be alive until exit).
void init_library() {
  static std::once_flag once;
  std::call_once(once, [] { mosquitto_lib_init(); });
}

// How long stop() lets the network thread send DISCONNECT and end by itself.
constexpr std::chrono::milliseconds kDisconnectWait{1000};

void check(int rc, const std::string& what, const std::string& allowed) {
  if (rc != MOSQ_ERR_SUCCESS) {
    throw Error("MQTT: " + what + ": " + MqttConnection::error_text(rc), allowed);
  }
}

}  // namespace

std::string MqttConnection::error_text(int rc) {
  return mosquitto_strerror(rc);
}

MqttConnection::MqttConnection(const MqttPublisherSettings& settings, Events& events)
    : settings_(settings), events_(events) {
  init_library();
  // Clean session: the broker keeps no state for a publisher; what waits while it is away
  // waits in MqttPublisher's bounded queue.
  client_ = mosquitto_new(settings_.client_id.c_str(), true, this);
  if (client_ == nullptr) throw Error("MQTT: cannot make a client: out of memory");
  try {
    check(mosquitto_int_option(client_, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311),
          "protocol version", "MQTT 3.1.1");
    // Detections are small and should leave at once, not wait for Nagle's algorithm.
    check(mosquitto_int_option(client_, MOSQ_OPT_TCP_NODELAY, 1), "TCP_NODELAY", "");
    if (!settings_.username.empty()) {
      check(mosquitto_username_pw_set(
                client_, settings_.username.c_str(),
                settings_.password.empty() ? nullptr : settings_.password.c_str()),
            "username and password", "UTF-8 text");
    }
    if (!settings_.ca_file.empty()) {
      check(mosquitto_tls_set(client_, settings_.ca_file.c_str(), nullptr,
                              settings_.cert_file.empty() ? nullptr : settings_.cert_file.c_str(),
                              settings_.key_file.empty() ? nullptr : settings_.key_file.c_str(),
                              nullptr),
            "TLS files " + settings_.ca_file.string(),
            "readable PEM files: ca-file, and cert-file with key-file (not encrypted)");
    }
    // libmosquitto's "exponential" backoff: the n-th wait is initial * n^2, at most max.
    check(
        mosquitto_reconnect_delay_set(client_, static_cast<unsigned>(settings_.reconnect_initial_s),
                                      static_cast<unsigned>(settings_.reconnect_max_s), true),
        "reconnect delay", "1..3600 s");
    mosquitto_connect_callback_set(client_, &MqttConnection::on_connect);
    mosquitto_disconnect_callback_set(client_, &MqttConnection::on_disconnect);
    mosquitto_publish_callback_set(client_, &MqttConnection::on_publish);
  } catch (...) {
    mosquitto_destroy(client_);
    throw;
  }
}

MqttConnection::~MqttConnection() {
  stop(false);
  mosquitto_destroy(client_);
}

void MqttConnection::start() {
  // A broker that is away now is no error: the network thread tries again with backoff.
  mosquitto_connect_async(client_, settings_.host.c_str(), settings_.port, settings_.keepalive_s);
  if (mosquitto_loop_start(client_) == MOSQ_ERR_SUCCESS) loop_running_ = true;
}

int MqttConnection::publish(const std::string& payload) {
  return mosquitto_publish(client_, nullptr, settings_.topic.c_str(),
                           static_cast<int>(payload.size()), payload.data(), settings_.qos, false);
}

void MqttConnection::restart_loop() {
  if (loop_running_) mosquitto_loop_stop(client_, true);
  loop_running_ = mosquitto_loop_start(client_) == MOSQ_ERR_SUCCESS;
}

void MqttConnection::stop(bool connected) {
  if (!loop_running_) return;
  loop_running_ = false;
  {
    const std::lock_guard lock(disconnect_mutex_);
    disconnected_ = false;
  }
  if (mosquitto_disconnect(client_) == MOSQ_ERR_SUCCESS && connected) {
    // The network thread writes DISCONNECT, reports it and ends by itself.
    std::unique_lock lock(disconnect_mutex_);
    disconnect_seen_.wait_for(lock, kDisconnectWait, [this] { return disconnected_; });
  }
  // Not connected, the thread may sleep in its reconnect backoff for up to max-s, or wait on
  // a broker that does not answer: cancelled (a no-op when it has ended).
  mosquitto_loop_stop(client_, true);
}

void MqttConnection::on_connect(mosquitto*, void* self, int rc) {
  auto* c = static_cast<MqttConnection*>(self);
  if (rc == 0) {
    c->events_.on_connected();
  } else {
    c->events_.on_refused(rc, mosquitto_connack_string(rc));
  }
}

void MqttConnection::on_disconnect(mosquitto*, void* self, int rc) {
  auto* c = static_cast<MqttConnection*>(self);
  c->events_.on_disconnected(rc, error_text(rc));
  const std::lock_guard lock(c->disconnect_mutex_);
  c->disconnected_ = true;
  c->disconnect_seen_.notify_all();
}

void MqttConnection::on_publish(mosquitto*, void* self, int) {
  static_cast<MqttConnection*>(self)->events_.on_published();
}

}  // namespace starsift::daemon
