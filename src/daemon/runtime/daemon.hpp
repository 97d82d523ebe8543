// SPDX-License-Identifier: LGPL-2.1-or-later
// starsiftd itself: the pipelines of the config kept running on one GLib main loop, with
// systemd's notify protocol, signals, reloads, metrics and the disk guard around them.
//
//   start      every pipeline built and started; READY=1 once frames flow in all of them, or
//              after kReadyTimeoutS with the ones that do not named in the log
//   STATUS=    one line every 2 s: fps, detections and drops per pipeline
//   WATCHDOG=1 at half WATCHDOG_USEC, only while every running pipeline's frame count has
//              moved since the last one (a stalled one is restarted by its runner first)
//   SIGHUP     RELOADING=1 + MONOTONIC_USEC, the new file read and checked, each pipeline
//              changed as plan_reload() says (an invalid file: every error logged, the running
//              config kept), then READY=1
//   SIGTERM,   STOPPING=1, EOS into every pipeline, their ends awaited at most
//   SIGINT     shutdown-timeout-s (then they are stopped as they are), the files finished
//              (queued lines and frames written, synced), exit 0. Total: at most
//              shutdown-timeout-s + kTeardownGraceS plus the time the disk takes.
#pragma once

#include <glib.h>

#include <atomic>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "daemon/config/daemon_config.hpp"
#include "daemon/outputs/clock_state.hpp"
#include "daemon/runtime/metrics_server.hpp"
#include "daemon/runtime/notifier.hpp"
#include "daemon/runtime/pipeline_runner.hpp"

namespace starsift::daemon {

struct DaemonOptions {
  std::filesystem::path config_path;  // read again on SIGHUP
  double duration_s = 0.0;            // > 0: stop by itself after this long, as on SIGTERM
  bool summary = false;               // print what was done and where the files are at the end
  std::ostream* out = nullptr;        // where the summary goes
};

class Daemon {
 public:
  static constexpr double kReadyTimeoutS = 30.0;
  static constexpr double kTeardownGraceS = 2.0;

  Daemon(DaemonOptions options, DaemonConfig config);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Runs until stopped; returns the exit status.
  int run();

 private:
  static gboolean on_stop_signal(gpointer self);
  static gboolean on_hup_signal(gpointer self);
  static gboolean on_tick(gpointer self);
  static gboolean on_status(gpointer self);
  static gboolean on_watchdog(gpointer self);
  static gboolean on_clock(gpointer self);
  static gboolean on_disk(gpointer self);
  static gboolean on_duration(gpointer self);

  RunnerContext runner_context() const;
  void start_pipeline(const PipelineConfig& config);
  void start_metrics();
  void start_rtsp();  // (again) from config_.rtsp; none: not served
  void reload();
  void begin_shutdown(const char* why);
  void tick();
  void check_ready();
  void check_shutdown();
  void watchdog();
  void status();
  void guard_disk();
  DaemonSnapshot snapshot() const;
  void print_summary(std::ostream& out) const;

  DaemonOptions options_;
  DaemonConfig config_;
  GMainLoop* loop_ = nullptr;
  Notifier notifier_;
  std::vector<std::unique_ptr<PipelineRunner>> runners_;
  std::vector<std::unique_ptr<PipelineRunner>> retiring_;  // removed by a reload, stopping
  std::vector<std::shared_ptr<Teardown>> teardowns_;
  std::unique_ptr<MetricsServer> metrics_;
  std::shared_ptr<RtspServer> rtsp_;  // the live views' server; null: none
  std::vector<guint> sources_;        // signal handlers and timers, removed at the end
  guint duration_source_ = 0;         // --duration's timer while pending
  ClockState clock_;
  std::int64_t started_us_ = 0;
  std::int64_t stop_deadline_us_ = 0;
  std::int64_t teardown_deadline_us_ = 0;
  std::vector<std::uint64_t> watchdog_frames_;
  std::vector<std::string> watchdog_names_;
  std::uint64_t reloads_ = 0;
  std::uint64_t reload_failures_ = 0;
  bool ready_ = false;
  bool stopping_ = false;
  bool forced_ = false;
  std::thread disk_thread_;
  std::atomic<bool> disk_busy_{false};
};

}  // namespace starsift::daemon
