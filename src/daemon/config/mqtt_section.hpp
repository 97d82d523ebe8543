// SPDX-License-Identifier: LGPL-2.1-or-later
// The top-level `mqtt` section: the broker the pipelines' detections are published to
// (docs/publishing.md), its credentials and TLS files, the topics, the queue kept while the
// broker is away, and the reconnect backoff.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include "daemon/config/config_reader.hpp"
#include "daemon/config/daemon_config.hpp"

namespace starsift::daemon {

// Reads `mqtt`; relative TLS paths are taken from `base_directory`, and each TLS file must
// be a regular file this process can read. Records every problem and returns nothing when
// the section is refused.
std::optional<MqttConfig> read_mqtt(ConfigReader& reader, const Value& mqtt,
                                    const std::filesystem::path& base_directory);

// A topic prefix MQTT allows as the start of a topic name to publish on: one or more levels
// separated by '/', none empty, no wildcard ('+', '#'), no NUL, not starting with '$' (the
// broker's own topics), at most kMaxTopicPrefixBytes bytes.
inline constexpr std::size_t kMaxTopicPrefixBytes = 128;
bool is_topic_prefix(std::string_view prefix) noexcept;

// A host name as this host's level in the topics: 1..64 of A-Z, a-z, 0-9, '.', '_' and '-',
// the first a letter or digit.
bool is_mqtt_host_name(std::string_view name) noexcept;

}  // namespace starsift::daemon
