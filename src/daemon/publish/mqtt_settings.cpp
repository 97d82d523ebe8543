// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/publish/mqtt_settings.hpp"

#include <unistd.h>

#include <climits>

namespace starsift::daemon {

namespace {

constexpr std::size_t kMaxHostNameLevel = 64;

bool topic_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

}  // namespace

std::string MqttPublisherSettings::broker_text() const {
  const bool v6 = host.find(':') != std::string::npos;
  return std::string(ca_file.empty() ? "mqtt://" : "mqtts://") + (v6 ? "[" : "") + host +
         (v6 ? "]" : "") + ":" + std::to_string(port);
}

std::string mqtt_topic(std::string_view prefix, std::string_view host_name,
                       std::string_view pipeline) {
  std::string topic(prefix);
  topic += '/';
  topic += host_name;
  topic += '/';
  topic += pipeline;
  topic += "/detections";
  return topic;
}

std::string mqtt_client_id(std::string_view host_name, std::string_view pipeline) {
  std::string id = "starsift-";
  id += host_name;
  id += '-';
  id += pipeline;
  return id;
}

std::string system_host_name() {
  char buffer[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buffer, sizeof buffer - 1) != 0 || buffer[0] == '\0') return "localhost";
  std::string name;
  for (const char* c = buffer; *c != '\0' && name.size() < kMaxHostNameLevel; ++c) {
    name += topic_char(*c) ? *c : '-';
  }
  return name;
}

MqttPublisherSettings mqtt_publisher_settings(const MqttConfig& broker, std::string_view pipeline) {
  MqttPublisherSettings s;
  s.host = broker.host;
  s.port = broker.port;
  s.username = broker.username;
  s.password = broker.password;
  s.ca_file = broker.tls.ca_file;
  s.cert_file = broker.tls.cert_file;
  s.key_file = broker.tls.key_file;
  const std::string host_name = broker.host_name.empty() ? system_host_name() : broker.host_name;
  s.topic = mqtt_topic(broker.topic_prefix, host_name, pipeline);
  s.client_id = mqtt_client_id(host_name, pipeline);
  s.qos = broker.qos;
  s.queue = static_cast<std::size_t>(broker.queue);
  s.keepalive_s = broker.keepalive_s;
  s.reconnect_initial_s = broker.reconnect.initial_s;
  s.reconnect_max_s = broker.reconnect.max_s;
  return s;
}

}  // namespace starsift::daemon
