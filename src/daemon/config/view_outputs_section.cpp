// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/config/view_outputs_section.hpp"

#include <arpa/inet.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "daemon/config/config_names.hpp"

namespace starsift::daemon {

namespace {

constexpr std::string_view kRtpKeys[] = {"view", "host", "port", "encoder", "bitrate-kbps", "ttl"};
constexpr std::string_view kShmKeys[] = {"view", "socket-path"};
constexpr int kMaxTtl = 255;

// 0.0.0.0 and :: name no receiver: nothing could be sent there.
bool is_unspecified(const std::string& address) {
  unsigned char bytes[16] = {};
  if (::inet_pton(AF_INET, address.c_str(), bytes) != 1 &&
      ::inet_pton(AF_INET6, address.c_str(), bytes) != 1) {
    return false;
  }
  for (const unsigned char b : bytes) {
    if (b != 0) return false;
  }
  return true;
}

// The longest path a Unix socket's address holds (sun_path, with its NUL).
constexpr std::size_t kMaxSocketPath = sizeof(sockaddr_un{}.sun_path) - 1;

}  // namespace

std::optional<RtpOutput> read_rtp_output(ConfigReader& reader, const Value& value) {
  RtpOutput output;
  const std::size_t problems_before = reader.problems().size();
  MapReader map(reader, value, kRtpKeys, "the RTP output");
  if (!map.is_map()) return std::nullopt;
  map.read("view", output.view, stream_view_names());
  const std::string host_allowed =
      "the receiver's IPv4 or IPv6 address, unicast (127.0.0.1 for this host) or multicast "
      "(239.255.0.1)";
  if (const auto v = map.require("host", host_allowed)) {
    if (const auto text = reader.text(*v, host_allowed)) {
      if (!is_ip_address(*text)) {
        reader.refuse(*v, quote_value(*text) + " is not an IP address", host_allowed);
      } else if (is_unspecified(*text)) {
        reader.refuse(*v, quote_value(*text) + " names no receiver", host_allowed);
      } else {
        output.host = *text;
      }
    }
  }
  if (const auto v = map.require("port", "the receiver's UDP port, 1..65535")) {
    if (const auto port = reader.integer(*v, 1, 65535)) output.port = *port;
  }
  map.read("encoder", output.encoder, video_encoder_names());
  map.read("bitrate-kbps", output.bitrate_kbps, kMinBitrateKbps, kMaxBitrateKbps);
  map.read("ttl", output.ttl, 1, kMaxTtl);
  if (reader.problems().size() != problems_before) return std::nullopt;
  return output;
}

std::optional<ShmOutput> read_shm_output(ConfigReader& reader, const Value& value,
                                         const std::filesystem::path& base_directory) {
  ShmOutput output;
  const std::size_t problems_before = reader.problems().size();
  MapReader map(reader, value, kShmKeys, "the shared memory output");
  if (!map.is_map()) return std::nullopt;
  map.read("view", output.view, stream_view_names());
  const std::string allowed = "the path of the socket shmsink makes (at most " +
                              std::to_string(kMaxSocketPath) +
                              " bytes), in a directory that exists and is writable";
  if (const auto v = map.require("socket-path", allowed)) {
    if (const auto text = reader.text(*v, allowed)) {
      const std::filesystem::path path = resolve_path(base_directory, *text);
      std::filesystem::path directory = path.parent_path();
      if (directory.empty()) directory = ".";
      if (path.string().size() > kMaxSocketPath) {
        reader.refuse(*v,
                      quote_value(path.string()) + " is " + std::to_string(path.string().size()) +
                          " bytes long",
                      allowed);
      } else if (!path.has_filename() || *text == "." || *text == "..") {
        reader.refuse(*v, quote_value(*text) + " names no file", allowed);
      } else if (std::error_code error; !std::filesystem::exists(directory, error)) {
        reader.refuse(*v, "the directory " + directory.string() + " does not exist", allowed);
      } else if (!std::filesystem::is_directory(directory, error)) {
        reader.refuse(*v, directory.string() + " is not a directory", allowed);
      } else if (::access(directory.c_str(), W_OK | X_OK) != 0) {
        reader.refuse(
            *v, "the directory " + directory.string() + " is not writable: " + std::strerror(errno),
            allowed);
      } else {
        output.socket_path = path;
      }
    }
  }
  if (reader.problems().size() != problems_before) return std::nullopt;
  return output;
}

}  // namespace starsift::daemon
