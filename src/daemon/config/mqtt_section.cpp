// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/config/mqtt_section.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace starsift::daemon {

namespace {

constexpr std::string_view kMqttKeys[] = {"host",  "port",         "username",  "password",
                                          "tls",   "topic-prefix", "host-name", "qos",
                                          "queue", "keepalive-s",  "reconnect"};
constexpr std::string_view kTlsKeys[] = {"ca-file", "cert-file", "key-file"};
constexpr std::string_view kReconnectKeys[] = {"initial-s", "max-s"};

constexpr int kMaxReconnectS = 3600;
constexpr int kMinKeepaliveS = 5;  // libmosquitto refuses less
constexpr int kMaxKeepaliveS = 3600;
constexpr std::size_t kMaxHostBytes = 253;          // a DNS name
constexpr std::size_t kMaxCredentialBytes = 65535;  // an MQTT string

// A DNS name: labels of letters, digits and '-', separated by dots.
bool is_dns_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxHostBytes) return false;
  std::size_t label = 0;
  for (const char c : name) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
      continue;
    }
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok || ++label > 63) return false;
  }
  return label > 0;
}

// Why `path` cannot serve as a PEM file, or empty when it can.
std::string unreadable_reason(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "it is not a regular file";
  if (::access(path.c_str(), R_OK) != 0) return std::strerror(errno);
  return {};
}

class MqttReader {
 public:
  MqttReader(ConfigReader& reader, const std::filesystem::path& base_directory)
      : reader_(reader), base_directory_(base_directory) {}

  std::optional<MqttConfig> read(const Value& value) {
    MqttConfig mqtt;
    MapReader map(reader_, value, kMqttKeys, "the MQTT broker settings");
    const std::string host_allowed =
        "the broker's host name (broker.example.org) or IPv4 or IPv6 address";
    bool ok = map.is_map();
    if (const auto v = map.require("host", host_allowed)) {
      if (const auto host = reader_.text(*v, host_allowed)) {
        if (is_ip_address(*host) || is_dns_name(*host)) {
          mqtt.host = *host;
        } else {
          reader_.refuse(*v, quote_value(*host) + " is not a host name or IP address",
                         host_allowed);
          ok = false;
        }
      } else {
        ok = false;
      }
    } else {
      ok = false;
    }
    read_credentials(map, mqtt);
    if (const auto v = map.find("tls")) read_tls(*v, mqtt.tls);
    mqtt.port = mqtt.tls.enabled() ? MqttConfig::kDefaultTlsPort : MqttConfig::kDefaultPort;
    map.read("port", mqtt.port, 1, 65535);
    read_topic_prefix(map, mqtt);
    read_host_name(map, mqtt);
    map.read("qos", mqtt.qos, 0, 2, "0 (at most once), 1 (at least once), 2 (exactly once)");
    map.read("queue", mqtt.queue, 1, MqttConfig::kMaxQueue,
             "1.." + std::to_string(MqttConfig::kMaxQueue) + " messages");
    map.read(
        "keepalive-s", mqtt.keepalive_s, kMinKeepaliveS, kMaxKeepaliveS,
        "whole seconds " + std::to_string(kMinKeepaliveS) + ".." + std::to_string(kMaxKeepaliveS));
    if (const auto v = map.find("reconnect")) read_reconnect(*v, mqtt.reconnect);
    if (!ok) return std::nullopt;
    return mqtt;
  }

 private:
  void read_credentials(MapReader& map, MqttConfig& mqtt) {
    const std::string allowed = "text of 1.." + std::to_string(kMaxCredentialBytes) + " bytes";
    const auto credential = [&](std::string_view key, std::string& field) {
      if (const auto v = map.find(key)) {
        if (const auto text = reader_.text(*v, allowed)) {
          if (text->size() > kMaxCredentialBytes) {
            reader_.refuse(*v, "is " + std::to_string(text->size()) + " bytes long", allowed);
          } else {
            field = *text;
          }
        }
      }
    };
    credential("username", mqtt.username);
    credential("password", mqtt.password);
    // MQTT 3.1.1 (section 3.1.2.9) has no password without a user name.
    if (const auto v = map.find("password"); v && mqtt.username.empty() && !map.find("username")) {
      reader_.refuse(*v, "a password without a username",
                     "username and password together, or a username alone");
    }
  }

  void read_tls(const Value& value, MqttTlsConfig& tls) {
    MapReader map(reader_, value, kTlsKeys, "the TLS settings");
    if (!map.is_map()) return;
    const auto file = [&](std::string_view key, std::filesystem::path& field) {
      const auto v = key == "ca-file"
                         ? map.require(key,
                                       "the PEM file of the certificate authority that "
                                       "signed the broker's certificate")
                         : map.find(key);
      if (!v) return;
      const std::string allowed = "the path of a PEM file this process can read";
      if (const auto text = reader_.text(*v, allowed)) {
        const std::filesystem::path path = resolve_path(base_directory_, *text);
        if (const std::string why = unreadable_reason(path); !why.empty()) {
          reader_.refuse(*v, "cannot read " + quote_value(path.string()) + ": " + why, allowed);
        } else {
          field = path;
        }
      }
    };
    file("ca-file", tls.ca_file);
    file("cert-file", tls.cert_file);
    file("key-file", tls.key_file);
    const auto cert = map.find("cert-file");
    const auto key = map.find("key-file");
    if (cert.has_value() != key.has_value()) {
      const Value& at = cert ? *cert : *key;
      reader_.refuse(at,
                     std::string(cert ? "cert-file" : "key-file") + " without " +
                         (cert ? "key-file" : "cert-file"),
                     "cert-file and key-file together (a client certificate), or neither");
    }
  }

  void read_topic_prefix(MapReader& map, MqttConfig& mqtt) {
    const auto v = map.find("topic-prefix");
    if (!v) return;
    const std::string allowed =
        "1.." + std::to_string(kMaxTopicPrefixBytes) +
        " bytes of topic levels separated by '/', none empty, without '+', '#' or a leading "
        "'$' (e.g. 'starsift' or 'observatory/site-a')";
    if (const auto text = reader_.text(*v, allowed)) {
      if (is_topic_prefix(*text)) {
        mqtt.topic_prefix = *text;
      } else {
        reader_.refuse(*v, quote_value(*text) + " is not a topic prefix", allowed);
      }
    }
  }

  void read_host_name(MapReader& map, MqttConfig& mqtt) {
    const auto v = map.find("host-name");
    if (!v) return;
    const std::string allowed =
        "1 to 64 characters A-Z, a-z, 0-9, '.', '_' and '-', the first a letter or digit (this "
        "host's level in the topics); left out: the system's host name";
    if (const auto text = reader_.text(*v, allowed)) {
      if (is_mqtt_host_name(*text)) {
        mqtt.host_name = *text;
      } else {
        reader_.refuse(*v, quote_value(*text) + " is not allowed", allowed);
      }
    }
  }

  void read_reconnect(const Value& value, MqttReconnectConfig& reconnect) {
    MapReader map(reader_, value, kReconnectKeys, "the reconnect settings");
    const std::string allowed = "whole seconds 1.." + std::to_string(kMaxReconnectS);
    map.read("initial-s", reconnect.initial_s, 1, kMaxReconnectS, allowed);
    map.read("max-s", reconnect.max_s, 1, kMaxReconnectS, allowed);
    if (reconnect.initial_s > reconnect.max_s) {
      const auto max = map.find("max-s");
      const Value& at = max ? *max : value;
      reader_.refuse(at.where, value.child("max-s"),
                     std::to_string(reconnect.max_s) + " s is less than initial-s " +
                         std::to_string(reconnect.initial_s) + " s",
                     "max-s >= initial-s");
    }
  }

  ConfigReader& reader_;
  const std::filesystem::path& base_directory_;
};

}  // namespace

bool is_topic_prefix(std::string_view prefix) noexcept {
  if (prefix.empty() || prefix.size() > kMaxTopicPrefixBytes) return false;
  if (prefix.front() == '$' || prefix.front() == '/' || prefix.back() == '/') return false;
  if (prefix.find("//") != std::string_view::npos) return false;
  for (const char c : prefix) {
    if (c == '+' || c == '#' || c == '\0') return false;
  }
  return true;
}

bool is_mqtt_host_name(std::string_view name) noexcept {
  const auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (name.empty() || name.size() > 64 || !alnum(name.front())) return false;
  for (const char c : name) {
    if (!alnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

std::optional<MqttConfig> read_mqtt(ConfigReader& reader, const Value& mqtt,
                                    const std::filesystem::path& base_directory) {
  return MqttReader(reader, base_directory).read(mqtt);
}

}  // namespace starsift::daemon
