// SPDX-License-Identifier: LGPL-2.1-or-later
// What one pipeline's MQTT publisher needs, from the config's `mqtt` section and the
// pipeline's name: the broker, credentials, TLS files, the pipeline's topic and client id,
// QoS, queue and backoff. Pure: tested without a broker.
//
//   topic      <topic-prefix>/<host-name>/<pipeline>/detections   starsift/roof/east/detections
//   client id  starsift-<host-name>-<pipeline>                    starsift-roof-east
//
// A topic per host and pipeline lets a consumer subscribe to one camera, one host
// (starsift/roof/#) or the whole network (starsift/#), and keeps each pipeline's messages in
// order (MQTT orders messages per publisher and topic). The client id must be unique at the
// broker, which disconnects the older of two clients with the same id: two daemons on hosts
// with the same name need different `host-name`s.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "daemon/config/daemon_config.hpp"

namespace starsift::daemon {

struct MqttPublisherSettings {
  std::string host;
  int port = MqttConfig::kDefaultPort;
  std::string username;  // empty: none
  std::string password;
  std::filesystem::path ca_file;  // empty: no TLS
  std::filesystem::path cert_file;
  std::filesystem::path key_file;
  std::string topic;
  std::string client_id;
  int qos = 1;
  std::size_t queue = 10000;
  int keepalive_s = 60;
  int reconnect_initial_s = 1;
  int reconnect_max_s = 10;

  // "mqtt://host:port" or "mqtts://host:port", for the log (never the password).
  std::string broker_text() const;
  bool operator==(const MqttPublisherSettings&) const = default;
};

// The settings of pipeline `pipeline`'s publisher under `broker`; an empty host-name is
// system_host_name().
MqttPublisherSettings mqtt_publisher_settings(const MqttConfig& broker, std::string_view pipeline);

std::string mqtt_topic(std::string_view prefix, std::string_view host_name,
                       std::string_view pipeline);
std::string mqtt_client_id(std::string_view host_name, std::string_view pipeline);

// The system's host name (gethostname(2)) as a topic level: characters other than A-Z, a-z,
// 0-9, '.', '_' and '-' become '-', at most 64 kept; "localhost" when there is none.
std::string system_host_name();

}  // namespace starsift::daemon
