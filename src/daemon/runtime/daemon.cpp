// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/runtime/daemon.hpp"

#include <glib-unix.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <ostream>

#include "daemon/config/config_loader.hpp"
#include "daemon/outputs/disk_guard.hpp"
#include "daemon/runtime/logging.hpp"
#include "daemon/runtime/reload_plan.hpp"
#include "pipeline/error.hpp"

namespace starsift::daemon {

namespace {

constexpr guint kTickMs = 250;
constexpr guint kStatusMs = 2000;
constexpr guint kClockMs = 1000;
constexpr guint kDiskMs = 60000;

std::int64_t now_us() {
  return g_get_monotonic_time();
}

bool nvenc_available() {
  GstElementFactory* f = gst_element_factory_find("nvh264enc");
  if (f == nullptr) return false;
  gst_object_unref(f);
  return true;
}

}  // namespace

Daemon::Daemon(DaemonOptions options, DaemonConfig config)
    : options_(std::move(options)), config_(std::move(config)) {
  loop_ = g_main_loop_new(nullptr, FALSE);
}

Daemon::~Daemon() {
  for (const guint id : sources_) g_source_remove(id);
  if (duration_source_ != 0) g_source_remove(duration_source_);
  runners_.clear();
  retiring_.clear();
  rtsp_.reset();
  if (disk_thread_.joinable()) disk_thread_.join();
  metrics_.reset();
  g_main_loop_unref(loop_);
}

RunnerContext Daemon::runner_context() const {
  RunnerContext c;
  c.layout = NightLayout{config_.state_directory, NightClock::Local};
  c.plan_options.nvenc_available = nvenc_available();
  c.teardowns = const_cast<std::vector<std::shared_ptr<Teardown>>*>(&teardowns_);
  c.mqtt = config_.mqtt;
  c.rtsp = rtsp_;
  return c;
}

void Daemon::start_rtsp() {
  rtsp_.reset();  // the old server first: a new one may want its port
  if (!config_.rtsp) return;
  const RtspConfig& rtsp = *config_.rtsp;
  PlanOptions options;
  options.nvenc_available = nvenc_available();
  // A key frame every 2 s for the clients already watching; a client that comes asks for one.
  const std::string encoder = launch_text(
      {h264_encoder(rtsp.encoder, rtsp.bitrate_kbps, key_frame_interval(0, 2.0), options)});
  try {
    rtsp_ = std::make_shared<RtspServer>(rtsp, encoder);
    spdlog::info("rtsp: live views on rtsp://{}:{}/<pipeline>/<view> ({}{})", rtsp.address,
                 rtsp_->port(), encoder.substr(0, encoder.find(' ')),
                 rtsp.username.empty() ? "" : ", with a user name and password");
  } catch (const Error& e) {
    // The pipelines matter more than their live views: they run on without them.
    spdlog::error("{}; allowed: {} (running without live views)", e.problem(), e.allowed());
  }
}

void Daemon::start_pipeline(const PipelineConfig& config) {
  runners_.push_back(std::make_unique<PipelineRunner>(config, runner_context()));
  runners_.back()->set_clock(clock_);
  runners_.back()->start();
}

void Daemon::start_metrics() {
  metrics_.reset();
  if (!config_.metrics.enabled()) return;
  try {
    metrics_ = std::make_unique<MetricsServer>(config_.metrics.address, config_.metrics.port);
    spdlog::info("metrics on http://{}:{}/metrics and /healthz", config_.metrics.address,
                 metrics_->port());
  } catch (const Error& e) {
    // The pipelines matter more than their metrics: they run on without them.
    spdlog::error("{}; allowed: {} (running without metrics)", e.problem(), e.allowed());
  }
}

int Daemon::run() {
  started_us_ = now_us();
  try {
    ensure_directory(config_.state_directory);
  } catch (const std::exception& e) {
    spdlog::critical("state-directory: {}", e.what());
    return 1;
  }
  clock_ = read_clock_state();
  start_metrics();
  start_rtsp();
  sources_.push_back(g_unix_signal_add(SIGTERM, &Daemon::on_stop_signal, this));
  sources_.push_back(g_unix_signal_add(SIGINT, &Daemon::on_stop_signal, this));
  sources_.push_back(g_unix_signal_add(SIGHUP, &Daemon::on_hup_signal, this));
  sources_.push_back(g_timeout_add(kTickMs, &Daemon::on_tick, this));
  sources_.push_back(g_timeout_add(kStatusMs, &Daemon::on_status, this));
  sources_.push_back(g_timeout_add(kClockMs, &Daemon::on_clock, this));
  sources_.push_back(g_timeout_add(kDiskMs, &Daemon::on_disk, this));
  if (const auto interval = notifier_.watchdog_interval()) {
    const auto ms = static_cast<guint>(std::max<std::int64_t>(interval->count() / 2000, 10));
    sources_.push_back(g_timeout_add(ms, &Daemon::on_watchdog, this));
    spdlog::info("systemd watchdog: WATCHDOG=1 every {} ms while frames progress", ms);
  }
  if (options_.duration_s > 0) {
    duration_source_ = g_timeout_add(static_cast<guint>(std::llround(options_.duration_s * 1000)),
                                     &Daemon::on_duration, this);
  }
  spdlog::info("starsiftd: {} pipeline(s), state directory {}", config_.pipelines.size(),
               config_.state_directory.string());
  for (const PipelineConfig& p : config_.pipelines) start_pipeline(p);
  guard_disk();
  g_main_loop_run(loop_);

  for (auto& r : runners_) r->finish_outputs();
  if (options_.summary && options_.out != nullptr) print_summary(*options_.out);
  if (disk_thread_.joinable()) disk_thread_.join();
  spdlog::info("starsiftd: stopped");
  return 0;
}

// ---- signals and timers -----------------------------------------------------------------

gboolean Daemon::on_stop_signal(gpointer self) {
  static_cast<Daemon*>(self)->begin_shutdown("a stop signal (SIGTERM or SIGINT)");
  return G_SOURCE_CONTINUE;
}

gboolean Daemon::on_hup_signal(gpointer self) {
  static_cast<Daemon*>(self)->reload();
  return G_SOURCE_CONTINUE;
}

gboolean Daemon::on_tick(gpointer self) {
  static_cast<Daemon*>(self)->tick();
  return G_SOURCE_CONTINUE;
}

gboolean Daemon::on_status(gpointer self) {
  static_cast<Daemon*>(self)->status();
  return G_SOURCE_CONTINUE;
}

gboolean Daemon::on_watchdog(gpointer self) {
  static_cast<Daemon*>(self)->watchdog();
  return G_SOURCE_CONTINUE;
}

gboolean Daemon::on_clock(gpointer self) {
  auto* d = static_cast<Daemon*>(self);
  d->clock_ = read_clock_state();
  for (auto& r : d->runners_) r->set_clock(d->clock_);
  return G_SOURCE_CONTINUE;
}

gboolean Daemon::on_disk(gpointer self) {
  static_cast<Daemon*>(self)->guard_disk();
  return G_SOURCE_CONTINUE;
}

gboolean Daemon::on_duration(gpointer self) {
  auto* d = static_cast<Daemon*>(self);
  char why[64];
  std::snprintf(why, sizeof why, "--duration %g s reached", d->options_.duration_s);
  d->duration_source_ = 0;
  d->begin_shutdown(why);
  return G_SOURCE_REMOVE;
}

void Daemon::tick() {
  for (auto& r : runners_) r->tick();
  std::erase_if(retiring_, [](const auto& r) { return r->state() == RunnerState::Stopped; });
  std::erase_if(teardowns_, [](const auto& t) { return t->done(); });
  check_ready();
  // Every pipeline is done (file sources without loop, read to their end): nothing more will
  // come, so the daemon stops as on SIGTERM and exits 0.
  if (!stopping_ && !runners_.empty() &&
      std::all_of(runners_.begin(), runners_.end(),
                  [](const auto& r) { return r->state() == RunnerState::Stopped; })) {
    begin_shutdown("every pipeline's source has ended");
  }
  if (stopping_) check_shutdown();
  if (metrics_) metrics_->publish(snapshot());
}

void Daemon::check_ready() {
  if (ready_ || stopping_) return;
  bool all = true;
  for (const auto& r : runners_) all = all && (r->flowing() || r->state() == RunnerState::Stopped);
  const double waited = static_cast<double>(now_us() - started_us_) * 1e-6;
  if (!all && waited < kReadyTimeoutS) return;
  if (!all) {
    for (const auto& r : runners_) {
      if (!r->flowing()) {
        spdlog::error("pipeline {} has no frames after {:.0f} s ({}{}); ready without it",
                      r->name(), waited, to_string(r->state()),
                      r->last_fault().empty() ? "" : ": " + r->last_fault());
      }
    }
  }
  ready_ = true;
  notifier_.ready();
  status();
  spdlog::info(
      "ready: frames flow in {} of {} pipeline(s)",
      std::count_if(runners_.begin(), runners_.end(), [](const auto& r) { return r->flowing(); }),
      runners_.size());
}

void Daemon::status() {
  std::string line;
  for (const auto& r : runners_) {
    if (!line.empty()) line += "; ";
    line += r->status_text();
  }
  if (stopping_) line = "stopping: " + line;
  notifier_.status(line);
}

void Daemon::watchdog() {
  // Every running pipeline must have passed frames since the last ping; a pipeline being
  // restarted (or done) is in its runner's hands and does not hold the ping back.
  bool progress = true;
  std::vector<std::uint64_t> frames;
  std::vector<std::string> names;
  for (const auto& r : runners_) {
    const std::uint64_t n = r->counters().frames_out.load();
    names.push_back(r->name());
    frames.push_back(n);
    if (r->state() != RunnerState::Running) continue;
    for (std::size_t i = 0; i < watchdog_names_.size(); ++i) {
      if (watchdog_names_[i] == r->name() && watchdog_frames_[i] == n) progress = false;
    }
  }
  watchdog_frames_ = std::move(frames);
  watchdog_names_ = std::move(names);
  if (progress) {
    notifier_.watchdog();
  } else {
    spdlog::warn("watchdog: a running pipeline passed no frame since the last ping; held back");
  }
}

void Daemon::guard_disk() {
  if (disk_busy_.exchange(true)) return;  // the last round still runs (a big night going)
  if (disk_thread_.joinable()) disk_thread_.join();
  DiskGuardPolicy policy{config_.disk.min_free_bytes,
                         static_cast<std::uint32_t>(config_.disk.keep_nights)};
  const auto state = config_.state_directory;
  const std::string night = night_name(g_get_real_time(), NightClock::Local);
  disk_thread_ = std::thread([this, policy, state, night] {
    try {
      DiskGuard guard(state, policy);
      const DiskGuardReport report = guard.enforce(night);
      for (const auto& f : report.failures) spdlog::error("disk guard: {}", f);
    } catch (const std::exception& e) {
      spdlog::error("disk guard: {}", e.what());
    }
    disk_busy_.store(false);
  });
}

// ---- reload ------------------------------------------------------------------------------

void Daemon::reload() {
  if (stopping_) return;
  notifier_.reloading();
  spdlog::info("reload: reading {}", options_.config_path.string());
  DaemonConfig next;
  try {
    next = load_daemon_config(options_.config_path);
  } catch (const ConfigErrors& errors) {
    for (const ConfigProblem& p : errors.problems()) spdlog::error("reload: {}", p.str());
    spdlog::error("reload: {} problem(s) in {}; the running config stays", errors.problems().size(),
                  options_.config_path.string());
    ++reload_failures_;
    notifier_.ready();
    return;
  } catch (const std::exception& e) {
    spdlog::error("reload: {}; the running config stays", e.what());
    ++reload_failures_;
    notifier_.ready();
    return;
  }
  if (next.log != config_.log) set_log_level(next.log.level);
  const bool metrics_changed = !(next.metrics == config_.metrics);
  const bool new_state_dir = next.state_directory != config_.state_directory;
  const bool mqtt_changed = !(next.mqtt == config_.mqtt);
  const bool rtsp_changed = !(next.rtsp == config_.rtsp);
  const std::vector<PipelineChange> changes = plan_reload(config_, next);
  config_ = std::move(next);
  if (mqtt_changed) {
    // Before the pipelines' own changes, which may turn their publishing on or off.
    spdlog::info("reload: mqtt: the broker settings changed; publishers connect again");
    for (auto& r : runners_) r->set_mqtt(config_.mqtt);
  }
  if (rtsp_changed) {
    // A new server: its clients connect again (a player does by itself).
    spdlog::info("reload: rtsp: the server settings changed; it starts again");
    start_rtsp();
    for (auto& r : runners_) r->set_rtsp(rtsp_);
  }
  if (new_state_dir) {
    try {
      ensure_directory(config_.state_directory);
    } catch (const std::exception& e) {
      spdlog::error("reload: state-directory: {}", e.what());
    }
  }
  for (const PipelineChange& change : changes) {
    if (change.kind != PipelineChangeKind::Unchanged) {
      spdlog::info("reload: {}: {} ({})", change.name, to_string(change.kind), change.reason);
    }
    auto it = std::find_if(runners_.begin(), runners_.end(),
                           [&](const auto& r) { return r->name() == change.name; });
    const PipelineConfig* pipeline = config_.find_pipeline(change.name);
    const bool running = it != runners_.end();
    if (!running && change.kind != PipelineChangeKind::Add) continue;  // none to change
    if (change.kind != PipelineChangeKind::Remove && pipeline == nullptr) continue;
    switch (change.kind) {
      case PipelineChangeKind::Unchanged:
        break;
      case PipelineChangeKind::Live:
        (*it)->apply_live(*pipeline);
        break;
      case PipelineChangeKind::Rebuild:
        if (new_state_dir) {
          // Its files go elsewhere now: a runner of its own, with new outputs.
          (*it)->stop();
          retiring_.push_back(std::move(*it));
          runners_.erase(it);
          start_pipeline(*pipeline);
        } else {
          (*it)->rebuild(*pipeline);
        }
        break;
      case PipelineChangeKind::Remove:
        if (rtsp_) rtsp_->unmount(change.name);
        (*it)->stop();
        retiring_.push_back(std::move(*it));
        runners_.erase(it);
        break;
      case PipelineChangeKind::Add:
        start_pipeline(*pipeline);
        break;
    }
  }
  // The runners in the new config's order, for STATUS= and the summary.
  std::stable_sort(runners_.begin(), runners_.end(), [&](const auto& a, const auto& b) {
    const auto index = [&](const std::string& name) {
      for (std::size_t i = 0; i < config_.pipelines.size(); ++i) {
        if (config_.pipelines[i].name == name) return i;
      }
      return config_.pipelines.size();
    };
    return index(a->name()) < index(b->name());
  });
  if (metrics_changed) start_metrics();
  ++reloads_;
  notifier_.ready();
  status();
  spdlog::info("reload: done");
}

// ---- shutdown ----------------------------------------------------------------------------

void Daemon::begin_shutdown(const char* why) {
  if (stopping_) {
    spdlog::info("stopping already ({})", why);
    return;
  }
  stopping_ = true;
  spdlog::info("stopping: {}; end of stream into every pipeline (at most {} s)", why,
               config_.shutdown_timeout_s);
  notifier_.stopping();
  stop_deadline_us_ = now_us() + static_cast<std::int64_t>(config_.shutdown_timeout_s * 1e6);
  for (auto& r : runners_) r->stop();
  for (auto& r : retiring_) r->stop();
  status();
  check_shutdown();
}

void Daemon::check_shutdown() {
  const std::int64_t now = now_us();
  const auto stopped = [](const auto& r) { return r->state() == RunnerState::Stopped; };
  bool all = std::all_of(runners_.begin(), runners_.end(), stopped) &&
             std::all_of(retiring_.begin(), retiring_.end(), stopped);
  if (!all && now >= stop_deadline_us_) {
    for (auto& r : runners_) {
      if (!stopped(r)) r->force_stop();
    }
    for (auto& r : retiring_) r->force_stop();
    all = true;
    forced_ = true;
  }
  if (!all) return;
  if (teardown_deadline_us_ == 0) {
    teardown_deadline_us_ = now + static_cast<std::int64_t>(kTeardownGraceS * 1e6);
  }
  std::erase_if(teardowns_, [](const auto& t) { return t->done(); });
  if (!teardowns_.empty() && now < teardown_deadline_us_) return;
  for (const auto& t : teardowns_) {
    spdlog::error("pipeline {}: still stopping after {:.1f} s; left behind", t->name(),
                  static_cast<double>(now - t->started_us()) * 1e-6);
  }
  g_main_loop_quit(loop_);
}

// ---- views -------------------------------------------------------------------------------

DaemonSnapshot Daemon::snapshot() const {
  DaemonSnapshot s;
  for (const auto& r : runners_) {
    const PipelineCounters& c = r->counters();
    PipelineSnapshot p;
    p.name = r->name();
    p.state = std::string(to_string(r->state()));
    p.flowing = r->flowing();
    p.backend = r->active_backend();
    p.fault = r->last_fault();
    p.frames_in = c.frames_in;
    p.frames_out = c.frames_out;
    p.dropped = c.dropped;
    p.overrun = c.overrun;
    p.detections = c.detections;
    p.mover_reports = c.mover_reports;
    p.restarts = c.restarts;
    p.rebuilds = c.rebuilds;
    p.live_updates = c.live_updates;
    p.backend_fallbacks = c.backend_fallbacks;
    p.json_lines = c.json_lines;
    p.json_failures = c.json_failures;
    p.fits_files = c.fits_files;
    p.fits_failures = c.fits_failures;
    p.previews = c.previews;
    p.video_segments = c.video_segments;
    p.clip_events = c.clips.events;
    p.clips = c.clips.clips;
    p.clips_limited = c.clips.limited;
    p.clip_failures = c.clips.failures;
    p.objects = c.last_objects;
    p.movers = c.last_movers;
    p.fps = c.fps;
    p.latency_s = c.latency_s;
    p.mqtt = r->outputs().publishing();
    p.mqtt_published = c.mqtt.published;
    p.mqtt_dropped = c.mqtt.dropped;
    p.mqtt_failed = c.mqtt.failed;
    p.mqtt_queued = c.mqtt.queued;
    p.mqtt_connections = c.mqtt.connections;
    p.mqtt_connected = c.mqtt.connected;
    if (const auto& times = r->chain_times()) {
      p.stage_s = times->stage_s;
      p.upload_s = times->upload_s;
      p.download_s = times->download_s;
      p.zero_copy = times->zero_copy;
      p.copied = times->copied;
    }
    for (int v = 0; v < kStreamViews; ++v) {
      if (const auto& feed = r->views()[v]) {
        const ViewFeedCounts counts = feed->counts();
        p.views.push_back(
            ViewSnapshot{std::string(to_string(static_cast<StreamView>(v))),
                         rtsp_ ? rtsp_->url(r->name(), static_cast<StreamView>(v)) : std::string(),
                         counts.sinks > 0, counts.frames, counts.dropped});
      }
    }
    for (const SenderStatus& sender : r->senders()) {
      p.senders.push_back(SenderSnapshot{sender.output, std::string(to_string(sender.view)),
                                         sender.frames, sender.errors});
    }
    p.preview = r->outputs().paths().preview;
    p.recent_movers = r->outputs().recent_movers();
    s.pipelines.push_back(std::move(p));
  }
  s.clock = clock_;
  s.reloads = reloads_;
  s.reload_failures = reload_failures_;
  if (rtsp_) {
    s.rtsp = true;
    s.rtsp_clients = rtsp_->counts().clients;
    s.rtsp_connections = rtsp_->counts().connections;
  }
  s.uptime_s = static_cast<double>(now_us() - started_us_) * 1e-6;
  s.ready = ready_;
  s.stopping = stopping_;
  return s;
}

void Daemon::print_summary(std::ostream& out) const {
  const double elapsed = static_cast<double>(now_us() - started_us_) * 1e-6;
  out << "\nstarsiftd: ran " << std::lround(elapsed) << " s"
      << (forced_ ? " (stopped past shutdown-timeout-s)" : "") << "\n";
  for (const auto& r : runners_) {
    const PipelineCounters& c = r->counters();
    char line[256];
    out << "\npipeline " << r->name() << " (backend "
        << (r->active_backend().empty() ? "?" : r->active_backend()) << ")\n";
    // Per second of the run beside the rate the timestamps give: a source that cannot keep
    // its rate (a synthetic sky rendered on a slow CPU) stamps frames faster than they come.
    const double seconds = std::max(elapsed, 1e-3);
    std::snprintf(line, sizeof line,
                  "  frames      %llu in (%.1f/s), %llu through the chain (%.1f/s); %.2f fps "
                  "by the timestamps\n",
                  static_cast<unsigned long long>(c.frames_in.load()),
                  static_cast<double>(c.frames_in.load()) / seconds,
                  static_cast<unsigned long long>(c.frames_out.load()),
                  static_cast<double>(c.frames_out.load()) / seconds, c.fps.load());
    out << line;
    std::snprintf(line, sizeof line,
                  "  drops       %llu missing from the source, %llu the chain could not take\n",
                  static_cast<unsigned long long>(c.dropped.load()),
                  static_cast<unsigned long long>(c.overrun.load()));
    out << line;
    std::snprintf(line, sizeof line,
                  "  detections  %llu objects, %llu mover reports; %llu restarts\n",
                  static_cast<unsigned long long>(c.detections.load()),
                  static_cast<unsigned long long>(c.mover_reports.load()),
                  static_cast<unsigned long long>(c.restarts.load()));
    out << line;
    const TruthSummary truth = r->outputs().truth_summary();
    if (truth.movers > 0) {
      std::snprintf(line, sizeof line,
                    "  sky truth   %zu movers: %zu detected, %zu tracked as movers; %.1f %% of "
                    "mover-frames with a detection within %.0f px\n",
                    truth.movers, truth.detected, truth.tracked,
                    truth.mover_frames > 0 ? 100.0 * static_cast<double>(truth.matched_frames) /
                                                 static_cast<double>(truth.mover_frames)
                                           : 0.0,
                    kTruthMatchRadius);
      out << line;
    }
    const OutputPaths paths = r->outputs().paths();
    const auto show = [&](const char* what, const std::filesystem::path& p,
                          const std::string& extra) {
      out << "  " << what << (p.empty() ? std::string("(none)") : p.string()) << extra << "\n";
    };
    show("JSON lines  ", paths.detections, " (" + std::to_string(c.json_lines.load()) + " lines)");
    show("FITS        ", paths.fits, " (" + std::to_string(c.fits_files.load()) + " files)");
    show("preview     ", paths.preview, "");
    if (c.mqtt.pushed.load() > 0 || r->outputs().publishing()) {
      std::snprintf(line, sizeof line,
                    "  MQTT        %llu published, %llu dropped (queue full), %llu failed, %llu "
                    "unconfirmed\n",
                    static_cast<unsigned long long>(c.mqtt.published.load()),
                    static_cast<unsigned long long>(c.mqtt.dropped.load()),
                    static_cast<unsigned long long>(c.mqtt.failed.load()),
                    static_cast<unsigned long long>(c.mqtt.queued.load()));
      out << line;
    }
    if (r->config().outputs.clips.enabled) {
      std::snprintf(
          line, sizeof line,
          "  clips       %llu written, %llu events, %llu over max-per-hour, %llu failed\n",
          static_cast<unsigned long long>(c.clips.clips.load()),
          static_cast<unsigned long long>(c.clips.events.load()),
          static_cast<unsigned long long>(c.clips.limited.load()),
          static_cast<unsigned long long>(c.clips.failures.load()));
      out << line;
    }
    if (r->config().outputs.video.enabled) {
      show("video       ", paths.video,
           " (" + std::to_string(c.video_segments.load()) + " segments)");
    }
  }
  out.flush();
}

}  // namespace starsift::daemon
