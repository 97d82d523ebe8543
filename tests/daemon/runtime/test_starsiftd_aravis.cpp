// SPDX-License-Identifier: LGPL-2.1-or-later
// The aravis source against aravis's fake GigE Vision camera (arv-fake-gv-camera-0.8, Debian
// aravis-tools) on 127.0.0.1: the camera's frames reach the chain at the frame rate asked for,
// in the pixel format asked for, with exposure and gain set. The camera is named by its
// address: found by discovery, it may answer through another interface of the host, to which
// its stream then goes.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "daemon_process.hpp"

using namespace starsift::test;
namespace fs = std::filesystem;

namespace {

// Debian's, or the one $STARSIFT_ARV_FAKE_CAMERA names (a host where aravis-tools is not
// installed but the program was brought along).
const char* fake_camera_path() {
  const char* path = std::getenv("STARSIFT_ARV_FAKE_CAMERA");
  return path != nullptr ? path : "/usr/bin/arv-fake-gv-camera-0.8";
}
const char* const kFakeCamera = fake_camera_path();

// The fake camera, serving GigE Vision on 127.0.0.1 until destroyed.
class FakeCamera {
 public:
  explicit FakeCamera(const fs::path& log) {
    pid_ = fork();
    if (pid_ == 0) {
      const std::string out = log.string();
      freopen(out.c_str(), "w", stdout);
      freopen(out.c_str(), "a", stderr);
      execl(kFakeCamera, kFakeCamera, "-i", "127.0.0.1", "-s", "RUNTIME", nullptr);
      _exit(127);
    }
  }
  ~FakeCamera() {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace

TEST_CASE("an aravis source reads the fake GigE Vision camera", "[starsiftd][aravis]") {
  if (access(kFakeCamera, X_OK) != 0) {
    WARN("no " << kFakeCamera << " (Debian aravis-tools): the aravis source is not tested");
    return;
  }
  TempDir dir;
  FakeCamera camera(dir.path() / "camera.log");
  const int port = free_port();
  const fs::path config = dir.path() / "starsiftd.yaml";
  write_file(config, "state-directory: " + (dir.path() / "state").string() +
                         "\nmetrics: {port: " + std::to_string(port) + R"(}
pipelines:
  - name: gige
    source:
      aravis: {camera: 127.0.0.1, fps: 10, pixel-format: Mono16, exposure-us: 5000, gain-db: 2}
    # A cheap whitening (no shift estimation, the per-pixel mask), that runs on either
    # backend and keeps up with 10 fps of 512x512 on a slow CPU (the sanitizer build).
    chain: [{whiten: {history: 4, shift: none, reject: mask}}, {detect: {}}]
    stall-timeout-s: 5
    outputs: {preview: {every-s: 0}, fits: {every-s: 1}}
)");
  DaemonProcess daemon({"--config", config.string()}, dir.path() / "starsiftd.log");
  const auto metrics = [&] { return http_get(port, "/metrics").body; };
  const bool flowing =
      eventually([&] { return metric(metrics(), "starsift_frames_out_total", "gige") >= 30; }, 30s);
  INFO(daemon.output());
  REQUIRE(flowing);
  const std::string text = metrics();
  CHECK(metric(text, "starsift_fps", "gige") == Approx(10.0).epsilon(0.05));
  CHECK(metric(text, "starsift_restarts_total", "gige") == 0);
  daemon.signal(SIGTERM);
  const auto status = daemon.wait_exit(15s);
  REQUIRE(status);
  CHECK(*status == 0);
  // Mono16 frames, 512 x 512 from the fake camera, into the JSON lines and FITS.
  const auto lines = files_ending(dir.path() / "state" / "gige", ".jsonl");
  REQUIRE(lines.size() == 1);
  CHECK(read_json_lines(lines[0]).size() >= 30);
  CHECK_FALSE(files_ending(dir.path() / "state" / "gige", ".fits").empty());
  // What the camera was set to, read back from it.
  CHECK(daemon.output().find("Mono16 512x512, 10 fps, exposure 5000 us, gain 2 dB") !=
        std::string::npos);
}
