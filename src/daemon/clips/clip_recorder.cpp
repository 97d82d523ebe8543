// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/clips/clip_recorder.hpp"

#include <gst/app/gstappsink.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <fstream>

#include "daemon/outputs/clock_state.hpp"
#include "daemon/outputs/json_text.hpp"
#include "pipeline/detect/detections_json.hpp"
#include "pipeline/error.hpp"

namespace starsift::daemon {

namespace {

constexpr auto kFinishTimeout = std::chrono::seconds(10);
// Raw frames kept beyond the cube's half before the event: the frames branch runs ahead of
// the chain's output by the frames in flight, so the event's frame and a few after it are in
// the ring by the time the event is known.
constexpr std::size_t kRawAhead = 16;

std::int64_t monotonic_us() {
  return g_get_monotonic_time();
}

// The coded frame's capture UTC: the view's "timestamp/x-unix" meta, which the encoder
// carries over; the wall clock when a frame has none.
std::int64_t utc_of(GstBuffer* buffer) {
  static GstStaticCaps unix_time = GST_STATIC_CAPS("timestamp/x-unix");
  GstCaps* caps = gst_static_caps_get(&unix_time);
  const GstReferenceTimestampMeta* meta = gst_buffer_get_reference_timestamp_meta(buffer, caps);
  gst_caps_unref(caps);
  if (meta == nullptr || !GST_CLOCK_TIME_IS_VALID(meta->timestamp)) return g_get_real_time();
  return static_cast<std::int64_t>(meta->timestamp / GST_USECOND);
}

// "20261128T051234.567890Z": the UTC in ISO 8601's basic form, safe in a file name.
std::string basic_utc(std::int64_t utc_us) {
  std::string name;
  for (const char c : utc_text(utc_us)) {
    if (c != '-' && c != ':') name += c;
  }
  return name;
}

void append_number(std::string& out, double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", v);
  out += buffer;
}

// The clip's record, one JSON object (docs/live-video.md, "Event clips").
std::string clip_json(const ClipRecorderSettings& s, const ClipWindow& window,
                      const ClipWriter& writer, const std::string& cube, std::size_t cube_frames) {
  std::string j = "{\"pipeline\": ";
  append_json_string(j, s.pipeline);
  j += ", \"view\": ";
  append_json_string(j, to_string(s.clips.view));
  j += ", \"video\": ";
  append_json_string(j, writer.path().filename().string());
  j += ", \"window_start_utc\": \"" + utc_text(window.start_us) + "\"";
  j += ", \"window_end_utc\": \"" + utc_text(window.end_us) + "\"";
  j += ", \"frames\": " + std::to_string(writer.frames());
  if (!cube.empty()) {
    j += ", \"fits\": ";
    append_json_string(j, cube);
    j += ", \"fits_frames\": " + std::to_string(cube_frames);
  }
  j += ", \"first_frame_utc\": \"" + utc_text(writer.first_utc_us()) + "\"";
  j += ", \"last_frame_utc\": \"" + utc_text(writer.last_utc_us()) + "\"";
  j += ", \"events\": [";
  for (std::size_t i = 0; i < window.events.size(); ++i) {
    const ClipEvent& e = window.events[i];
    j += i == 0 ? "{" : ", {";
    j += "\"kind\": \"" + std::string(to_string(e.kind)) + "\"";
    if (e.kind == ClipEvent::Kind::Track) j += ", \"track\": " + std::to_string(e.track);
    j += ", \"frame\": " + std::to_string(e.frame);
    j += ", \"utc\": \"" + utc_text(e.utc_us) + "\", \"x\": ";
    append_number(j, e.x);
    j += ", \"y\": ";
    append_number(j, e.y);
    j += ", \"flux\": ";
    append_number(j, e.flux);
    j += "}";
  }
  j += "]}\n";
  return j;
}

// Writes `text` to `path` through a temporary file renamed over it.
void write_text_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::path part = path;
  part += ".part";
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw Error("cannot write " + part.string());
  }
  std::filesystem::rename(part, path);
}

}  // namespace

ClipRecorder::ClipRecorder(ClipRecorderSettings settings, std::shared_ptr<ViewFeed> feed,
                           ClipCounters& counters)
    : settings_(std::move(settings)),
      feed_(std::move(feed)),
      counters_(counters),
      detector_(settings_.clips.min_flux),
      schedule_(ClipTiming{static_cast<std::int64_t>(settings_.clips.before_s * 1e6),
                           static_cast<std::int64_t>(settings_.clips.after_s * 1e6),
                           static_cast<std::int64_t>(settings_.clips.max_s * 1e6),
                           settings_.clips.max_per_hour}) {
  const std::string launch =
      "appsrc name=frames is-live=true format=time max-buffers=4 "
      "leaky-type=downstream block=false ! videoconvert ! video/x-raw,format=I420 ! " +
      settings_.encoder_launch +
      " ! h264parse ! video/x-h264,stream-format=avc,alignment=au ! appsink name=coded "
      "sync=false emit-signals=true max-buffers=16 drop=false";
  GError* error = nullptr;
  pipeline_ = gst_parse_launch(launch.c_str(), &error);
  if (pipeline_ == nullptr) {
    const std::string why = error != nullptr ? error->message : "unknown";
    g_clear_error(&error);
    throw Error(settings_.pipeline + ": event clips: the encoder does not build: " + why,
                "x264enc (Debian gstreamer1.0-plugins-ugly) and h264parse "
                "(gstreamer1.0-plugins-bad)");
  }
  g_clear_error(&error);
  GstBus* bus = gst_element_get_bus(pipeline_);
  gst_bus_set_sync_handler(bus, &ClipRecorder::on_bus, this, nullptr);
  gst_object_unref(bus);
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline_), "coded");
  g_signal_connect(sink, "new-sample", G_CALLBACK(&ClipRecorder::on_coded), this);
  gst_object_unref(sink);
  appsrc_ = gst_bin_get_by_name(GST_BIN(pipeline_), "frames");
  if (gst_element_set_state(pipeline_, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    gst_object_unref(appsrc_);
    gst_object_unref(pipeline_);
    throw Error(settings_.pipeline + ": event clips: the encoder does not start");
  }
  feed_->attach(appsrc_);
}

ClipRecorder::~ClipRecorder() {
  feed_->detach(appsrc_);
  gst_element_set_state(pipeline_, GST_STATE_NULL);  // no more coded frames after this
  {
    std::lock_guard lock(mutex_);
    if (auto window = schedule_.close()) close_writer(*window);
    for (Coded& c : ring_) gst_sample_unref(c.sample);
    ring_.clear();
  }
  for (Finishing& f : finishing_) f.thread.join();
  gst_object_unref(appsrc_);
  gst_object_unref(pipeline_);
}

GstBusSyncReply ClipRecorder::on_bus(GstBus*, GstMessage* message, gpointer self) {
  if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
    auto* r = static_cast<ClipRecorder*>(self);
    GError* e = nullptr;
    gst_message_parse_error(message, &e, nullptr);
    spdlog::error("{}: event clips: {}: {}", r->settings_.pipeline, GST_MESSAGE_SRC_NAME(message),
                  e != nullptr ? e->message : "?");
    g_clear_error(&e);
    r->counters_.failures.fetch_add(1);
  }
  gst_message_unref(message);
  return GST_BUS_DROP;
}

GstFlowReturn ClipRecorder::on_coded(GstElement* sink, gpointer self) {
  GstSample* sample = gst_app_sink_pull_sample(GST_APP_SINK(sink));
  if (sample == nullptr) return GST_FLOW_EOS;
  static_cast<ClipRecorder*>(self)->take(sample);
  return GST_FLOW_OK;
}

void ClipRecorder::take(GstSample* sample) {
  GstBuffer* buffer = gst_sample_get_buffer(sample);
  const Coded coded{sample, utc_of(buffer),
                    !GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT)};
  std::lock_guard lock(mutex_);
  ring_.push_back(coded);
  trim_ring();
  if (writer_) {
    if (auto window = schedule_.close_if_past(coded.utc_us)) {
      close_writer(*window);
    } else {
      writer_->write(buffer, coded.utc_us);
    }
  } else if (auto window = schedule_.close_if_past(coded.utc_us)) {
    close_writer(*window);  // a window whose writer failed to open
  }
}

// Keeps the last before-s of frames, from the key frame at or before that point: the
// oldest key frame is dropped with its frames only once the next key frame is old enough.
void ClipRecorder::trim_ring() {
  const std::int64_t keep_from =
      ring_.back().utc_us - static_cast<std::int64_t>(settings_.clips.before_s * 1e6);
  for (;;) {
    std::size_t next_key = 1;
    while (next_key < ring_.size() && !ring_[next_key].key) ++next_key;
    if (next_key >= ring_.size() || ring_[next_key].utc_us > keep_from) return;
    for (std::size_t i = 0; i < next_key; ++i) {
      gst_sample_unref(ring_.front().sample);
      ring_.pop_front();
    }
  }
}

void ClipRecorder::on_raw(ConstImageView image, std::uint64_t frame, std::int64_t utc_us) {
  const auto half = static_cast<std::size_t>(settings_.clips.fits_frames / 2);
  std::shared_ptr<FrameCopy> copy;
  {
    std::lock_guard lock(mutex_);
    // The oldest frame's memory again, unless a cube being written still holds it.
    if (raw_ring_.size() >= half + kRawAhead) {
      copy = std::move(raw_ring_.front());
      raw_ring_.pop_front();
      if (copy.use_count() > 1) copy.reset();
    }
  }
  if (!copy) copy = std::make_shared<FrameCopy>();
  copy->assign(image);  // outside the lock: a frame's copy takes a while
  copy->frame = frame;
  copy->utc_us = utc_us;
  std::lock_guard lock(mutex_);
  raw_ring_.push_back(copy);
  if (cube_open_ && schedule_.open() && utc_us <= schedule_.open()->end_us &&
      cube_.size() < static_cast<std::size_t>(settings_.clips.fits_frames) &&
      (cube_.empty() || utc_us > cube_.back()->utc_us)) {
    cube_.push_back(std::move(copy));
  }
}

void ClipRecorder::open_cube(const ClipEvent& event) {
  cube_.clear();
  cube_open_ = wants_raw();
  if (!cube_open_) return;
  const auto half = static_cast<std::size_t>(settings_.clips.fits_frames / 2);
  std::size_t before = 0;
  for (const auto& f : raw_ring_) before += f->utc_us < event.utc_us ? 1 : 0;
  std::size_t skip = before > half ? before - half : 0;
  for (const auto& f : raw_ring_) {
    if (skip > 0) {
      --skip;
      continue;
    }
    if (cube_.size() < static_cast<std::size_t>(settings_.clips.fits_frames)) cube_.push_back(f);
  }
}

void ClipRecorder::on_frame(std::uint64_t frame, std::int64_t utc_us,
                            std::span<const DetectedObject> objects,
                            std::span<const Track> movers) {
  std::lock_guard lock(mutex_);
  detector_.on_frame(frame, utc_us, objects, movers, events_);
  for (const ClipEvent& event : events_) {
    counters_.events.fetch_add(1, std::memory_order_relaxed);
    switch (schedule_.on_event(event, monotonic_us())) {
      case ClipSchedule::Decision::Opened:
        open_writer();
        open_cube(event);
        break;
      case ClipSchedule::Decision::Limited:
        counters_.limited.fetch_add(1, std::memory_order_relaxed);
        break;
      case ClipSchedule::Decision::Extended:
      case ClipSchedule::Decision::Joined:
        break;
    }
  }
}

void ClipRecorder::open_writer() {
  const ClipWindow& window = *schedule_.open();
  reap_finished();
  // The ring's frames from the last key frame at or before the window's start.
  std::size_t first = 0;
  for (std::size_t i = 0; i < ring_.size() && ring_[i].utc_us <= window.start_us; ++i) {
    if (ring_[i].key) first = i;
  }
  while (first < ring_.size() && !ring_[first].key) ++first;  // a ring without a key frame yet
  const ClipEvent& e = window.events.front();
  const std::string stem =
      basic_utc(window.start_us) + "_" + std::string(to_string(e.kind)) +
      (e.kind == ClipEvent::Kind::Track ? std::to_string(e.track) : std::string());
  try {
    if (first >= ring_.size()) throw Error("no coded frame yet");
    const std::filesystem::path dir =
        settings_.layout.ensure_night_dir(settings_.pipeline, settings_.layout.night_of(e.utc_us)) /
        "clips";
    ensure_directory(dir);
    writer_ = std::make_unique<ClipWriter>(dir / (stem + ".mkv"),
                                           gst_sample_get_caps(ring_[first].sample));
    for (std::size_t i = first; i < ring_.size(); ++i) {
      writer_->write(gst_sample_get_buffer(ring_[i].sample), ring_[i].utc_us);
    }
  } catch (const std::exception& ex) {
    spdlog::error("{}: event clip {}: {}", settings_.pipeline, stem, ex.what());
    counters_.failures.fetch_add(1, std::memory_order_relaxed);
    writer_.reset();
  }
}

void ClipRecorder::close_writer(const ClipWindow& window) {
  std::vector<std::shared_ptr<FrameCopy>> cube = std::move(cube_);
  cube_.clear();
  cube_open_ = false;
  if (!writer_) return;
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread thread([writer = std::move(writer_), cube = std::move(cube), window, done,
                      this]() mutable {
    std::string error;
    const std::filesystem::path json =
        std::filesystem::path(writer->path()).replace_extension(".json");
    try {
      if (!writer->finish(kFinishTimeout, &error)) throw Error(error);
      std::string cube_name;
      if (!cube.empty()) {
        const std::filesystem::path path =
            std::filesystem::path(writer->path()).replace_extension(".fits");
        std::vector<FitsFrame> frames;
        for (const auto& f : cube) {
          FitsFrame frame;
          frame.image = f->view();
          frame.utc_us = f->utc_us;
          frame.frame_number = f->frame;
          frames.push_back(frame);
        }
        write_fits_cube(path, frames, settings_.fits_info, read_clock_state());
        cube_name = path.filename().string();
      }
      write_text_file(json, clip_json(settings_, window, *writer, cube_name, cube.size()));
      counters_.clips.fetch_add(1, std::memory_order_relaxed);
      spdlog::info("{}: event clip {} ({} frames, {} event(s){})", settings_.pipeline,
                   writer->path().string(), writer->frames(), window.events.size(),
                   cube_name.empty() ? "" : ", raw frames in " + cube_name);
    } catch (const std::exception& e) {
      spdlog::error("{}: event clip {}: {}", settings_.pipeline, writer->path().string(), e.what());
      counters_.failures.fetch_add(1, std::memory_order_relaxed);
    }
    done->store(true);
  });
  finishing_.push_back(Finishing{std::move(thread), done});
}

void ClipRecorder::reap_finished() {
  std::erase_if(finishing_, [](Finishing& f) {
    if (!f.done->load()) return false;
    f.thread.join();
    return true;
  });
}

}  // namespace starsift::daemon
