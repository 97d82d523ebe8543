// SPDX-License-Identifier: LGPL-2.1-or-later
// One pipeline of the config, kept running: built, watched, restarted when it fails, changed
// by reloads, stopped at the end. Lives on the GLib main loop (every method is called there,
// and so are its bus watch and timers); streaming threads only touch its FrameOutputs and
// counters.
//
// Faults: an ERROR on the bus, an end of stream nobody asked for (a camera that went away),
// or no frame for stall-timeout-s tear the GStreamer pipeline down (on a thread of its own:
// a dead RTSP camera must not block) and build it again after a wait that doubles from
// restart.initial-s up to restart.max-s, and starts again at initial-s once frames flow. The
// other pipelines run on meanwhile. Under `backend: auto` an error that names CUDA rebuilds
// the pipeline on the CPU at once (logged, counted in backend_fallbacks).
#pragma once

#include <glib.h>
#include <gst/gst.h>
#include <spdlog/logger.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "daemon/config/daemon_config.hpp"
#include "daemon/runtime/frame_outputs.hpp"
#include "daemon/runtime/pipeline_counters.hpp"
#include "daemon/runtime/pipeline_instance.hpp"
#include "daemon/runtime/pipeline_plan.hpp"
#include "daemon/stream/rtsp_server.hpp"
#include "daemon/stream/view_sender.hpp"

namespace starsift::daemon {

enum class RunnerState {
  Starting,  // built, PLAYING asked for, no frame out of the chain yet
  Running,   // frames flow
  Waiting,   // torn down after a fault, waiting to restart
  Stopping,  // EOS sent, waiting for it to reach every sink
  Stopped,   // done: stopped for good (shutdown, removed, or a file that ended)
};
std::string_view to_string(RunnerState state) noexcept;

// What every runner shares: where the teardowns go (the daemon waits for them at exit) and
// what the host offers.
struct RunnerContext {
  NightLayout layout;
  PlanOptions plan_options;
  std::vector<std::shared_ptr<Teardown>>* teardowns = nullptr;
  std::optional<MqttConfig> mqtt;    // the broker detections are published to; none: not published
  std::shared_ptr<RtspServer> rtsp;  // where the live views are served; none: not served
};

// A view sent on without a server (outputs.rtp, outputs.shm): its counts over every sender
// made for it since the start.
struct SenderStatus {
  std::string output;  // "rtp", "shm"
  StreamView view = StreamView::Raw;
  std::uint64_t frames = 0, errors = 0;
};

class PipelineRunner {
 public:
  PipelineRunner(PipelineConfig config, RunnerContext context);
  ~PipelineRunner();  // tears down what still runs; does not wait
  PipelineRunner(const PipelineRunner&) = delete;
  PipelineRunner& operator=(const PipelineRunner&) = delete;

  // Builds and starts the pipeline; a failure is a fault (logged, restarted with backoff).
  void start();
  // A reload's change that the running elements take (PipelineChangeKind::Live).
  void apply_live(const PipelineConfig& next);
  // A reload's change that needs a new pipeline: the old one goes, the new one starts.
  void rebuild(const PipelineConfig& next);
  // Shutdown: EOS into the pipeline (its files end cleanly); Stopped once EOS came out.
  void stop();
  // Tears down at once, whatever the state (shutdown past its time, a removed pipeline).
  void force_stop();
  // Checks for a stall; called by the daemon's timer on the main loop.
  void tick();
  // Writes the queued files and syncs them (after the pipeline stopped).
  void finish_outputs();
  // The host clock's state, recorded with the frames from now on.
  void set_clock(const ClockState& clock) { outputs_->set_clock(clock); }
  // A reload's broker settings: a change reconnects this pipeline's publisher, the same
  // settings keep its connection.
  void set_mqtt(std::optional<MqttConfig> broker);
  // The RTSP server to serve the live views on (none: not served), from the next frame.
  void set_rtsp(std::shared_ptr<RtspServer> server);
  // The live views' feeds (null where a view is not served).
  const ViewFeeds& views() const noexcept { return views_; }
  // The views sent over RTP and shared memory.
  std::vector<SenderStatus> senders() const;

  const std::string& name() const noexcept { return config_.name; }
  const PipelineConfig& config() const noexcept { return config_; }
  RunnerState state() const noexcept { return state_; }
  // Frames have come out of the chain since the latest start.
  bool flowing() const noexcept { return state_ == RunnerState::Running; }
  const PipelineCounters& counters() const noexcept { return *counters_; }
  const FrameOutputs& outputs() const noexcept { return *outputs_; }
  std::string active_backend() const { return active_backend_; }
  // Seconds until the next restart while Waiting; 0 otherwise.
  double restart_in_s() const;
  // siftchain's account of a recent frame (read once a second); empty without one.
  const std::optional<ChainTimes>& chain_times() const noexcept { return chain_times_; }
  // The latest fault, for STATUS= and /healthz; empty when none since frames flowed.
  const std::string& last_fault() const noexcept { return last_fault_; }
  // "roof: 25.0 fps, 12 detections, 0 dropped" (or the state when not running).
  std::string status_text() const;

 private:
  void start_instance();
  void fault(const std::string& reason);
  // Under backend auto, a fault that names CUDA (`evidence`: its text) starts the pipeline
  // again at once on the CPU, for good: logged, counted. False when it does not apply.
  bool fall_back_to_cpu(const std::string& fault_text, const std::string& evidence);
  void teardown();
  void schedule_restart(double delay_s);
  void on_eos();
  bool on_bus(GstMessage* message);
  static gboolean bus_callback(GstBus* bus, GstMessage* message, gpointer self);
  static gboolean restart_callback(gpointer self);
  FitsPipelineInfo fits_info() const;
  std::shared_ptr<FrameOutputs> make_outputs() const;
  void update_publisher();  // the broker and outputs.mqtt -> the outputs' publisher
  void mount_views();       // the server and outputs.rtsp -> views_, handed to the instance
  // A sender of outputs.rtp or outputs.shm and what it was made from.
  struct SenderSlot {
    std::unique_ptr<ViewSender> sender;
    std::optional<RtpOutput> rtp;
    std::optional<ShmOutput> shm;
    std::uint64_t frames = 0, errors = 0;  // of the senders it held before
    std::int64_t retry_at_us = 0;          // a sender that failed is made again from then
  };
  // outputs.rtp and outputs.shm -> senders: made, replaced when their settings changed or
  // they failed, removed when left out.
  void mount_senders();
  void update_sender(SenderSlot& slot, bool changed, std::optional<StreamView> view,
                     const std::function<std::unique_ptr<ViewSender>()>& make);
  void update_clips();  // outputs.clips -> clips_, handed to the outputs

  PipelineConfig config_;
  RunnerContext context_;
  std::shared_ptr<spdlog::logger> log_;
  std::unique_ptr<PipelineCounters> counters_;
  std::shared_ptr<FrameOutputs> outputs_;
  std::unique_ptr<PipelineInstance> instance_;
  ViewFeeds views_;
  SenderSlot rtp_sender_, shm_sender_;
  std::shared_ptr<ClipRecorder> clips_;  // event clips; null when off
  PipelinePlan plan_;
  RunnerState state_ = RunnerState::Stopped;
  guint bus_watch_ = 0;
  guint restart_timer_ = 0;
  std::int64_t restart_at_us_ = 0;
  std::int64_t started_us_ = 0;        // the latest instance's start (monotonic µs)
  std::uint64_t frames_at_start_ = 0;  // frames_out when it started
  double backoff_s_ = 0;               // the next wait after a fault
  bool force_cpu_ = false;             // backend auto fell back to the CPU
  bool restarting_ = false;            // the next start is a restart (counted)
  std::string last_fault_;
  std::string active_backend_;
  std::optional<ChainTimes> chain_times_;
  std::int64_t chain_times_at_us_ = 0;  // when they were read
};

}  // namespace starsift::daemon
