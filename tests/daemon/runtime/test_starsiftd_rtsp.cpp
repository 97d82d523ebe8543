// SPDX-License-Identifier: LGPL-2.1-or-later
// An RTSP camera (starsift_rtsp_camera: gst-rtsp-server, H.264, on 127.0.0.1) read by the
// rtsp source; the camera then hangs (SIGSTOP: connections open, nothing answers) and comes
// back: the source is restarted with backoff and reconnects. Hung again, the camera must not
// hold up the daemon's stop (RMS saw rtspsrc wait on a TEARDOWN nobody answered).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "daemon_process.hpp"

using namespace starsift::test;
namespace fs = std::filesystem;

namespace {

// The test camera built with the tests, or the one $STARSIFT_RTSP_CAMERA names (another host).
const char* rtsp_camera_path() {
  const char* path = std::getenv("STARSIFT_RTSP_CAMERA");
  return path != nullptr ? path : STARSIFT_RTSP_CAMERA;
}

// The camera as a process of its own, stopped and ended with signals.
class RtspCamera {
 public:
  RtspCamera(int port, const fs::path& log) {
    pid_ = fork();
    if (pid_ == 0) {
      const std::string out = log.string();
      freopen(out.c_str(), "w", stdout);
      freopen(out.c_str(), "a", stderr);
      const std::string p = std::to_string(port);
      execl(rtsp_camera_path(), rtsp_camera_path(), "--port", p.c_str(), "--fps", "10", nullptr);
      _exit(127);
    }
  }
  ~RtspCamera() {
    kill(pid_, SIGCONT);
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  void signal(int sig) const { kill(pid_, sig); }
  // The exit status when it has already exited (77: it cannot serve here).
  std::optional<int> exited() {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return std::nullopt;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace

TEST_CASE("an RTSP camera that hangs is reconnected, and does not hold up the stop",
          "[starsiftd][rtsp]") {
  TempDir dir;
  const int camera_port = free_port();
  RtspCamera camera(camera_port, dir.path() / "camera.log");
  const int port = free_port();
  const fs::path config = dir.path() / "starsiftd.yaml";
  write_file(config, "state-directory: " + (dir.path() / "state").string() +
                         "\nmetrics: {port: " + std::to_string(port) + R"(}
shutdown-timeout-s: 3
pipelines:
  - name: ipcam
    source:
      rtsp: {url: "rtsp://127.0.0.1:)" +
                         std::to_string(camera_port) +
                         R"(/cam", timeout-s: 2, transport: tcp, latency-ms: 100}
    chain: [{whiten: {history: 4, shift: none, reject: mask}}, {detect: {}}]
    stall-timeout-s: 2
    restart: {initial-s: 0.5, max-s: 2}
    outputs: {preview: {every-s: 0}}
)");
  DaemonProcess daemon({"--config", config.string()}, dir.path() / "starsiftd.log");
  const auto metrics = [&] { return http_get(port, "/metrics").body; };
  const auto frames = [&] { return metric(metrics(), "starsift_frames_out_total", "ipcam"); };
  const auto restarts = [&] { return metric(metrics(), "starsift_restarts_total", "ipcam"); };
  const bool flowing = eventually([&] { return frames() >= 20; }, 30s);
  if (const auto status = camera.exited(); status && *status == 77) {
    WARN("SKIPPED: the RTSP camera cannot serve here (no x264enc or rtph264pay)");
    return;
  }
  INFO(daemon.output());
  REQUIRE(flowing);
  CHECK(metric(metrics(), "starsift_fps", "ipcam") == Approx(10.0).epsilon(0.1));
  CHECK(restarts() == 0);

  // Hung: no frame for stall-timeout-s, then restarts that each give up after timeout-s.
  camera.signal(SIGSTOP);
  REQUIRE(eventually([&] { return restarts() >= 2; }, 30s));
  CHECK(daemon.output().find("[ipcam] no frame for") != std::string::npos);
  // Back: the next restart connects and frames flow again.
  camera.signal(SIGCONT);
  const double before = frames();
  REQUIRE(eventually([&] { return frames() >= before + 20; }, 30s));

  // Hung again, then the stop: within shutdown-timeout-s (3 s) and the teardown's grace.
  camera.signal(SIGSTOP);
  std::this_thread::sleep_for(1s);
  const auto stop_sent = std::chrono::steady_clock::now();
  daemon.signal(SIGTERM);
  const auto status = daemon.wait_exit(20s);
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - stop_sent).count();
  REQUIRE(status);
  CHECK(*status == 0);
  CHECK(took_s < 8.0);
  const auto lines = files_ending(dir.path() / "state" / "ipcam", ".jsonl");
  REQUIRE(lines.size() == 1);
  CHECK(read_json_lines(lines[0]).size() >= 40);
}
