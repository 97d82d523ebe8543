// SPDX-License-Identifier: LGPL-2.1-or-later
// The top-level `mqtt` section and each pipeline's `outputs.mqtt`: defaults, every key read
// into its field, TLS files read from the config's directory, and every refusal with its
// place, key path and what is allowed.
#include <catch2/catch.hpp>

#include "config_support.hpp"

using namespace starsift::daemon;
using namespace starsift::daemon::test;

namespace {

DaemonConfig parsed(const std::string& yaml, const std::filesystem::path& base = {}) {
  INFO("YAML:\n" << yaml);
  try {
    return parse_daemon_config(yaml, kOrigin, base);
  } catch (const ConfigErrors& e) {
    FAIL("refused:\n" << e.what());
  }
  return {};
}

// The valid pipeline "sky" on lines 1..4, then `more` from line 5.
std::string sky_then(const std::string& more) {
  return kSkyPipeline + more;
}

}  // namespace

TEST_CASE("mqtt: absent, nothing is published; given, its defaults", "[daemon][config][mqtt]") {
  SECTION("no section") {
    const DaemonConfig config = parsed(kSkyPipeline);
    CHECK_FALSE(config.mqtt.has_value());
    CHECK(config.pipelines[0].outputs.mqtt.enabled);  // on, but without a broker it means nothing
  }
  SECTION("a host alone") {
    const DaemonConfig config = parsed(sky_then("mqtt: {host: broker.example.org}\n"));
    REQUIRE(config.mqtt.has_value());
    const MqttConfig& m = *config.mqtt;
    CHECK(m.host == "broker.example.org");
    CHECK(m.port == 1883);
    CHECK(m.username.empty());
    CHECK(m.password.empty());
    CHECK_FALSE(m.tls.enabled());
    CHECK(m.topic_prefix == "starsift");
    CHECK(m.host_name.empty());
    CHECK(m.qos == 1);
    CHECK(m.queue == 10000);
    CHECK(m.keepalive_s == 60);
    CHECK(m.reconnect.initial_s == 1);
    CHECK(m.reconnect.max_s == 10);
  }
  SECTION("IPv4 and IPv6 addresses") {
    CHECK(parsed(sky_then("mqtt: {host: 127.0.0.1}\n")).mqtt->host == "127.0.0.1");
    CHECK(parsed(sky_then("mqtt: {host: '::1'}\n")).mqtt->host == "::1");
  }
}

TEST_CASE("mqtt: every key is read into its field", "[daemon][config][mqtt]") {
  TempDir dir;
  dir.write("certs/ca.pem", "-----BEGIN CERTIFICATE-----\n");
  dir.write("certs/host.pem", "-----BEGIN CERTIFICATE-----\n");
  dir.write("certs/host.key", "-----BEGIN PRIVATE KEY-----\n");
  const DaemonConfig config = parsed(sky_then(R"(mqtt:
  host: broker.lan
  port: 18883
  username: roof
  password: "s3cret: yes"
  tls: {ca-file: certs/ca.pem, cert-file: certs/host.pem, key-file: certs/host.key}
  topic-prefix: network/site-a
  host-name: Roof-East.01
  qos: 2
  queue: 500
  keepalive-s: 20
  reconnect: {initial-s: 2, max-s: 120}
)"),
                                     dir.path());
  REQUIRE(config.mqtt.has_value());
  const MqttConfig& m = *config.mqtt;
  CHECK(m.host == "broker.lan");
  CHECK(m.port == 18883);
  CHECK(m.username == "roof");
  CHECK(m.password == "s3cret: yes");
  CHECK(m.tls.ca_file == dir.path() / "certs/ca.pem");
  CHECK(m.tls.cert_file == dir.path() / "certs/host.pem");
  CHECK(m.tls.key_file == dir.path() / "certs/host.key");
  CHECK(m.topic_prefix == "network/site-a");
  CHECK(m.host_name == "Roof-East.01");
  CHECK(m.qos == 2);
  CHECK(m.queue == 500);
  CHECK(m.keepalive_s == 20);
  CHECK(m.reconnect.initial_s == 2);
  CHECK(m.reconnect.max_s == 120);
}

TEST_CASE("mqtt: TLS without a port means MQTT's TLS port", "[daemon][config][mqtt]") {
  TempDir dir;
  dir.write("ca.pem", "-----BEGIN CERTIFICATE-----\n");
  CHECK(parsed(sky_then("mqtt: {host: b, tls: {ca-file: ca.pem}}\n"), dir.path()).mqtt->port ==
        8883);
  CHECK(parsed(sky_then("mqtt: {host: b, port: 9000, tls: {ca-file: ca.pem}}\n"), dir.path())
            .mqtt->port == 9000);
}

TEST_CASE("outputs.mqtt turns one pipeline's publishing off, and a reload sees it",
          "[daemon][config][mqtt]") {
  const std::string two = R"(mqtt: {host: 127.0.0.1}
pipelines:
  - name: east
    source: {sky: }
    chain: [{whiten: }, {detect: }]
  - name: west
    source: {sky: }
    chain: [{whiten: }, {detect: }]
    outputs: {mqtt: {enabled: false}}
)";
  const DaemonConfig config = parsed(two);
  CHECK(config.pipelines[0].outputs.mqtt.enabled);
  CHECK_FALSE(config.pipelines[1].outputs.mqtt.enabled);
  // Equality tells the changed pipeline, and a changed broker, apart.
  DaemonConfig other = config;
  other.pipelines[1].outputs.mqtt.enabled = true;
  CHECK(other.pipelines[0] == config.pipelines[0]);
  CHECK_FALSE(other.pipelines[1] == config.pipelines[1]);
  other = config;
  other.mqtt->queue = 5;
  CHECK_FALSE(other == config);
  CHECK(other.pipelines == config.pipelines);
}

TEST_CASE("mqtt: every mistake with its place", "[daemon][config][mqtt][errors]") {
  SECTION("no host") {
    require_refused(sky_then("mqtt: {port: 1883}\n"),
                    {"cfg.yaml:5:7", "mqtt.host", "missing", "the broker's host name"});
  }
  SECTION("a host that is no host name") {
    require_refused(sky_then("mqtt: {host: 'mqtt://broker'}\n"),
                    {"cfg.yaml:5:14", "mqtt.host", "'mqtt://broker' is not a host name or IP",
                     "broker.example.org"});
  }
  SECTION("an unknown key, with the key meant") {
    require_refused(sky_then("mqtt: {host: b, topic_prefix: x}\n"),
                    {"cfg.yaml:5:17", "mqtt",
                     "unknown key 'topic_prefix' (did you mean "
                     "'topic-prefix'?)",
                     "host, port, username, password, tls, topic-prefix"});
  }
  SECTION("a port out of range") {
    require_refused(sky_then("mqtt: {host: b, port: 70000}\n"),
                    {"cfg.yaml:5:23", "mqtt.port", "70000 is not allowed", "1..65535"});
  }
  SECTION("qos 3") {
    require_refused(sky_then("mqtt: {host: b, qos: 3}\n"),
                    {"cfg.yaml:5:22", "mqtt.qos", "3 is not allowed", "1 (at least once)"});
  }
  SECTION("a queue of nothing") {
    require_refused(sky_then("mqtt: {host: b, queue: 0}\n"),
                    {"cfg.yaml:5:24", "mqtt.queue", "0 is not allowed", "1..1000000 messages"});
  }
  SECTION("a keepalive libmosquitto refuses") {
    require_refused(sky_then("mqtt: {host: b, keepalive-s: 2}\n"),
                    {"cfg.yaml:5:30", "mqtt.keepalive-s", "2 is not allowed", "5..3600"});
  }
  SECTION("a password without a username") {
    require_refused(sky_then("mqtt: {host: b, password: x}\n"),
                    {"cfg.yaml:5:27", "mqtt.password", "a password without a username",
                     "username and password together"});
  }
  SECTION("a wildcard in the topic prefix") {
    require_refused(sky_then("mqtt: {host: b, topic-prefix: 'sites/+'}\n"),
                    {"cfg.yaml:5:31", "mqtt.topic-prefix", "'sites/+' is not a topic prefix",
                     "without '+', '#'"});
  }
  SECTION("an empty topic level, a leading '$' or '/'") {
    for (const std::string prefix : {"'a//b'", "'$SYS'", "'/a'", "'a/'"}) {
      const auto problems =
          problems_of(sky_then("mqtt: {host: b, topic-prefix: " + prefix + "}\n"));
      REQUIRE(problems.size() == 1);
      CHECK(problems[0].key == "mqtt.topic-prefix");
    }
  }
  SECTION("a host name with a space") {
    require_refused(
        sky_then("mqtt: {host: b, host-name: 'roof east'}\n"),
        {"cfg.yaml:5:28", "mqtt.host-name", "'roof east' is not allowed", "1 to 64 characters"});
  }
  SECTION("reconnect's max-s below initial-s, and decimals") {
    require_refused(sky_then("mqtt: {host: b, reconnect: {initial-s: 10, max-s: 5}}\n"),
                    {"cfg.yaml:5:51", "mqtt.reconnect.max-s", "5 s is less than initial-s 10 s",
                     "max-s >= initial-s"});
    require_refused(sky_then("mqtt: {host: b, reconnect: {initial-s: 0.5}}\n"),
                    {"cfg.yaml:5:40", "mqtt.reconnect.initial-s", "expected an integer",
                     "whole seconds 1..3600"});
  }
  SECTION("a CA file that is not there, placed where it is named") {
    TempDir dir;
    const std::string yaml = sky_then("mqtt:\n  host: b\n  tls: {ca-file: nowhere/ca.pem}\n");
    INFO(yaml);
    try {
      parse_daemon_config(yaml, kOrigin, dir.path());
      FAIL("accepted");
    } catch (const ConfigErrors& e) {
      REQUIRE(e.problems().size() == 1);
      const ConfigProblem& p = e.problems()[0];
      CHECK(p.where.str() == "cfg.yaml:7:18");
      CHECK(p.key == "mqtt.tls.ca-file");
      CHECK_THAT(p.problem, Catch::Contains((dir.path() / "nowhere/ca.pem").string()));
      CHECK_THAT(p.problem, Catch::Contains("No such file or directory"));
      CHECK_THAT(p.allowed, Catch::Contains("a PEM file this process can read"));
    }
  }
  SECTION("a directory as the CA file") {
    TempDir dir;
    std::filesystem::create_directories(dir.path() / "ca.pem");
    try {
      parse_daemon_config(sky_then("mqtt: {host: b, tls: {ca-file: ca.pem}}\n"), kOrigin,
                          dir.path());
      FAIL("accepted");
    } catch (const ConfigErrors& e) {
      REQUIRE(e.problems().size() == 1);
      CHECK_THAT(e.problems()[0].problem, Catch::Contains("it is not a regular file"));
    }
  }
  SECTION("tls without a CA file, and a certificate without its key") {
    TempDir dir;
    dir.write("host.pem", "x");
    try {
      parse_daemon_config(sky_then("mqtt: {host: b, tls: {cert-file: host.pem}}\n"), kOrigin,
                          dir.path());
      FAIL("accepted");
    } catch (const ConfigErrors& e) {
      REQUIRE(e.problems().size() == 2);
      CHECK(e.problems()[0].key == "mqtt.tls.ca-file");
      CHECK(e.problems()[0].problem == "missing");
      CHECK(e.problems()[1].key == "mqtt.tls.cert-file");
      CHECK_THAT(e.problems()[1].problem, Catch::Contains("cert-file without key-file"));
      CHECK_THAT(e.problems()[1].allowed, Catch::Contains("cert-file and key-file together"));
    }
  }
  SECTION("a pipeline that asks to publish without a broker") {
    require_refused(
        "pipelines:\n  - name: sky\n    source: {sky: }\n    chain: [{detect: }]\n"
        "    outputs: {mqtt: {enabled: true}}\n",
        {"cfg.yaml:5:31", "pipelines[0].outputs.mqtt.enabled",
         "true, but the config has no mqtt section naming a broker", "a top-level 'mqtt:"});
  }
  SECTION("outputs.mqtt written as a plain boolean") {
    require_refused(
        "mqtt: {host: b}\npipelines:\n  - name: sky\n    source: {sky: }\n"
        "    chain: [{detect: }]\n    outputs: {mqtt: false}\n",
        {"cfg.yaml:6:21", "pipelines[0].outputs.mqtt", "expected the MQTT output (a map)",
         "enabled"});
  }
  SECTION("every mistake of the section at once, in file order") {
    const auto problems = problems_of(sky_then("mqtt:\n  host: ''\n  qos: -1\n  queue: many\n"));
    REQUIRE(problems.size() == 3);
    CHECK(problems[0].key == "mqtt.host");
    CHECK(problems[1].key == "mqtt.qos");
    CHECK(problems[2].key == "mqtt.queue");
  }
}
