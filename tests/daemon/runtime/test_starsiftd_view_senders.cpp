// SPDX-License-Identifier: LGPL-2.1-or-later
// starsiftd's live views sent without a server, read by real receivers on 127.0.0.1: H.264
// over RTP/UDP decoded by GStreamer (udpsrc, avdec_h264) and by ffprobe from the SDP file the
// daemon writes; GRAY8 frames in shared memory read by shmsrc. A change of the RTP port is
// applied without rebuilding the pipeline; a socket directory that does not exist is refused.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "views_support.hpp"

using namespace starsift::test;
namespace fs = std::filesystem;

namespace {

std::string config_text(const fs::path& state, int metrics_port, const std::string& outputs) {
  return view_sky_config(state, metrics_port, "", outputs);
}

// A UDP port of 127.0.0.1 nobody uses now.
int free_udp_port() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

double sender_metric(int port, const std::string& name, const std::string& output) {
  return labelled_metric(port, name, {"pipeline=\"sky\"", "output=\"" + output + "\""});
}

RtspViewClient::Launch rtp_receiver(int port) {
  return {"udpsrc address=127.0.0.1 port=" + std::to_string(port) +
          " caps=\"application/x-rtp,media=video,clock-rate=90000,encoding-name=H264,payload=96\" "
          "! rtph264depay ! avdec_h264 max-threads=1 ! videoconvert ! video/x-raw,format=GRAY8 ! "
          "appsink name=out sync=false max-buffers=8 drop=false"};
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("starsiftd sends a view as H.264 over RTP/UDP, with an SDP file a player opens",
          "[starsiftd][rtp]") {
  TempDir dir;
  const int port = free_port();
  const int udp = free_udp_port();
  const fs::path config = dir.path() / "starsiftd.yaml";
  const fs::path state = dir.path() / "state";
  write_file(config,
             config_text(state, port, "rtp: {host: 127.0.0.1, port: " + std::to_string(udp) + "}"));
  DaemonProcess daemon({"--config", config.string()}, dir.path() / "starsiftd.log");
  INFO(daemon.output());
  REQUIRE(eventually(
      [&] { return sender_metric(port, "starsift_view_sender_frames_total", "rtp") > 0; }, 30s));
  {
    // Sent whether or not anyone listens; a receiver that comes decodes from the next key
    // frame (every 2 s), whose SPS and PPS come with it.
    RtspViewClient receiver(rtp_receiver(udp));
    const auto picture = receiver.next(30s);
    INFO(receiver.error());
    REQUIRE(picture);
    CHECK(picture->width == kViewWidth);
    CHECK(picture->height == kViewHeight);
    CHECK(spread(*picture) > 5.0);
    for (int i = 0; i < 5; ++i) CHECK(receiver.next(10s));
  }
  CHECK(sender_metric(port, "starsift_view_sender_errors_total", "rtp") == 0.0);
  CHECK(labelled_metric(port, "starsift_view_sender_frames_total", {"view=\"detections\""}) > 5.0);

  const fs::path sdp = state / "sky" / "detections.sdp";
  REQUIRE(fs::exists(sdp));
  const std::string text = read_text(sdp);
  CHECK(text.find("c=IN IP4 127.0.0.1\r\n") != std::string::npos);
  CHECK(text.find("m=video " + std::to_string(udp) + " RTP/AVP 96\r\n") != std::string::npos);
  CHECK(text.find("a=rtpmap:96 H264/90000\r\n") != std::string::npos);
  CHECK(daemon.output().find(sdp.string()) != std::string::npos);  // the log names it
  if (run_output("command -v ffprobe").empty()) {
    WARN("ffprobe not installed (Debian package ffmpeg): its reading of the SDP file skipped");
  } else {
    const std::string probe = run_output(
        "timeout 30 ffprobe -v error -protocol_whitelist file,udp,rtp -select_streams v "
        "-show_entries stream=codec_name,width,height -of csv=p=0 " +
        sdp.string() + " 2>/dev/null");  // the decoder's complaints before the first key frame
    CHECK(probe == "h264," + std::to_string(kViewWidth) + "," + std::to_string(kViewHeight) + "\n");
  }
  stop_cleanly(daemon);
}

TEST_CASE("A reload that changes only the RTP settings keeps the pipeline running",
          "[starsiftd][rtp]") {
  TempDir dir;
  const int port = free_port();
  const int first = free_udp_port();
  const int second = free_udp_port();
  const fs::path config = dir.path() / "starsiftd.yaml";
  const fs::path state = dir.path() / "state";
  const auto rtp = [](int udp) {
    return "rtp: {view: raw, host: 127.0.0.1, port: " + std::to_string(udp) + "}";
  };
  write_file(config, config_text(state, port, rtp(first)));
  NotifySocket notify(dir.path() / "notify.sock");
  DaemonProcess daemon({"--config", config.string()}, dir.path() / "starsiftd.log", {&notify, {}});
  INFO(daemon.output());
  REQUIRE(notify.wait_for("READY=1", 30s));
  {
    RtspViewClient receiver(rtp_receiver(first));
    INFO(receiver.error());
    REQUIRE(receiver.next(30s));
  }
  write_file(config, config_text(state, port, rtp(second)));
  const std::size_t seen = notify.messages().size();
  daemon.signal(SIGHUP);
  REQUIRE(notify.wait_for("READY=1", 10s, seen));
  RtspViewClient receiver(rtp_receiver(second));
  const auto picture = receiver.next(30s);
  INFO(receiver.error());
  REQUIRE(picture);
  CHECK(picture->width == kViewWidth);
  // The metrics are a snapshot of a moment ago.
  CHECK(eventually(
      [&] {
        return metric(http_get(port, "/metrics").body, "starsift_live_updates_total", "sky") == 1.0;
      },
      5s));
  CHECK(metric(http_get(port, "/metrics").body, "starsift_rebuilds_total", "sky") == 0.0);
  CHECK(read_text(state / "sky" / "raw.sdp").find("m=video " + std::to_string(second)) !=
        std::string::npos);
  stop_cleanly(daemon);
}

TEST_CASE("starsiftd shares a view's GRAY8 frames in shared memory, read by shmsrc",
          "[starsiftd][shm]") {
  TempDir dir;
  const int port = free_port();
  const fs::path config = dir.path() / "starsiftd.yaml";
  // Relative: taken from the config file's directory.
  write_file(config, config_text(dir.path() / "state", port, "shm: {socket-path: raw.sock}"));
  const fs::path socket = dir.path() / "raw.sock";
  DaemonProcess daemon({"--config", config.string()}, dir.path() / "starsiftd.log");
  INFO(daemon.output());
  REQUIRE(eventually(
      [&] { return sender_metric(port, "starsift_view_sender_frames_total", "shm") > 0; }, 30s));
  REQUIRE(fs::is_socket(socket));
  // The caps a consumer needs, as the log gives them.
  const std::string caps = "video/x-raw,format=GRAY8,width=384,height=288,framerate=10/1";
  CHECK(daemon.output().find(caps) != std::string::npos);
  {
    RtspViewClient consumer(
        RtspViewClient::Launch{"shmsrc socket-path=" + socket.string() + " is-live=true ! " + caps +
                               " ! appsink name=out sync=false max-buffers=8 drop=false"});
    for (int i = 0; i < 5; ++i) {
      const auto picture = consumer.next(20s);
      INFO(consumer.error());
      REQUIRE(picture);
      CHECK(picture->width == kViewWidth);
      CHECK(picture->height == kViewHeight);
      CHECK(spread(*picture) > 1.0);  // a sky, not one grey
    }
  }
  CHECK(sender_metric(port, "starsift_view_sender_errors_total", "shm") == 0.0);
  stop_cleanly(daemon);
  CHECK_FALSE(fs::exists(socket));  // shmsink removes its socket when it stops
}

TEST_CASE("A shared memory socket in a directory that does not exist is refused",
          "[starsiftd][shm]") {
  TempDir dir;
  const fs::path config = dir.path() / "starsiftd.yaml";
  const fs::path missing = dir.path() / "missing";
  write_file(config, config_text(dir.path() / "state", free_port(),
                                 "shm: {socket-path: " + (missing / "raw.sock").string() + "}"));
  DaemonProcess daemon({"--config", config.string()}, dir.path() / "starsiftd.log");
  const auto status = daemon.wait_exit(20s);
  REQUIRE(status);
  CHECK(*status == 2);  // a config with mistakes
  INFO(daemon.output());
  CHECK(daemon.output().find("outputs.shm.socket-path") != std::string::npos);
  CHECK(daemon.output().find("the directory " + missing.string() + " does not exist") !=
        std::string::npos);
}
