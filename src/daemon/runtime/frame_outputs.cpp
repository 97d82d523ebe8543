// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/runtime/frame_outputs.hpp"

#include <glib.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>

#include "daemon/runtime/preview_picture.hpp"

namespace starsift::daemon {

namespace {

constexpr std::size_t kRecentFrames = 256;   // frames the chain may hold between source and out
constexpr std::size_t kRawFrames = 12;       // raw frames kept for FITS on detection and preview
constexpr std::size_t kDetectionJobs = 512;  // ~20 s at 25 fps of lines waiting on a slow disk
constexpr std::size_t kFrameJobs = 4;        // FITS frames and previews waiting
constexpr std::int64_t kHourUs = 3600LL * 1000 * 1000;
// A publisher replaced by a reload gets this long to have its queue confirmed by its broker
// (the main loop waits); what is left goes on through the new one.
constexpr std::chrono::milliseconds kPublisherSwapDrain{500};
// At shutdown, the publisher gets this long to have the last lines confirmed; a broker that
// is away costs no wait at all.
constexpr std::chrono::milliseconds kPublisherFinishDrain{2000};

std::int64_t now_us() {
  return g_get_monotonic_time();
}
std::int64_t utc_now_us() {
  return g_get_real_time();
}

}  // namespace

FrameOutputs::FrameOutputs(std::string pipeline, NightLayout layout, OutputsConfig outputs,
                           FitsPipelineInfo fits_info, double nominal_fps,
                           PipelineCounters& counters)
    : pipeline_(std::move(pipeline)),
      layout_(std::move(layout)),
      counters_(counters),
      outputs_(std::move(outputs)),
      fits_info_(std::move(fits_info)),
      clock_(std::make_shared<ClockState>()),
      timing_(nominal_fps),
      recent_(kRecentFrames),
      detections_worker_(pipeline_.substr(0, 10) + "-json", kDetectionJobs),
      frames_worker_(pipeline_.substr(0, 10) + "-fits", kFrameJobs) {}

FrameOutputs::~FrameOutputs() {
  finish();
}

void FrameOutputs::update(OutputsConfig outputs, FitsPipelineInfo fits_info) {
  const std::lock_guard lock(settings_mutex_);
  outputs_ = std::move(outputs);
  fits_info_ = std::move(fits_info);
}

void FrameOutputs::publish_to(const std::optional<MqttPublisherSettings>& settings,
                              std::shared_ptr<spdlog::logger> log) {
  publish_wanted_.store(settings.has_value());
  // The swap runs on the detections worker, between two lines: each line before it goes to
  // the old publisher, each after it to the new one, none to a publisher that is stopping.
  // A worker that refuses the job (full, or finished) has it done here.
  const auto swap = [this, settings, log] { swap_publisher(settings, log); };
  if (!detections_worker_.post(swap)) swap();
}

void FrameOutputs::swap_publisher(const std::optional<MqttPublisherSettings>& settings,
                                  std::shared_ptr<spdlog::logger> log) {
  std::shared_ptr<MqttPublisher> current;
  {
    const std::lock_guard lock(settings_mutex_);
    current = publisher_;
  }
  if (!current && !settings) return;
  if (current && settings && current->settings() == *settings) return;  // the same broker
  std::deque<std::string> carried;
  if (current) current->finish(kPublisherSwapDrain, settings ? &carried : nullptr);
  std::shared_ptr<MqttPublisher> next;
  if (settings) {
    next = std::make_shared<MqttPublisher>(*settings, counters_.mqtt, std::move(log),
                                           std::move(carried));
  }
  const std::lock_guard lock(settings_mutex_);
  publisher_ = std::move(next);
}

bool FrameOutputs::publishing() const {
  const std::lock_guard lock(settings_mutex_);
  return publisher_ != nullptr;
}

void FrameOutputs::set_clock(ClockState clock) {
  auto next = std::make_shared<const ClockState>(std::move(clock));
  const std::lock_guard lock(settings_mutex_);
  clock_ = std::move(next);
}

void FrameOutputs::new_stream() {
  {
    const std::lock_guard lock(source_mutex_);
    timing_.restart();
    for (SourceEntry& e : recent_) e = SourceEntry{};
    have_out_frame_ = false;
  }
  const std::lock_guard lock(raw_mutex_);
  raw_.clear();
}

FrameOutputs::Stamp FrameOutputs::on_source_frame(std::int64_t pts_ns, std::int64_t utc_us) {
  const std::lock_guard lock(source_mutex_);
  Stamp stamp;
  stamp.missing = timing_.add(pts_ns);
  next_frame_ += stamp.missing;
  stamp.frame = next_frame_++;
  recent_[stamp.frame % recent_.size()] = SourceEntry{pts_ns, stamp.frame, utc_us};
  counters_.frames_in.fetch_add(1, std::memory_order_relaxed);
  counters_.dropped.fetch_add(stamp.missing, std::memory_order_relaxed);
  counters_.fps.store(timing_.fps(), std::memory_order_relaxed);
  counters_.last_frame_in_us.store(now_us(), std::memory_order_relaxed);
  return stamp;
}

bool FrameOutputs::find_source(std::int64_t pts_ns, SourceEntry* entry) const {
  if (pts_ns < 0) return false;
  const std::lock_guard lock(source_mutex_);
  // Newest first: the frame just out of the chain is among the latest few.
  for (std::size_t i = 0; i < recent_.size(); ++i) {
    const std::uint64_t frame = next_frame_ - 1 - i;
    if (i >= next_frame_) break;
    const SourceEntry& e = recent_[frame % recent_.size()];
    if (e.pts_ns == pts_ns && e.frame == frame) {
      *entry = e;
      return true;
    }
  }
  return false;
}

void FrameOutputs::clip_to(std::shared_ptr<ClipRecorder> clips) {
  const std::lock_guard lock(settings_mutex_);
  clips_ = std::move(clips);
}

std::optional<std::int64_t> FrameOutputs::source_utc_us(std::int64_t pts_ns) const {
  SourceEntry entry;
  if (!find_source(pts_ns, &entry)) return std::nullopt;
  return entry.utc_us;
}

void FrameOutputs::on_raw_frame(ConstImageView image, std::int64_t pts_ns,
                                std::int64_t duration_ns) {
  FitsOutput fits;
  bool preview = false;
  std::shared_ptr<ClipRecorder> clips;
  {
    const std::lock_guard lock(settings_mutex_);
    fits = outputs_.fits;
    preview = outputs_.preview.every_s > 0;
    clips = clips_;
  }
  SourceEntry source;
  const bool known = find_source(pts_ns, &source);
  const std::int64_t utc = known ? source.utc_us : utc_now_us();
  if (clips && clips->wants_raw()) clips->on_raw(image, known ? source.frame : 0, utc);
  const bool scheduled =
      fits.every_s > 0 && static_cast<double>(utc - last_scheduled_fits_utc_) >= fits.every_s * 1e6;
  if (!scheduled && !fits.on_detection && !preview) return;

  std::shared_ptr<FrameCopy> copy;
  {
    // Reuse the oldest copy's memory once the ring is full.
    const std::lock_guard lock(raw_mutex_);
    if (raw_.size() >= kRawFrames) {
      copy = raw_.front();
      raw_.pop_front();
      if (copy.use_count() > 1) copy.reset();  // still being written: leave it to the writer
    }
  }
  if (!copy) copy = std::make_shared<FrameCopy>();
  copy->assign(image);
  copy->pts_ns = pts_ns;
  copy->utc_us = utc;
  copy->frame = known ? source.frame : 0;
  copy->exposure_s = duration_ns > 0 ? static_cast<double>(duration_ns) * 1e-9 : 0.0;
  {
    const std::lock_guard lock(raw_mutex_);
    raw_.push_back(copy);
  }
  if (scheduled) {
    last_scheduled_fits_utc_ = utc;
    post_fits(copy, "every-s");
  }
}

void FrameOutputs::post_fits(std::shared_ptr<FrameCopy> frame, const char* why) {
  FitsPipelineInfo info;
  std::shared_ptr<const ClockState> clock;
  {
    const std::lock_guard lock(settings_mutex_);
    info = fits_info_;
    clock = clock_;
  }
  const bool queued = frames_worker_.post([this, frame, info, clock, why] {
    try {
      FitsFrame f;
      f.image = frame->view();
      f.utc_us = frame->utc_us;
      f.frame_number = frame->frame;
      if (frame->exposure_s > 0) f.exposure_s = frame->exposure_s;
      const auto dir = layout_.ensure_night_dir(pipeline_, layout_.night_of(frame->utc_us));
      const auto path = write_fits_frame(dir, f, info, *clock);
      counters_.fits_files.fetch_add(1, std::memory_order_relaxed);
      const std::lock_guard lock(paths_mutex_);
      paths_.fits = path;
    } catch (const std::exception& e) {
      counters_.fits_failures.fetch_add(1, std::memory_order_relaxed);
      spdlog::get(pipeline_) ? spdlog::get(pipeline_)->error("FITS frame ({}): {}", why, e.what())
                             : spdlog::error("{}: FITS frame ({}): {}", pipeline_, why, e.what());
    }
  });
  if (!queued) counters_.fits_failures.fetch_add(1, std::memory_order_relaxed);
}

bool FrameOutputs::wants_processed_frame() const {
  double every = 0;
  {
    const std::lock_guard lock(settings_mutex_);
    every = outputs_.preview.every_s;
  }
  return every > 0 && now_us() >= next_preview_us_;
}

void FrameOutputs::write_detections_job(std::uint64_t frame, std::int64_t pts_ns,
                                        std::int64_t utc_us, std::vector<DetectedObject> objects,
                                        std::uint32_t overflow, std::vector<Track> movers,
                                        double fps, bool to_file) {
  std::shared_ptr<const ClockState> clock;
  {
    const std::lock_guard lock(settings_mutex_);
    clock = clock_;
  }
  const bool queued =
      detections_worker_.post([this, frame, pts_ns, utc_us, objects = std::move(objects), overflow,
                               movers = std::move(movers), fps, clock, to_file] {
        std::shared_ptr<MqttPublisher> publisher;
        {
          const std::lock_guard lock(settings_mutex_);
          publisher = publisher_;
        }
        if (publisher) {
          // The file's line, without its newline: one message per line. Published before
          // the file is written, so a slow disk does not hold it back.
          mqtt_line_.clear();
          append_detections_line(mqtt_line_, {frame, pts_ns, utc_us, objects, overflow, movers},
                                 fps, *clock);
          if (!mqtt_line_.empty() && mqtt_line_.back() == '\n') mqtt_line_.pop_back();
          publisher->push(mqtt_line_);
        }
        if (!to_file) return;
        try {
          if (!detections_) detections_ = std::make_unique<DetectionsFile>(layout_, pipeline_);
          detections_->write({frame, pts_ns, utc_us, objects, overflow, movers}, fps, *clock);
          counters_.json_lines.fetch_add(1, std::memory_order_relaxed);
          const std::lock_guard lock(paths_mutex_);
          if (paths_.detections != detections_->path()) paths_.detections = detections_->path();
        } catch (const std::exception& e) {
          // A failing disk fails every line: said once per failure streak by the counter.
          if (counters_.json_failures.fetch_add(1, std::memory_order_relaxed) % 1000 == 0) {
            spdlog::error("{}: detections: {}", pipeline_, e.what());
          }
        }
      });
  if (!queued) counters_.json_failures.fetch_add(1, std::memory_order_relaxed);
}

void FrameOutputs::on_chain_frame(const ChainFrame& frame) {
  SourceEntry source;
  const bool known = find_source(frame.pts_ns, &source);
  std::uint64_t number = 0;
  double fps = 0;
  {
    const std::lock_guard lock(source_mutex_);
    if (known) {
      number = source.frame;
      // Frames the source gave but the chain never passed on (a full chain-queue).
      if (have_out_frame_ && number > last_out_frame_ + 1) {
        // Gaps of the source itself are counted as dropped already; only the rest overran.
        std::uint64_t lost = 0;
        for (std::uint64_t f = last_out_frame_ + 1; f < number; ++f) {
          const SourceEntry& e = recent_[f % recent_.size()];
          if (e.frame == f && e.pts_ns >= 0) ++lost;
        }
        counters_.overrun.fetch_add(lost, std::memory_order_relaxed);
      }
      last_out_frame_ = number;
      have_out_frame_ = true;
    } else {
      number = next_frame_;  // a timestamp the source side never saw (a chain that retimes)
    }
    fps = timing_.fps();
  }
  const std::int64_t utc = known ? source.utc_us : utc_now_us();
  const std::int64_t now = now_us();
  counters_.frames_out.fetch_add(1, std::memory_order_relaxed);
  counters_.last_frame_out_us.store(now, std::memory_order_relaxed);
  counters_.detections.fetch_add(frame.objects.size(), std::memory_order_relaxed);
  counters_.mover_reports.fetch_add(frame.movers.size(), std::memory_order_relaxed);
  counters_.last_objects.store(static_cast<std::uint32_t>(frame.objects.size()),
                               std::memory_order_relaxed);
  counters_.last_movers.store(static_cast<std::uint32_t>(frame.movers.size()),
                              std::memory_order_relaxed);
  counters_.latency_s.store(static_cast<double>(utc_now_us() - utc) * 1e-6,
                            std::memory_order_relaxed);

  // The settings this frame needs, copied field by field: the whole OutputsConfig holds
  // vectors, and a frame allocates nothing.
  struct {
    DetectionsOutput detections;
    FitsOutput fits;
    PreviewOutput preview;
  } outputs;
  std::shared_ptr<ClipRecorder> clips;
  {
    const std::lock_guard lock(settings_mutex_);
    outputs = {outputs_.detections, outputs_.fits, outputs_.preview};
    clips = clips_;
  }
  if (clips) clips->on_frame(number, utc, frame.objects, frame.movers);
  if (outputs.detections.enabled || publish_wanted_.load()) {
    write_detections_job(number, frame.pts_ns, utc, {frame.objects.begin(), frame.objects.end()},
                         frame.overflow, {frame.movers.begin(), frame.movers.end()}, fps,
                         outputs.detections.enabled);
  }
  if (frame.truth != nullptr) score_truth(frame);
  if (!frame.movers.empty()) remember_movers(number, utc, frame.movers);

  // FITS of the raw frame in which something was found, at most max-per-hour an hour.
  if (outputs.fits.on_detection && !frame.objects.empty()) {
    while (!fits_on_detection_.empty() && now - fits_on_detection_.front() >= kHourUs) {
      fits_on_detection_.pop_front();
    }
    const int limit = outputs.fits.max_per_hour;
    if (limit == 0 || fits_on_detection_.size() < static_cast<std::size_t>(limit)) {
      std::shared_ptr<FrameCopy> raw;
      {
        const std::lock_guard lock(raw_mutex_);
        for (const auto& r : raw_) {
          if (r->pts_ns == frame.pts_ns) raw = r;
        }
      }
      if (raw) {
        fits_on_detection_.push_back(now);
        post_fits(raw, "on-detection");
      }
    }
  }

  // The preview: this frame's output beside its raw frame (or the newest raw one).
  if (frame.processed != nullptr && outputs.preview.every_s > 0 && now >= next_preview_us_) {
    next_preview_us_ = now + static_cast<std::int64_t>(outputs.preview.every_s * 1e6);
    auto processed = std::make_shared<FrameCopy>();
    processed->assign(*frame.processed);
    std::shared_ptr<FrameCopy> raw;
    {
      const std::lock_guard lock(raw_mutex_);
      for (const auto& r : raw_) {
        if (r->pts_ns == frame.pts_ns || !raw || r->pts_ns > raw->pts_ns) raw = r;
        if (r->pts_ns == frame.pts_ns) break;
      }
    }
    const std::filesystem::path path = layout_.state_dir / pipeline_ / "preview.png";
    frames_worker_.post(
        [this, processed, raw, path,
         objects = std::vector<DetectedObject>(frame.objects.begin(), frame.objects.end()),
         movers = std::vector<Track>(frame.movers.begin(), frame.movers.end())] {
          try {
            ensure_directory(path.parent_path());
            const ConstImageView raw_view = raw ? raw->view() : ConstImageView{};
            write_preview_png(path, make_preview(raw_view, processed->view(), objects, movers));
            counters_.previews.fetch_add(1, std::memory_order_relaxed);
            const std::lock_guard lock(paths_mutex_);
            paths_.preview = path;
          } catch (const std::exception& e) {
            spdlog::error("{}: preview: {}", pipeline_, e.what());
          }
        });
  }
}

void FrameOutputs::score_truth(const ChainFrame& frame) {
  const double r2 = kTruthMatchRadius * kTruthMatchRadius;
  std::uint64_t seen = 0, matched = 0;
  const std::lock_guard lock(truth_mutex_);
  for (const MoverTruth& m : frame.truth->movers) {
    ++seen;
    const auto near = [&](double x, double y) {
      const double dx = x - m.x, dy = y - m.y;
      return dx * dx + dy * dy <= r2;
    };
    bool detected = false, tracked = false;
    for (const DetectedObject& o : frame.objects) detected = detected || near(o.x, o.y);
    for (const Track& t : frame.movers) tracked = tracked || near(t.x, t.y);
    if (detected) ++matched;
    truth_.add(frame.truth->frame, m.id, detected, tracked);
  }
  counters_.truth_mover_frames.fetch_add(seen, std::memory_order_relaxed);
  counters_.truth_matched.fetch_add(matched, std::memory_order_relaxed);
}

std::filesystem::path FrameOutputs::next_video_segment(std::int64_t utc_us) {
  const auto dir = layout_.ensure_night_dir(pipeline_, layout_.night_of(utc_us)) / "video";
  ensure_directory(dir);
  // 2026-11-25T01:30:00.123456Z -> 20261125T013000Z: a name every file system takes.
  std::string stamp = utc_text(utc_us);
  std::string name;
  for (const char c : stamp.substr(0, 19)) {
    if (c != '-' && c != ':') name += c;
  }
  const auto path = dir / (name + "Z.mkv");
  counters_.video_segments.fetch_add(1, std::memory_order_relaxed);
  const std::lock_guard lock(paths_mutex_);
  paths_.video = path;
  return path;
}

void FrameOutputs::finish() {
  if (finished_) return;
  finished_ = true;
  frames_worker_.finish();
  detections_worker_.finish();
  std::shared_ptr<MqttPublisher> publisher;
  {
    const std::lock_guard lock(settings_mutex_);
    publisher = publisher_;
  }
  if (publisher) publisher->finish(kPublisherFinishDrain);  // the last lines are in its queue
  if (detections_) {
    try {
      detections_->sync();
    } catch (const std::exception& e) {
      spdlog::error("{}: detections: {}", pipeline_, e.what());
    }
  }
}

TruthSummary FrameOutputs::truth_summary() const {
  const std::lock_guard lock(truth_mutex_);
  TruthSummary s;
  s.movers = truth_.movers();
  s.detected = truth_.detected();
  s.tracked = truth_.tracked();
  s.mover_frames = counters_.truth_mover_frames.load();
  s.matched_frames = counters_.truth_matched.load();
  return s;
}

void FrameOutputs::remember_movers(std::uint64_t frame, std::int64_t utc_us,
                                   std::span<const Track> movers) {
  const std::lock_guard lock(movers_mutex_);
  for (const Track& t : movers) {
    std::erase_if(recent_movers_, [&](const MoverReport& r) { return r.track == t.id; });
    if (recent_movers_.size() >= kRecentMovers) recent_movers_.pop_front();
    recent_movers_.push_back(MoverReport{t.id, frame, utc_us, t.x, t.y, t.vx, t.vy, t.vx_s, t.vy_s,
                                         t.mean_flux, t.detections});
  }
}

std::vector<MoverReport> FrameOutputs::recent_movers() const {
  const std::lock_guard lock(movers_mutex_);
  return {recent_movers_.begin(), recent_movers_.end()};
}

OutputPaths FrameOutputs::paths() const {
  const std::lock_guard lock(paths_mutex_);
  return paths_;
}

}  // namespace starsift::daemon
