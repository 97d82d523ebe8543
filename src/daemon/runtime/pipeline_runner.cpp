// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/runtime/pipeline_runner.hpp"

#include <algorithm>
#include <cmath>
#include <variant>

#include "daemon/outputs/night_layout.hpp"
#include "daemon/runtime/chain_text.hpp"
#include "daemon/runtime/logging.hpp"
#include "pipeline/error.hpp"

namespace starsift::daemon {

std::string_view to_string(RunnerState state) noexcept {
  switch (state) {
    case RunnerState::Starting:
      return "starting";
    case RunnerState::Running:
      return "running";
    case RunnerState::Waiting:
      return "waiting to restart";
    case RunnerState::Stopping:
      return "stopping";
    case RunnerState::Stopped:
      return "stopped";
  }
  return "unknown";
}

namespace {

std::int64_t now_us() {
  return g_get_monotonic_time();
}

// What the source is, for FITS headers (INSTRUME) and the log; never a password.
std::string source_description(const SourceConfig& source) {
  if (const auto* sky = std::get_if<SkySourceConfig>(&source)) {
    return "sky seed " + std::to_string(sky->params.seed);
  }
  if (const auto* file = std::get_if<FileSourceConfig>(&source)) return file->path.string();
  if (const auto* v4l2 = std::get_if<V4l2SourceConfig>(&source)) return v4l2->device;
  if (const auto* rtsp = std::get_if<RtspSourceConfig>(&source)) {
    std::string url = rtsp->url;
    const auto scheme = url.find("://");
    const auto at = url.find('@', scheme == std::string::npos ? 0 : scheme + 3);
    const auto slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    if (scheme != std::string::npos && at != std::string::npos && at < slash) {
      url = url.substr(0, scheme + 3) + url.substr(at + 1);
    }
    return url;
  }
  if (const auto* aravis = std::get_if<AravisSourceConfig>(&source)) {
    return aravis->camera.empty() ? "aravis (first camera)" : aravis->camera;
  }
  return "gst";
}

// A view sender that failed (a network that refuses, a consumer gone wrong) is made again
// after this long, not at every tick.
constexpr std::int64_t kSenderRetryUs = 10'000'000;

bool mentions_cuda(const std::string& text) {
  return text.find("CUDA") != std::string::npos || text.find("cuda") != std::string::npos;
}

}  // namespace

PipelineRunner::PipelineRunner(PipelineConfig config, RunnerContext context)
    : config_(std::move(config)),
      context_(std::move(context)),
      log_(pipeline_logger(config_.name)),
      counters_(std::make_unique<PipelineCounters>()),
      backoff_s_(config_.restart.initial_s) {
  outputs_ = make_outputs();
  update_publisher();
}

PipelineRunner::~PipelineRunner() {
  if (restart_timer_ != 0) g_source_remove(restart_timer_);
  teardown();
}

FitsPipelineInfo PipelineRunner::fits_info() const {
  return {config_.name, source_description(config_.source), chain_flow_yaml(config_.chain.config)};
}

void PipelineRunner::set_mqtt(std::optional<MqttConfig> broker) {
  context_.mqtt = std::move(broker);
  update_publisher();
}

void PipelineRunner::set_rtsp(std::shared_ptr<RtspServer> server) {
  context_.rtsp = std::move(server);
  mount_views();
}

void PipelineRunner::mount_views() {
  // A feed lives as long as its view is taken, across restarts and rebuilds: its clients stay.
  const std::vector<StreamView> wanted = views_wanted(config_.outputs);
  for (int v = 0; v < kStreamViews; ++v) {
    const auto view = static_cast<StreamView>(v);
    if (std::find(wanted.begin(), wanted.end(), view) == wanted.end()) {
      if (views_[v]) views_[v]->end();
      views_[v].reset();
    } else if (!views_[v]) {
      views_[v] = std::make_shared<ViewFeed>(config_.name, view, nominal_fps(config_.source));
    }
  }
  mount_senders();
  if (context_.rtsp) context_.rtsp->mount(config_.name, views_, config_.outputs.rtsp.streams);
  if (instance_) instance_->set_views(views_);
  update_clips();
}

void PipelineRunner::update_clips() {
  const ClipsOutput& wanted = config_.outputs.clips;
  const auto& feed = views_[static_cast<int>(wanted.view)];
  if (!wanted.enabled || !feed) {
    outputs_->clip_to(nullptr);
    clips_.reset();  // an open clip is finished with what it has
    return;
  }
  if (clips_ && clips_->settings().clips == wanted && clips_->feed() == feed) return;
  const double fps = nominal_fps(config_.source);
  ClipRecorderSettings settings{
      config_.name, context_.layout, fits_info(), wanted,
      launch_text({h264_encoder(wanted.encoder, wanted.bitrate_kbps, key_frame_interval(fps, 1.0),
                                context_.plan_options)})};
  outputs_->clip_to(nullptr);
  clips_.reset();
  try {
    clips_ = std::make_shared<ClipRecorder>(std::move(settings), feed, counters_->clips);
    outputs_->clip_to(clips_);
    log_->info("event clips of the {} view: {} s before, {} s after each event{}",
               to_string(wanted.view), wanted.before_s, wanted.after_s,
               wanted.fits ? ", raw frames as a FITS cube" : "");
  } catch (const std::exception& e) {
    log_->error("{} (no event clips)", e.what());
    counters_->clips.failures.fetch_add(1);
  }
}

void PipelineRunner::update_publisher() {
  std::optional<MqttPublisherSettings> settings;
  if (context_.mqtt && config_.outputs.mqtt.enabled) {
    settings = mqtt_publisher_settings(*context_.mqtt, config_.name);
  }
  outputs_->publish_to(settings, log_);
}

std::shared_ptr<FrameOutputs> PipelineRunner::make_outputs() const {
  return std::make_shared<FrameOutputs>(config_.name, context_.layout, config_.outputs, fits_info(),
                                        nominal_fps(config_.source), *counters_);
}

void PipelineRunner::start() {
  restarting_ = false;
  start_instance();
}

void PipelineRunner::start_instance() {
  restart_timer_ = 0;
  if (restarting_) counters_->restarts.fetch_add(1);
  restarting_ = true;  // every later start is a restart
  try {
    PipelineConfig effective = config_;
    if (force_cpu_) effective.backend = Backend::Cpu;
    plan_ = plan_pipeline(effective, context_.plan_options);
    log_->info("starting: {}", plan_.describe());
    mount_views();
    instance_ = std::make_unique<PipelineInstance>(plan_, outputs_, views_);
    outputs_->new_stream();
    GstBus* bus = gst_element_get_bus(instance_->pipeline());
    bus_watch_ = gst_bus_add_watch(bus, &PipelineRunner::bus_callback, this);
    gst_object_unref(bus);
    started_us_ = now_us();
    frames_at_start_ = counters_->frames_out.load();
    state_ = RunnerState::Starting;
    instance_->play();
  } catch (const std::exception& e) {
    if (!fall_back_to_cpu(e.what(), e.what())) fault(e.what());
  }
}

void PipelineRunner::teardown() {
  if (bus_watch_ != 0) {
    g_source_remove(bus_watch_);
    bus_watch_ = 0;
  }
  if (instance_) {
    if (auto t = instance_->release(); t && context_.teardowns != nullptr) {
      context_.teardowns->push_back(std::move(t));
    }
    instance_.reset();
  }
}

void PipelineRunner::fault(const std::string& reason) {
  teardown();
  last_fault_ = reason;
  const double delay = backoff_s_;
  backoff_s_ = std::min(backoff_s_ * 2.0, config_.restart.max_s);
  log_->error("{}; restarting in {:.3g} s", reason, delay);
  schedule_restart(delay);
}

void PipelineRunner::schedule_restart(double delay_s) {
  state_ = RunnerState::Waiting;
  if (restart_timer_ != 0) g_source_remove(restart_timer_);
  const auto ms = static_cast<guint>(std::max(0.0, std::round(delay_s * 1000.0)));
  restart_at_us_ = now_us() + static_cast<std::int64_t>(ms) * 1000;
  restart_timer_ = g_timeout_add(ms, &PipelineRunner::restart_callback, this);
}

gboolean PipelineRunner::restart_callback(gpointer self) {
  auto* runner = static_cast<PipelineRunner*>(self);
  runner->restart_timer_ = 0;
  runner->start_instance();
  return G_SOURCE_REMOVE;
}

bool PipelineRunner::fall_back_to_cpu(const std::string& fault_text, const std::string& evidence) {
  if (config_.backend != Backend::Auto || force_cpu_ || !mentions_cuda(evidence)) return false;
  force_cpu_ = true;
  counters_->backend_fallbacks.fetch_add(1);
  log_->warn(
      "backend auto: the GPU failed or cannot run this chain ({}); the pipeline runs on "
      "the CPU from now on",
      fault_text);
  teardown();
  last_fault_ = fault_text;
  schedule_restart(0.0);
  return true;
}

double PipelineRunner::restart_in_s() const {
  if (state_ != RunnerState::Waiting) return 0.0;
  return std::max<double>(0.0, static_cast<double>(restart_at_us_ - now_us()) * 1e-6);
}

gboolean PipelineRunner::bus_callback(GstBus*, GstMessage* message, gpointer self) {
  return static_cast<PipelineRunner*>(self)->on_bus(message) ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

bool PipelineRunner::on_bus(GstMessage* message) {
  switch (GST_MESSAGE_TYPE(message)) {
    case GST_MESSAGE_ERROR: {
      GError* error = nullptr;
      gchar* debug = nullptr;
      gst_message_parse_error(message, &error, &debug);
      const std::string from = GST_MESSAGE_SRC_NAME(message);
      const std::string text = error != nullptr ? error->message : "unknown error";
      const std::string detail = debug != nullptr ? debug : "";
      g_clear_error(&error);
      g_free(debug);
      if (state_ == RunnerState::Stopping) {
        log_->error("{}: {} (while stopping)", from, text);
        teardown();
        state_ = RunnerState::Stopped;
        return false;
      }
      log_->error("{}: {}{}", from, text, detail.empty() ? "" : " (" + detail + ")");
      if (fall_back_to_cpu(from + ": " + text, text + " " + detail)) return false;
      fault(from + ": " + text);
      return false;  // the watch went with the pipeline
    }
    case GST_MESSAGE_WARNING: {
      GError* error = nullptr;
      gchar* debug = nullptr;
      gst_message_parse_warning(message, &error, &debug);
      log_->warn("{}: {}", GST_MESSAGE_SRC_NAME(message), error != nullptr ? error->message : "");
      g_clear_error(&error);
      g_free(debug);
      return true;
    }
    case GST_MESSAGE_EOS:
      on_eos();
      return state_ != RunnerState::Stopped && state_ != RunnerState::Waiting;
    case GST_MESSAGE_ELEMENT: {
      const GstStructure* s = gst_message_get_structure(message);
      if (s != nullptr && gst_structure_has_name(s, "splitmuxsink-fragment-closed")) {
        const gchar* location = gst_structure_get_string(s, "location");
        log_->info("recording closed: {}", location != nullptr ? location : "?");
      }
      return true;
    }
    default:
      return true;
  }
}

void PipelineRunner::on_eos() {
  if (state_ == RunnerState::Stopping) {
    log_->info("stopped: end of stream reached every output");
    teardown();
    state_ = RunnerState::Stopped;
    return;
  }
  if (plan_.loop_file && instance_) {
    log_->info("the file ended; playing it again from its start");
    instance_->rewind();
    return;
  }
  if (std::holds_alternative<FileSourceConfig>(config_.source)) {
    log_->info("the file ended; the pipeline is done");
    teardown();
    state_ = RunnerState::Stopped;
    return;
  }
  fault("the source ended its stream");
}

void PipelineRunner::tick() {
  if (state_ != RunnerState::Starting && state_ != RunnerState::Running) return;
  mount_senders();  // one that failed is made again, at most every kSenderRetryUs
  const std::int64_t now = now_us();
  if (state_ == RunnerState::Starting && counters_->frames_out.load() > frames_at_start_) {
    state_ = RunnerState::Running;
    backoff_s_ = config_.restart.initial_s;
    last_fault_.clear();
    if (instance_) active_backend_ = instance_->active_backend();
    log_->info("frames flow (backend {})", active_backend_.empty() ? "?" : active_backend_);
    if (instance_) {
      const std::string camera = instance_->camera_description();
      if (!camera.empty()) log_->info("camera {}", camera);
    }
  }
  if (state_ == RunnerState::Running && instance_ && now - chain_times_at_us_ >= 1'000'000) {
    chain_times_ = instance_->chain_times();
    chain_times_at_us_ = now;
  }
  const std::int64_t last = std::max(started_us_, counters_->last_frame_in_us.load());
  const double idle_s = static_cast<double>(now - last) * 1e-6;
  if (idle_s >= config_.stall_timeout_s) {
    char text[96];
    std::snprintf(text, sizeof text, "no frame for %.1f s (stall-timeout-s %g)", idle_s,
                  config_.stall_timeout_s);
    fault(text);
  }
}

void PipelineRunner::apply_live(const PipelineConfig& next) {
  const ChainSplit before = split_chain(config_.chain.config);
  const ChainSplit after = split_chain(next.chain.config);
  const bool chain_changed = !(config_.chain == next.chain);
  config_.chain = next.chain;
  config_.outputs = next.outputs;
  config_.restart = next.restart;
  config_.stall_timeout_s = next.stall_timeout_s;
  outputs_->update(config_.outputs, fits_info());
  update_publisher();
  mount_views();  // the same views (else a rebuild): the senders' and mounts' settings
  counters_->live_updates.fetch_add(1);
  if (!chain_changed || !instance_) return;  // the next start builds from config_
  try {
    if (!after.chain.empty() && chain_flow_yaml(before.chain) != chain_flow_yaml(after.chain)) {
      instance_->set_chain(chain_flow_yaml(after.chain));
    }
    if (after.detect && before.detect && !(*after.detect == *before.detect)) {
      instance_->set_detect(*after.detect);
    }
    plan_ = plan_pipeline(config_, context_.plan_options);
  } catch (const std::exception& e) {
    fault(std::string("live update: ") + e.what());
  }
}

void PipelineRunner::rebuild(const PipelineConfig& next) {
  if (restart_timer_ != 0) {
    g_source_remove(restart_timer_);
    restart_timer_ = 0;
  }
  teardown();
  config_ = next;
  outputs_->update(config_.outputs, fits_info());
  update_publisher();
  counters_->rebuilds.fetch_add(1);
  backoff_s_ = config_.restart.initial_s;
  restarting_ = false;
  start_instance();
}

void PipelineRunner::stop() {
  if (restart_timer_ != 0) {
    g_source_remove(restart_timer_);
    restart_timer_ = 0;
  }
  if (instance_ && (state_ == RunnerState::Starting || state_ == RunnerState::Running)) {
    state_ = RunnerState::Stopping;
    instance_->send_eos();
    return;
  }
  if (state_ != RunnerState::Stopping) {
    teardown();
    state_ = RunnerState::Stopped;
  }
}

void PipelineRunner::force_stop() {
  if (restart_timer_ != 0) {
    g_source_remove(restart_timer_);
    restart_timer_ = 0;
  }
  if (state_ == RunnerState::Stopping) log_->warn("end of stream did not come in time: stopped");
  teardown();
  state_ = RunnerState::Stopped;
}

void PipelineRunner::finish_outputs() {
  // An open clip is finished with what it has, before the files are synced.
  outputs_->clip_to(nullptr);
  clips_.reset();
  outputs_->finish();
}

std::string PipelineRunner::status_text() const {
  char text[160];
  const PipelineCounters& c = *counters_;
  switch (state_) {
    case RunnerState::Running:
    case RunnerState::Stopping:
      std::snprintf(text, sizeof text, "%s: %.2f fps, %llu detections, %llu dropped",
                    config_.name.c_str(), c.fps.load(),
                    static_cast<unsigned long long>(c.detections.load()),
                    static_cast<unsigned long long>(c.dropped.load() + c.overrun.load()));
      return text;
    case RunnerState::Waiting:
      std::snprintf(text, sizeof text, "%s: restarting in %.0f s (%llu restarts)",
                    config_.name.c_str(), std::ceil(restart_in_s()),
                    static_cast<unsigned long long>(c.restarts.load()));
      return text;
    default:
      return config_.name + ": " + std::string(to_string(state_));
  }
}

void PipelineRunner::mount_senders() {
  const OutputsConfig& o = config_.outputs;
  const std::filesystem::path sdp_dir = context_.layout.state_dir / config_.name;
  const auto sdp_path = [&](const RtpOutput& rtp) {
    return sdp_dir / (std::string(to_string(rtp.view)) + ".sdp");
  };
  if (rtp_sender_.rtp && !o.rtp) {
    // A player given the file must not wait for a stream that no longer comes.
    std::error_code ignored;
    std::filesystem::remove(sdp_path(*rtp_sender_.rtp), ignored);
  }
  const bool rtp_changed = rtp_sender_.rtp != o.rtp;
  rtp_sender_.rtp = o.rtp;
  update_sender(
      rtp_sender_, rtp_changed, o.rtp ? std::optional(o.rtp->view) : std::nullopt,
      [&]() -> std::unique_ptr<ViewSender> {
        const RtpOutput& rtp = *o.rtp;
        const std::string encoder = launch_text({h264_encoder(
            rtp.encoder, rtp.bitrate_kbps, key_frame_interval(nominal_fps(config_.source), 2.0),
            context_.plan_options)});
        ensure_directory(sdp_dir);
        return ViewSender::rtp(config_.name, rtp, encoder, sdp_path(rtp),
                               views_[static_cast<int>(rtp.view)], log_);
      });
  const bool shm_changed = shm_sender_.shm != o.shm;
  shm_sender_.shm = o.shm;
  update_sender(shm_sender_, shm_changed, o.shm ? std::optional(o.shm->view) : std::nullopt,
                [&]() -> std::unique_ptr<ViewSender> {
                  return ViewSender::shm(config_.name, *o.shm,
                                         views_[static_cast<int>(o.shm->view)], log_);
                });
}

void PipelineRunner::update_sender(SenderSlot& slot, bool changed, std::optional<StreamView> view,
                                   const std::function<std::unique_ptr<ViewSender>()>& make) {
  const std::shared_ptr<ViewFeed> feed = view ? views_[static_cast<int>(*view)] : nullptr;
  const bool moved = slot.sender && slot.sender->feed() != feed;
  const bool failed = slot.sender ? slot.sender->failed() : feed != nullptr;
  if (!changed && !moved && !failed) return;
  if (!changed && !moved && now_us() < slot.retry_at_us) return;
  if (slot.sender) {
    const ViewSenderCounts counts = slot.sender->counts();
    slot.frames += counts.frames;
    slot.errors += counts.errors;
    slot.sender.reset();  // first: the new one may want its socket or port
  }
  if (!feed) return;
  try {
    slot.sender = make();
  } catch (const std::exception& e) {
    log_->error("{} (not sent)", e.what());
    ++slot.errors;
  }
  slot.retry_at_us = now_us() + kSenderRetryUs;
}

std::vector<SenderStatus> PipelineRunner::senders() const {
  std::vector<SenderStatus> list;
  const auto add = [&](const SenderSlot& slot, const char* output, StreamView view) {
    SenderStatus status{output, view, slot.frames, slot.errors};
    if (slot.sender) {
      status.frames += slot.sender->counts().frames;
      status.errors += slot.sender->counts().errors;
    }
    list.push_back(std::move(status));
  };
  if (config_.outputs.rtp) add(rtp_sender_, "rtp", config_.outputs.rtp->view);
  if (config_.outputs.shm) add(shm_sender_, "shm", config_.outputs.shm->view);
  return list;
}

}  // namespace starsift::daemon
