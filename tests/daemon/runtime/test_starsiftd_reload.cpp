// SPDX-License-Identifier: LGPL-2.1-or-later
// SIGHUP: a live change loses no frame, a changed pipeline is rebuilt alone, an invalid file
// leaves the running config in place; RELOADING=1 with MONOTONIC_USEC, then READY=1.
#include <signal.h>
#include <catch2/catch.hpp>

#include <string>

#include "daemon_process.hpp"

using namespace starsift::test;
namespace fs = std::filesystem;

namespace {

// Pipeline `a` is a small live sky at 10 fps: the chain takes a frame in about a millisecond
// and its queue holds 400 ms of frames, so a gap in its frame numbers is one a reload made
// (the test checks that no frame was dropped for time). Pipeline `b` runs beside it.
std::string config_text(const fs::path& state, int port, const std::string& a_chain,
                        const std::string& extra = "") {
  return "state-directory: " + state.string() + "\nmetrics: {port: " + std::to_string(port) +
         "}\n" + extra + R"(pipelines:
  - name: a
    source: {sky: {width: 64, height: 64, fps: 10, movers: 2}}
    chain: )" +
         a_chain +
         R"(
    depth: 2
    outputs: {preview: {every-s: 0}}
  - name: b
    source: {sky: {width: 64, height: 64, fps: 25, movers: 1}}
    chain: [{whiten: {history: 4}}, {detect: {}}]
    outputs: {preview: {every-s: 0}}
)";
}

std::vector<std::int64_t> frame_numbers(const fs::path& state, const std::string& pipeline) {
  std::vector<std::int64_t> frames;
  for (const auto& file : files_ending(state / pipeline, ".jsonl")) {
    for (const auto& line : read_json_lines(file))
      frames.push_back(line["frame"].as<std::int64_t>());
  }
  return frames;
}

double scrape(int port, const char* name, const std::string& pipeline) {
  return metric(http_get(port, "/metrics").body, name, pipeline);
}

// The metrics follow the pipelines within a tick of the main loop (250 ms).
bool becomes(int port, const char* name, const std::string& pipeline, double value) {
  return eventually([&] { return scrape(port, name, pipeline) == value; }, 5s);
}

}  // namespace

TEST_CASE(
    "SIGHUP applies live changes without a gap, rebuilds changed pipelines alone, and "
    "keeps the running config when the new file is invalid",
    "[starsiftd][reload]") {
  TempDir dir;
  const int port = free_port();
  const fs::path state = dir.path() / "state";
  const fs::path config = dir.path() / "starsiftd.yaml";
  write_file(config, config_text(state, port,
                                 "[{whiten: {history: 6, gamma: 0.0001}}, "
                                 "{detect: {threshold: 5}}]"));
  NotifySocket notify(dir.path() / "notify.sock");
  DaemonProcess daemon({"--config", config.string()}, dir.path() / "starsiftd.log", {&notify, {}});
  INFO(daemon.output());
  REQUIRE(notify.wait_for("READY=1", 30s));
  REQUIRE(eventually([&] { return frame_numbers(state, "a").size() > 10; }, 20s));

  SECTION("live parameters: whitening's gamma and detection's threshold") {
    const std::size_t before = frame_numbers(state, "a").size();
    write_file(config, config_text(state, port,
                                   "[{whiten: {history: 6, gamma: 0.001}}, "
                                   "{detect: {threshold: 6}}]"));
    const std::size_t mark = notify.messages().size();
    daemon.signal(SIGHUP);
    const auto reloading = notify.wait_for("RELOADING=1", 10s, mark);
    REQUIRE(reloading);
    CHECK(notify.messages()[*reloading].find("\nMONOTONIC_USEC=") != std::string::npos);
    REQUIRE(notify.wait_for("READY=1", 10s, *reloading));
    REQUIRE(eventually([&] { return frame_numbers(state, "a").size() > before + 20; }, 20s));
    CHECK(becomes(port, "starsift_live_updates_total", "a", 1.0));
    CHECK(scrape(port, "starsift_rebuilds_total", "a") == 0.0);
    CHECK(scrape(port, "starsift_live_updates_total", "b") == 0.0);
    CHECK(scrape(port, "starsift_reloads_total", "") == 1.0);
    REQUIRE(scrape(port, "starsift_frames_overrun_total", "a") == 0.0);
    REQUIRE(scrape(port, "starsift_frames_dropped_total", "a") == 0.0);
    // No frame lost: 0, 1, 2, ... across the reload.
    const auto frames = frame_numbers(state, "a");
    for (std::size_t i = 0; i < frames.size(); ++i) {
      INFO("line " << i + 1);
      REQUIRE(frames[i] == static_cast<std::int64_t>(i));
    }
    CHECK(daemon.output().find("reload: a: live (chain parameters)") != std::string::npos);
  }

  SECTION("a change the running chain cannot take rebuilds that pipeline, not the other") {
    const double b_before = scrape(port, "starsift_frames_out_total", "b");
    write_file(config, config_text(state, port,
                                   "[{whiten: {history: 8, gamma: 0.0001}}, "
                                   "{detect: {threshold: 5}}]"));
    const std::size_t mark = notify.messages().size();
    daemon.signal(SIGHUP);
    REQUIRE(notify.wait_for("READY=1", 10s, mark));
    CHECK(becomes(port, "starsift_rebuilds_total", "a", 1.0));
    CHECK(scrape(port, "starsift_rebuilds_total", "b") == 0.0);
    CHECK(scrape(port, "starsift_restarts_total", "b") == 0.0);
    // Both pass frames afterwards; b never stopped.
    const double a_after = scrape(port, "starsift_frames_out_total", "a");
    REQUIRE(eventually(
        [&] {
          return scrape(port, "starsift_frames_out_total", "a") > a_after + 10 &&
                 scrape(port, "starsift_frames_out_total", "b") > b_before + 25;
        },
        20s));
    CHECK(daemon.output().find("reload: a: rebuild (chain stage 1 (whiten)") != std::string::npos);
  }

  SECTION("an invalid file: every error logged, the running config kept") {
    write_file(config, config_text(state, port, "[{whiten: {history: 0}}, {detect: {}}]",
                                   "unknown-key: 1\n"));
    const std::size_t mark = notify.messages().size();
    daemon.signal(SIGHUP);
    REQUIRE(notify.wait_for("READY=1", 10s, mark));
    REQUIRE(
        eventually([&] { return scrape(port, "starsift_reload_failures_total", "") == 1.0; }, 5s));
    CHECK(scrape(port, "starsift_reloads_total", "") == 0.0);
    const std::string log = daemon.output();
    CHECK(log.find("reload: " + config.string() + ":3:1: ") != std::string::npos);
    CHECK(log.find("history") != std::string::npos);
    CHECK(log.find("the running config stays") != std::string::npos);
    const double a_frames = scrape(port, "starsift_frames_out_total", "a");
    REQUIRE(eventually(
        [&] { return scrape(port, "starsift_frames_out_total", "a") > a_frames + 20; }, 10s));
    CHECK(scrape(port, "starsift_rebuilds_total", "a") == 0.0);
  }

  daemon.signal(SIGTERM);
  const auto status = daemon.wait_exit(15s);
  REQUIRE(status);
  CHECK(*status == 0);
}
