// SPDX-License-Identifier: LGPL-2.1-or-later
// Faults: a source that stalls and one that ends are restarted with a doubling wait while the
// other pipeline runs on; /healthz says which one is down; a stop is not held up by them.
#include <signal.h>
#include <stdlib.h>
#include <catch2/catch.hpp>

#include <regex>
#include <string>

#include "daemon_process.hpp"

using namespace starsift::test;
namespace fs = std::filesystem;

TEST_CASE("a stalled source and one that ends are restarted with backoff; the others run on",
          "[starsiftd][faults]") {
  TempDir dir;
  const int port = free_port();
  const fs::path config = dir.path() / "starsiftd.yaml";
  write_file(config, "state-directory: " + (dir.path() / "state").string() +
                         "\nmetrics: {port: " + std::to_string(port) + R"(}
shutdown-timeout-s: 3
pipelines:
  - name: good
    source: {sky: {width: 64, height: 64, fps: 25, movers: 1}}
    chain: [{whiten: {history: 4}}, {detect: {}}]
    outputs: {preview: {every-s: 0}}
  # Never gives a frame: an appsrc nobody feeds.
  - name: stuck
    source:
      gst: {launch: "appsrc is-live=true format=time caps=video/x-raw,format=GRAY8,width=64,height=64,framerate=25/1"}
    chain: [{detect: {}}]
    stall-timeout-s: 1
    restart: {initial-s: 0.5, max-s: 2}
    outputs: {preview: {every-s: 0}}
  # Gives 10 frames, then ends its stream: a camera that went away.
  - name: gone
    source:
      gst: {launch: "videotestsrc is-live=true num-buffers=10 ! video/x-raw,format=GRAY8,width=64,height=64,framerate=25/1"}
    chain: [{detect: {}}]
    restart: {initial-s: 0.5, max-s: 1}
    outputs: {preview: {every-s: 0}}
)");
  NotifySocket notify(dir.path() / "notify.sock");
  DaemonProcess daemon({"--config", config.string()}, dir.path() / "starsiftd.log", {&notify, {}});
  INFO(daemon.output());

  const auto metrics = [&] { return http_get(port, "/metrics").body; };
  REQUIRE(
      eventually([&] { return metric(metrics(), "starsift_frames_out_total", "good") > 0; }, 20s));
  const double good_before = metric(metrics(), "starsift_frames_out_total", "good");
  // The stuck pipeline: faults at 1 s without a frame, then waits 0.5, 1, 2, 2 ... s.
  REQUIRE(
      eventually([&] { return metric(metrics(), "starsift_restarts_total", "stuck") >= 3; }, 30s));
  REQUIRE(
      eventually([&] { return metric(metrics(), "starsift_restarts_total", "gone") >= 2; }, 30s));
  const std::string text = metrics();
  // The one that went away came back each time and gave its frames again.
  CHECK(metric(text, "starsift_frames_in_total", "gone") >= 30);
  CHECK(metric(text, "starsift_frames_out_total", "stuck") == 0);
  // The good pipeline ran on through all of it, never restarted.
  CHECK(metric(text, "starsift_frames_out_total", "good") > good_before + 50);
  CHECK(metric(text, "starsift_restarts_total", "good") == 0);
  CHECK(metric(text, "starsift_pipeline_up", "good") == 1);
  CHECK(metric(text, "starsift_pipeline_up", "stuck") == 0);

  // The wait doubles up to restart.max-s.
  const std::string log = daemon.output();
  const auto waits_of = [&](const std::string& pipeline) {
    std::vector<double> waits;
    const std::regex line("\\[" + pipeline + "\\] [^\n]*; restarting in ([0-9.]+) s");
    for (auto it = std::sregex_iterator(log.begin(), log.end(), line); it != std::sregex_iterator();
         ++it) {
      waits.push_back(std::stod((*it)[1]));
    }
    return waits;
  };
  const auto stuck = waits_of("stuck");
  REQUIRE(stuck.size() >= 3);
  CHECK(stuck[0] == 0.5);
  CHECK(stuck[1] == 1.0);
  CHECK(stuck[2] == 2.0);
  if (stuck.size() > 3) CHECK(stuck[3] == 2.0);
  CHECK(log.find("[stuck] no frame for") != std::string::npos);
  CHECK(log.find("[gone] the source ended its stream") != std::string::npos);
  // gone's frames flow between its faults, so its wait starts again at initial-s each time.
  const auto gone = waits_of("gone");
  REQUIRE(gone.size() >= 2);
  CHECK(gone[0] == 0.5);
  CHECK(gone[1] == 0.5);

  // Health names the pipeline that is down; STATUS= says it is restarting.
  const HttpReply health = http_get(port, "/healthz");
  CHECK(health.status == 503);
  CHECK(health.body.find("stuck: ") != std::string::npos);
  REQUIRE(notify.wait_for("stuck: restarting in", 10s));

  const auto stop_sent = std::chrono::steady_clock::now();
  daemon.signal(SIGTERM);
  const auto status = daemon.wait_exit(10s);
  REQUIRE(status);
  CHECK(*status == 0);
  CHECK(std::chrono::steady_clock::now() - stop_sent < 6s);  // shutdown-timeout-s 3 + grace
}

// A GPU that fails mid-stream under backend auto: the pipeline is started again on the CPU,
// logged and counted. The fault is injected (STARSIFT_CUDA_FAULT_AFTER) so that a healthy GPU
// can show the whole path: the engine's CUDA error, the element's error message, the
// daemon's fallback. Without a usable GPU there is nothing to fall back from.
TEST_CASE("a GPU fault under backend auto falls back to the CPU, logged and counted",
          "[starsiftd][faults][gpu]") {
  TempDir dir;
  const int port = free_port();
  const fs::path config = dir.path() / "starsiftd.yaml";
  write_file(config, "state-directory: " + (dir.path() / "state").string() +
                         "\nmetrics: {port: " + std::to_string(port) + R"(}
pipelines:
  - name: sky
    source: {sky: {width: 128, height: 128, fps: 25, movers: 1}}
    chain: [{whiten: {history: 4}}, {detect: {}}]
    backend: auto
    outputs: {preview: {every-s: 0}}
)");
  setenv("STARSIFT_CUDA_FAULT_AFTER", "20", 1);
  DaemonProcess daemon({"--config", config.string()}, dir.path() / "starsiftd.log");
  unsetenv("STARSIFT_CUDA_FAULT_AFTER");
  INFO(daemon.output());
  const auto metrics = [&] { return http_get(port, "/metrics").body; };
  REQUIRE(eventually(
      [&] { return daemon.output().find("frames flow (backend") != std::string::npos; }, 30s));
  if (daemon.output().find("frames flow (backend cuda") == std::string::npos) {
    WARN("SKIPPED: no usable CUDA device; backend auto ran on the CPU from the start");
    return;
  }
  REQUIRE(eventually(
      [&] { return metric(metrics(), "starsift_backend_fallbacks_total", "sky") == 1; }, 30s));
  REQUIRE(eventually(
      [&] { return daemon.output().find("frames flow (backend cpu)") != std::string::npos; }, 30s));
  const std::string out = daemon.output();
  CHECK(out.find("fault injected by STARSIFT_CUDA_FAULT_AFTER") != std::string::npos);
  CHECK(out.find("backend auto: the GPU failed or cannot run this chain (") != std::string::npos);
  // Frames go on after the fallback, and a fault that was handled is not a restart loop.
  const double after = metric(metrics(), "starsift_frames_out_total", "sky");
  REQUIRE(eventually(
      [&] { return metric(metrics(), "starsift_frames_out_total", "sky") > after + 25; }, 20s));
  CHECK(metric(metrics(), "starsift_backend_fallbacks_total", "sky") == 1);
  daemon.signal(SIGTERM);
  const auto status = daemon.wait_exit(15s);
  REQUIRE(status);
  CHECK(*status == 0);
}
