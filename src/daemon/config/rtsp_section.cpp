// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/config/rtsp_section.hpp"

#include <algorithm>

#include "daemon/config/config_names.hpp"

namespace starsift::daemon {

namespace {

constexpr std::string_view kRtspKeys[] = {"address",  "port",    "username",
                                          "password", "encoder", "bitrate-kbps"};
constexpr std::string_view kRtspOutputKeys[] = {"streams"};
constexpr std::size_t kMaxCredentialBytes = 255;

// A user name or password of Basic auth: printable ASCII; the user name without ':'.
bool is_credential(std::string_view text, bool user) {
  if (text.empty() || text.size() > kMaxCredentialBytes) return false;
  return std::all_of(text.begin(), text.end(),
                     [user](char c) { return c > ' ' && c < 127 && !(user && c == ':'); });
}

}  // namespace

std::optional<RtspConfig> read_rtsp(ConfigReader& reader, const Value& rtsp) {
  RtspConfig config;
  const std::size_t problems_before = reader.problems().size();
  MapReader map(reader, rtsp, kRtspKeys, "the RTSP server settings");
  read_listen_address(reader, map, config.address);
  map.read("port", config.port, 1, 65535);
  map.read("encoder", config.encoder, video_encoder_names());
  map.read("bitrate-kbps", config.bitrate_kbps, kMinBitrateKbps, kMaxBitrateKbps);
  const auto credential = [&](std::string_view key, bool user, std::string& field) {
    const auto v = map.find(key);
    if (!v) return;
    const std::string allowed = "1.." + std::to_string(kMaxCredentialBytes) +
                                " printable ASCII characters without spaces" +
                                (user ? " or ':'" : "");
    if (const auto text = reader.text(*v, allowed)) {
      if (is_credential(*text, user)) {
        field = *text;
      } else {
        reader.refuse(*v, "is not allowed", allowed);
      }
    }
  };
  credential("username", true, config.username);
  credential("password", false, config.password);
  const auto user = map.find("username");
  const auto password = map.find("password");
  if (user.has_value() != password.has_value()) {
    reader.refuse(user ? *user : *password,
                  std::string(user ? "username without password" : "password without username"),
                  "username and password together (clients then log in with them), or neither "
                  "(anyone who reaches the address may watch)");
  }
  if (reader.problems().size() != problems_before) return std::nullopt;
  return config;
}

std::optional<Value> read_rtsp_output(ConfigReader& reader, const Value& value,
                                      RtspOutput& output) {
  MapReader map(reader, value, kRtspOutputKeys, "the RTSP output");
  const auto streams = map.find("streams");
  if (!streams) return std::nullopt;
  const std::string allowed =
      "a sequence of views, each once: raw, whitened, detections ([] for none)";
  if (!streams->node.IsSequence()) {
    reader.refuse(*streams, "expected a sequence, got " + describe_yaml_value(streams->node),
                  allowed);
    return streams;
  }
  std::vector<StreamView> views;
  for (std::size_t i = 0; i < streams->node.size(); ++i) {
    const Value item = reader.value(streams->node[i], streams->where, streams->item(i));
    const auto view = reader.choice(item, stream_view_names());
    if (!view) continue;
    if (std::find(views.begin(), views.end(), *view) != views.end()) {
      reader.refuse(item, std::string(to_string(*view)) + " is named twice", allowed);
      continue;
    }
    views.push_back(*view);
  }
  output.streams = std::move(views);
  return streams;
}

}  // namespace starsift::daemon
