// SPDX-License-Identifier: LGPL-2.1-or-later
// One client connection to an MQTT broker through libmosquitto (Debian libmosquitto1): the
// client made from MqttPublisherSettings (MQTT 3.1.1, clean session, credentials, TLS,
// TCP_NODELAY), libmosquitto's own network thread (mosquitto_loop_start) that connects,
// keeps the connection alive and reconnects with exponential backoff
// (mosquitto_reconnect_delay_set), and its events handed to an Events object. It knows
// nothing of queues: MqttPublisher decides what to hand it and when.
//
// Events are called on libmosquitto's network thread, with libmosquitto's locks held: they
// must not call publish() while holding a lock that publish()'s caller holds too.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>

#include "daemon/publish/mqtt_settings.hpp"

struct mosquitto;

namespace starsift::daemon {

class MqttConnection {
 public:
  class Events {
   public:
    virtual void on_connected() = 0;
    // The broker answered CONNECT with a refusal (bad credentials, a client id it refuses).
    virtual void on_refused(int reason, const std::string& text) = 0;
    // The connection ended; `rc` 0 when this side asked for it.
    virtual void on_disconnected(int rc, const std::string& text) = 0;
    // The broker acknowledged a QoS 1 or 2 message (QoS 0: it was written to the socket).
    virtual void on_published() = 0;

   protected:
    ~Events() = default;
  };

  // The client, configured, not connected yet. Throws Error when libmosquitto refuses a
  // setting (a TLS file it cannot load).
  MqttConnection(const MqttPublisherSettings& settings, Events& events);
  ~MqttConnection();  // stop()
  MqttConnection(const MqttConnection&) = delete;
  MqttConnection& operator=(const MqttConnection&) = delete;

  // Starts connecting and the network thread, which reconnects from then on. Resolving the
  // broker's name may block for the resolver's timeout: not for the main loop.
  void start();
  // Hands `payload` to libmosquitto for the settings' topic and QoS: MOSQ_ERR_SUCCESS, or
  // its error (MOSQ_ERR_NO_CONN while disconnected). Never waits on the network: the
  // network thread writes it.
  int publish(const std::string& payload);
  // The network thread cancelled and started again. libmosquitto ends it by itself after
  // errors it counts fatal (a TLS handshake that failed, a protocol error): without this the
  // client would never reconnect.
  void restart_loop();
  // DISCONNECT sent (when `connected`) and the network thread ended. Idempotent.
  void stop(bool connected);

  // libmosquitto's text for an error code.
  static std::string error_text(int rc);

 private:
  static void on_connect(mosquitto*, void* self, int rc);
  static void on_disconnect(mosquitto*, void* self, int rc);
  static void on_publish(mosquitto*, void* self, int mid);

  MqttPublisherSettings settings_;
  Events& events_;
  mosquitto* client_ = nullptr;
  bool loop_running_ = false;
  // Set by on_disconnect: stop() waits for it before cancelling the network thread, so
  // DISCONNECT leaves and the thread ends outside any callback.
  std::mutex disconnect_mutex_;
  std::condition_variable disconnect_seen_;
  bool disconnected_ = false;
};

}  // namespace starsift::daemon
