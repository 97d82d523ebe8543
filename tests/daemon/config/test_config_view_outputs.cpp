// SPDX-License-Identifier: LGPL-2.1-or-later
// A pipeline's `outputs.rtp` and `outputs.shm`: absent they send nothing; given, their
// defaults, every key read into its field, the views they add to the pipeline's, and every
// refusal with its place, key path and what is allowed.
#include <unistd.h>
#include <catch2/catch.hpp>

#include "config_support.hpp"

using namespace starsift::daemon;
using namespace starsift::daemon::test;

namespace {

// kSkyPipeline with `outputs: <outputs>` as its line 5; the value starts at column 14.
std::string with_outputs(const std::string& outputs) {
  return kSkyPipeline.substr(0, kSkyPipeline.size() - 1) + "\n    outputs: " + outputs + "\n";
}

OutputsConfig outputs_of(const std::string& outputs, const std::filesystem::path& base = {}) {
  const std::string yaml = with_outputs(outputs);
  INFO("YAML:\n" << yaml);
  try {
    return parse_daemon_config(yaml, kOrigin, base).pipelines.at(0).outputs;
  } catch (const ConfigErrors& e) {
    FAIL("refused:\n" << e.what());
  }
  return {};
}

}  // namespace

TEST_CASE("rtp and shm: absent, nothing is sent and no view is taken",
          "[daemon][config][rtp][shm]") {
  const OutputsConfig outputs = outputs_of("{preview: {every-s: 0}}");
  CHECK_FALSE(outputs.rtp.has_value());
  CHECK_FALSE(outputs.shm.has_value());
  CHECK(views_wanted(outputs).empty());
}

TEST_CASE("rtp: its defaults, and every key read into its field", "[daemon][config][rtp]") {
  SECTION("host and port alone") {
    const OutputsConfig outputs = outputs_of("{rtp: {host: 127.0.0.1, port: 5004}}");
    REQUIRE(outputs.rtp.has_value());
    const RtpOutput& rtp = *outputs.rtp;
    CHECK(rtp.view == StreamView::Detections);
    CHECK(rtp.host == "127.0.0.1");
    CHECK(rtp.port == 5004);
    CHECK(rtp.encoder == VideoEncoder::Auto);
    CHECK(rtp.bitrate_kbps == 2000);
    CHECK(rtp.ttl == 1);
    CHECK(views_wanted(outputs) == std::vector<StreamView>{StreamView::Detections});
  }
  SECTION("every key") {
    const OutputsConfig outputs = outputs_of(
        "{rtp: {view: whitened, host: 'ff15::7', port: 6000, encoder: x264, bitrate-kbps: 800, "
        "ttl: 4}}");
    const RtpOutput& rtp = *outputs.rtp;
    CHECK(rtp.view == StreamView::Whitened);
    CHECK(rtp.host == "ff15::7");
    CHECK(rtp.port == 6000);
    CHECK(rtp.encoder == VideoEncoder::X264);
    CHECK(rtp.bitrate_kbps == 800);
    CHECK(rtp.ttl == 4);
  }
}

TEST_CASE("shm: its default view, and its socket taken from the config's directory",
          "[daemon][config][shm]") {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "run");
  SECTION("a relative path") {
    const OutputsConfig outputs = outputs_of("{shm: {socket-path: run/east.sock}}", dir.path());
    REQUIRE(outputs.shm.has_value());
    CHECK(outputs.shm->view == StreamView::Raw);
    CHECK(outputs.shm->socket_path == dir.path() / "run/east.sock");
    CHECK(views_wanted(outputs) == std::vector<StreamView>{StreamView::Raw});
  }
  SECTION("an absolute path and a view") {
    const std::string path = (dir.path() / "east.sock").string();
    const OutputsConfig outputs =
        outputs_of("{shm: {view: detections, socket-path: '" + path + "'}}");
    CHECK(outputs.shm->view == StreamView::Detections);
    CHECK(outputs.shm->socket_path == path);
  }
}

TEST_CASE("the views taken are those of rtsp, rtp and shm together, each once",
          "[daemon][config][rtp][shm]") {
  TempDir dir;
  const std::string yaml = kSkyPipeline.substr(0, kSkyPipeline.size() - 1) +
                           "\n    outputs: {rtsp: {streams: [detections]}, rtp: {view: "
                           "detections, host: 127.0.0.1, port: 5004}, shm: {view: whitened, "
                           "socket-path: s.sock}}\nrtsp: {}\n";
  const DaemonConfig config = parse_daemon_config(yaml, kOrigin, dir.path());
  CHECK(views_wanted(config.pipelines[0].outputs) ==
        std::vector<StreamView>{StreamView::Whitened, StreamView::Detections});
}

TEST_CASE("rtp: every mistake with its place", "[daemon][config][rtp][errors]") {
  SECTION("no host") {
    require_refused(with_outputs("{rtp: {port: 5004}}"),
                    {"cfg.yaml:5:20", "pipelines[0].outputs.rtp.host", "missing",
                     "the receiver's IPv4 or IPv6 address"});
  }
  SECTION("no port") {
    require_refused(with_outputs("{rtp: {host: 127.0.0.1}}"),
                    {"cfg.yaml:5:20", "pipelines[0].outputs.rtp.port", "missing", "1..65535"});
  }
  SECTION("a host name") {
    require_refused(with_outputs("{rtp: {host: localhost, port: 5004}}"),
                    {"cfg.yaml:5:27", "pipelines[0].outputs.rtp.host",
                     "'localhost' is not an IP address", "unicast (127.0.0.1 for this host)"});
  }
  SECTION("the unspecified address") {
    require_refused(with_outputs("{rtp: {host: 0.0.0.0, port: 5004}}"),
                    {"cfg.yaml:5:27", "pipelines[0].outputs.rtp.host",
                     "'0.0.0.0' names no receiver", "multicast (239.255.0.1)"});
  }
  SECTION("a port out of range") {
    require_refused(
        with_outputs("{rtp: {host: 127.0.0.1, port: 70000}}"),
        {"cfg.yaml:5:44", "pipelines[0].outputs.rtp.port", "70000 is not allowed", "1..65535"});
  }
  SECTION("a ttl of 0") {
    require_refused(
        with_outputs("{rtp: {host: 127.0.0.1, port: 5004, ttl: 0}}"),
        {"cfg.yaml:5:55", "pipelines[0].outputs.rtp.ttl", "0 is not allowed", "1..255"});
  }
  SECTION("a view that does not exist") {
    require_refused(with_outputs("{rtp: {view: overlay, host: 127.0.0.1, port: 5004}}"),
                    {"cfg.yaml:5:27", "pipelines[0].outputs.rtp.view", "'overlay'",
                     "raw, whitened, detections"});
  }
  SECTION("an encoder that does not exist") {
    require_refused(
        with_outputs("{rtp: {host: 127.0.0.1, port: 5004, encoder: vp8}}"),
        {"cfg.yaml:5:59", "pipelines[0].outputs.rtp.encoder", "'vp8'", "auto, x264, nvenc"});
  }
  SECTION("a misspelt key") {
    require_refused(
        with_outputs("{rtp: {host: 127.0.0.1, port: 5004, tll: 2}}"),
        {"cfg.yaml:5:50", "pipelines[0].outputs.rtp", "unknown key 'tll' (did you mean 'ttl'",
         "view, host, port, encoder, bitrate-kbps, ttl"});
  }
}

TEST_CASE("shm: every mistake with its place", "[daemon][config][shm][errors]") {
  TempDir dir;
  const auto refused = [&](const std::string& outputs, const Expected& expected) {
    const std::string yaml = with_outputs(outputs);
    INFO("YAML:\n" << yaml);
    try {
      parse_daemon_config(yaml, kOrigin, dir.path());
      FAIL("accepted");
    } catch (const ConfigErrors& e) {
      REQUIRE(e.problems().size() == 1);
      check_problem(e.problems().front(), expected);
    }
  };
  SECTION("no socket path") {
    refused("{shm: {view: raw}}", {"cfg.yaml:5:20", "pipelines[0].outputs.shm.socket-path",
                                   "missing", "a directory that exists and is writable"});
  }
  SECTION("a directory that does not exist") {
    refused("{shm: {socket-path: /nonexistent-starsift/east.sock}}",
            {"cfg.yaml:5:34", "pipelines[0].outputs.shm.socket-path",
             "the directory /nonexistent-starsift does not exist",
             "a directory that exists and is writable"});
  }
  SECTION("a directory that is a file") {
    dir.write("file", "");
    refused("{shm: {socket-path: file/east.sock}}",
            {"cfg.yaml:5:34", "pipelines[0].outputs.shm.socket-path",
             (dir.path() / "file").string() + " is not a directory", "a directory that exists"});
  }
  SECTION("a path too long for a socket's address") {
    refused("{shm: {socket-path: " + std::string(120, 'a') + "}}",
            {"cfg.yaml:5:34", "pipelines[0].outputs.shm.socket-path", "bytes long",
             "at most 107 bytes"});
  }
  SECTION("a directory that is not writable") {
    if (::geteuid() == 0) {
      WARN("running as root, to whom every directory is writable: not tested");
      return;
    }
    const auto locked = dir.path() / "locked";
    std::filesystem::create_directories(locked);
    std::filesystem::permissions(
        locked, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    refused("{shm: {socket-path: locked/east.sock}}",
            {"cfg.yaml:5:34", "pipelines[0].outputs.shm.socket-path",
             "the directory " + locked.string() + " is not writable: Permission denied",
             "a directory that exists and is writable"});
  }
}
