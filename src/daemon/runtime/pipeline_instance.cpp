// SPDX-License-Identifier: LGPL-2.1-or-later
#include "daemon/runtime/pipeline_instance.hpp"

#include <gst/app/gstappsink.h>
#include <gst/video/video.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <array>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include "daemon/runtime/chain_text.hpp"
#include "daemon/runtime/view_render.hpp"
#include "daemon/stream/view_stamp.hpp"
#include "pipeline/error.hpp"
#include "plugins/common/result_meta.hpp"
#include "plugins/common/sky_truth_meta.hpp"

namespace starsift::daemon {

namespace {

// Where each element the runtime may ask for comes from, for the message when it is missing.
std::string element_home(const std::string& factory) {
  static const std::map<std::string, std::string> homes = {
      {"siftskysrc", "the starsift plugin"},
      {"siftchain", "the starsift plugin"},
      {"siftdetect", "the starsift plugin"},
      {"v4l2src", "Debian package gstreamer1.0-plugins-good"},
      {"rtspsrc", "Debian package gstreamer1.0-plugins-good"},
      {"splitmuxsink", "Debian package gstreamer1.0-plugins-good"},
      {"matroskamux", "Debian package gstreamer1.0-plugins-good"},
      {"pngdec", "Debian package gstreamer1.0-plugins-good"},
      {"jpegdec", "Debian package gstreamer1.0-plugins-good"},
      {"multifilesrc", "Debian package gstreamer1.0-plugins-good"},
      {"siftcamsrc", "the starsift plugin, built with libaravis-0.8-dev"},
      {"x264enc", "Debian package gstreamer1.0-plugins-ugly"},
      {"nvh264enc", "Debian package gstreamer1.0-plugins-bad (and an NVIDIA driver)"},
  };
  const auto it = homes.find(factory);
  return it != homes.end() ? it->second : "Debian package gstreamer1.0-plugins-base";
}

GstElement* make_element(const ElementSpec& spec) {
  GstElement* element = nullptr;
  if (spec.is_caps()) {
    GstCaps* caps = gst_caps_from_string(spec.factory.c_str());
    if (caps == nullptr) throw Error("caps '" + spec.factory + "' do not parse", "GStreamer caps");
    element =
        gst_element_factory_make("capsfilter", spec.name.empty() ? nullptr : spec.name.c_str());
    g_object_set(element, "caps", caps, nullptr);
    gst_caps_unref(caps);
    return element;
  }
  element = gst_element_factory_make(spec.factory.c_str(),
                                     spec.name.empty() ? nullptr : spec.name.c_str());
  if (element == nullptr) {
    throw Error(
        "no GStreamer element '" + spec.factory + "'",
        "install " + element_home(spec.factory) +
            (spec.factory.rfind("sift", 0) == 0 ? " (installed, or found through GST_PLUGIN_PATH)"
                                                : ""));
  }
  try {
    for (const auto& [key, value] : spec.properties) {
      set_property_text(G_OBJECT(element), key, value);
    }
  } catch (...) {
    gst_object_unref(element);
    throw;
  }
  return element;
}

// Adds `specs` to `bin` and links them in order; returns the first and last.
std::pair<GstElement*, GstElement*> add_line(GstBin* bin, const std::vector<ElementSpec>& specs) {
  GstElement* first = nullptr;
  GstElement* previous = nullptr;
  for (const ElementSpec& spec : specs) {
    GstElement* e = make_element(spec);
    gst_bin_add(bin, e);
    if (previous != nullptr && !gst_element_link(previous, e)) {
      throw Error("cannot link " + std::string(GST_ELEMENT_NAME(previous)) + " to " +
                  GST_ELEMENT_NAME(e));
    }
    if (first == nullptr) first = e;
    previous = e;
  }
  return {first, previous};
}

std::int64_t to_ns(GstClockTime t) {
  return GST_CLOCK_TIME_IS_VALID(t) ? static_cast<std::int64_t>(t) : -1;
}

}  // namespace

void set_property_text(GObject* object, const std::string& key, const std::string& value) {
  GParamSpec* pspec = g_object_class_find_property(G_OBJECT_GET_CLASS(object), key.c_str());
  const std::string element = GST_IS_OBJECT(object) ? GST_OBJECT_NAME(object) : "object";
  if (pspec == nullptr) {
    throw Error(element + " (" + G_OBJECT_TYPE_NAME(object) + ") has no property '" + key + "'");
  }
  GValue v = G_VALUE_INIT;
  g_value_init(&v, pspec->value_type);
  if (!gst_value_deserialize_with_pspec(&v, value.c_str(), pspec)) {
    g_value_unset(&v);
    throw Error(element + "." + key + ": '" + shown_value(value) + "' is not a value of " +
                g_type_name(pspec->value_type));
  }
  g_object_set_property(object, key.c_str(), &v);
  g_value_unset(&v);
}

// ---- Teardown ----------------------------------------------------------------------------

Teardown::Teardown(std::string name, GstElement* pipeline)
    : name_(std::move(name)), started_us_(g_get_monotonic_time()) {
  // The thread owns the pipeline and shares the flag; a source stuck for good keeps its thread
  // until the process ends (the caller logs it).
  std::thread([pipeline, done = done_] {
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(pipeline);
    done->store(true);
  }).detach();
}

// ---- probes ------------------------------------------------------------------------------

struct PipelineInstance::ProbeContext {
  std::shared_ptr<FrameOutputs> outputs;
  GstElement* pipeline = nullptr;  // not owned: the probes go with the pipeline
  bool live = true;
  std::atomic<std::int64_t> start_utc_us{0};
  std::atomic<bool> active{true};
  // The live views: where their frames go (a reload may swap the server), and each view's
  // renderer, used only by that view's appsink thread.
  std::mutex views_mutex;
  ViewFeeds views;
  std::array<ViewRenderer, kStreamViews> renderers;
};

namespace {

using Context = std::shared_ptr<PipelineInstance::ProbeContext>;

void free_context(gpointer data) {
  delete static_cast<Context*>(data);
}

Context& context_of(gpointer data) {
  return *static_cast<Context*>(data);
}

// The frame's running time: its timestamp in the segment the pad is in.
GstClockTime running_time(GstPad* pad, GstClockTime pts) {
  GstEvent* event = gst_pad_get_sticky_event(pad, GST_EVENT_SEGMENT, 0);
  if (event == nullptr) return pts;
  const GstSegment* segment = nullptr;
  gst_event_parse_segment(event, &segment);
  const GstClockTime running = gst_segment_to_running_time(segment, GST_FORMAT_TIME, pts);
  gst_event_unref(event);
  return running;
}

// The buffer's "timestamp/x-unix" reference timestamp (UTC) in microseconds, if it has one.
std::optional<std::int64_t> unix_time_us(GstBuffer* buffer) {
  static GstStaticCaps unix_time = GST_STATIC_CAPS("timestamp/x-unix");
  GstCaps* caps = gst_static_caps_get(&unix_time);
  const GstReferenceTimestampMeta* meta = gst_buffer_get_reference_timestamp_meta(buffer, caps);
  gst_caps_unref(caps);
  if (meta == nullptr || !GST_CLOCK_TIME_IS_VALID(meta->timestamp)) return std::nullopt;
  return static_cast<std::int64_t>(meta->timestamp / GST_USECOND);
}

GstPadProbeReturn on_source_buffer(GstPad* pad, GstPadProbeInfo* info, gpointer data) {
  const auto& ctx = context_of(data);
  if (!ctx->active.load(std::memory_order_relaxed)) return GST_PAD_PROBE_OK;
  GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  const GstClockTime pts = GST_BUFFER_PTS(buffer);
  std::int64_t utc = g_get_real_time();
  if (GST_CLOCK_TIME_IS_VALID(pts)) {
    const GstClockTime running = running_time(pad, pts);
    if (GST_CLOCK_TIME_IS_VALID(running)) {
      GstClock* clock = ctx->live ? gst_element_get_clock(ctx->pipeline) : nullptr;
      if (clock != nullptr) {
        const GstClockTime now = gst_clock_get_time(clock);
        const std::int64_t realtime = g_get_real_time();
        gst_object_unref(clock);
        utc = live_frame_utc_us(realtime, now, gst_element_get_base_time(ctx->pipeline), running);
      } else {
        utc = file_frame_utc_us(ctx->start_utc_us.load(), running);
      }
    }
  }
  // A source that knows the frame's UTC says so (siftcamsrc: when the frame arrived;
  // siftfitssrc: its DATE-OBS): that beats the pipeline clock, and for files it is the truth.
  if (const std::optional<std::int64_t> stamped = unix_time_us(buffer)) utc = *stamped;
  ctx->outputs->on_source_frame(to_ns(pts), utc);
  return GST_PAD_PROBE_OK;
}

// A GRAY8 or GRAY16 frame of a buffer, mapped for reading while the object lives.
class MappedGrayFrame {
 public:
  MappedGrayFrame(GstBuffer* buffer, GstCaps* caps) {
    GstVideoInfo info;
    if (buffer == nullptr || caps == nullptr || !gst_video_info_from_caps(&info, caps)) return;
    const GstVideoFormat f = GST_VIDEO_INFO_FORMAT(&info);
    if (f != GST_VIDEO_FORMAT_GRAY8 && f != GST_VIDEO_FORMAT_GRAY16_LE) return;
    if (!gst_video_frame_map(&frame_, &info, buffer, GST_MAP_READ)) return;
    mapped_ = true;
    view_ = ConstImageView{static_cast<const std::byte*>(GST_VIDEO_FRAME_PLANE_DATA(&frame_, 0)),
                           GST_VIDEO_FRAME_WIDTH(&frame_), GST_VIDEO_FRAME_HEIGHT(&frame_),
                           GST_VIDEO_FRAME_PLANE_STRIDE(&frame_, 0),
                           f == GST_VIDEO_FORMAT_GRAY8 ? PixelFormat::Gray8 : PixelFormat::Gray16};
  }
  ~MappedGrayFrame() {
    if (mapped_) gst_video_frame_unmap(&frame_);
  }
  MappedGrayFrame(const MappedGrayFrame&) = delete;
  MappedGrayFrame& operator=(const MappedGrayFrame&) = delete;

  bool ok() const noexcept { return mapped_; }
  const ConstImageView& view() const noexcept { return view_; }

 private:
  GstVideoFrame frame_{};
  ConstImageView view_;
  bool mapped_ = false;
};

GstPadProbeReturn on_chain_buffer(GstPad* pad, GstPadProbeInfo* info, gpointer data) {
  const auto& ctx = context_of(data);
  if (!ctx->active.load(std::memory_order_relaxed)) return GST_PAD_PROBE_OK;
  GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  FrameOutputs::ChainFrame frame;
  frame.pts_ns = to_ns(GST_BUFFER_PTS(buffer));
  // The final detect stage's catalogue and tracks.
  if (const auto catalogue = gst::last_buffer_result(buffer, "catalogue")) {
    frame.objects = catalogue->as<DetectedObject>();
    frame.overflow = catalogue->overflow;
  }
  if (const auto tracks = gst::last_buffer_result(buffer, "tracks")) {
    frame.movers = tracks->as<Track>();
  }
  if (GstSiftSkyTruthMeta* truth = gst_buffer_get_sift_sky_truth_meta(buffer)) {
    frame.truth = &truth->truth;
  }
  // The frame's pixels only when a preview is due.
  std::optional<MappedGrayFrame> mapped;
  if (ctx->outputs->wants_processed_frame()) {
    GstCaps* caps = gst_pad_get_current_caps(pad);
    mapped.emplace(buffer, caps);
    if (caps != nullptr) gst_caps_unref(caps);
    if (mapped->ok()) frame.processed = &mapped->view();
  }
  ctx->outputs->on_chain_frame(frame);
  return GST_PAD_PROBE_OK;
}

GstFlowReturn on_raw_sample(GstAppSink* sink, gpointer data) {
  const auto& ctx = context_of(data);
  GstSample* sample = gst_app_sink_pull_sample(sink);
  if (sample == nullptr) return GST_FLOW_EOS;
  if (ctx->active.load(std::memory_order_relaxed)) {
    GstBuffer* buffer = gst_sample_get_buffer(sample);
    const MappedGrayFrame mapped(buffer, gst_sample_get_caps(sample));
    if (mapped.ok()) {
      try {
        ctx->outputs->on_raw_frame(mapped.view(), to_ns(GST_BUFFER_PTS(buffer)),
                                   to_ns(GST_BUFFER_DURATION(buffer)));
      } catch (const std::exception& e) {
        spdlog::error("{}: raw frame: {}", ctx->outputs->name(), e.what());
      }
    }
  }
  gst_sample_unref(sample);
  return GST_FLOW_OK;
}

// STARSIFT_VIEW_STAMP=1: each view carries its frame's UTC as a stamp (view_stamp.hpp), for
// measuring the latency to a client.
bool stamp_views() {
  static const bool stamp = [] {
    const char* v = std::getenv("STARSIFT_VIEW_STAMP");
    return v != nullptr && std::string(v) == "1";
  }();
  return stamp;
}

struct ViewSinkData {
  Context context;
  StreamView view;
};

// A live view's frame: rendered into its feed while someone watches, else let go at once.
GstFlowReturn on_view_sample(GstAppSink* sink, gpointer data) {
  const auto& [ctx, view] = *static_cast<ViewSinkData*>(data);
  GstSample* sample = gst_app_sink_pull_sample(sink);
  if (sample == nullptr) return GST_FLOW_EOS;
  std::shared_ptr<ViewFeed> feed;
  if (ctx->active.load(std::memory_order_relaxed)) {
    std::lock_guard lock(ctx->views_mutex);
    feed = ctx->views[static_cast<int>(view)];
  }
  GstBuffer* buffer = gst_sample_get_buffer(sample);
  if (feed && feed->watched()) {
    const MappedGrayFrame mapped(buffer, gst_sample_get_caps(sample));
    if (mapped.ok()) {
      std::span<const DetectedObject> objects;
      std::span<const Track> movers;
      if (view == StreamView::Detections) {
        if (const auto c = gst::last_buffer_result(buffer, "catalogue")) {
          objects = c->as<DetectedObject>();
        }
        if (const auto t = gst::last_buffer_result(buffer, "tracks")) movers = t->as<Track>();
      }
      const std::optional<std::int64_t> utc =
          ctx->outputs->source_utc_us(to_ns(GST_BUFFER_PTS(buffer)));
      ViewRenderer& renderer = ctx->renderers[static_cast<int>(view)];
      const ConstImageView& frame = mapped.view();
      try {
        auto fill = [&](ImageView out) {
          renderer.render(frame, objects, movers, g_get_monotonic_time(), out);
          if (utc && stamp_views()) write_view_stamp(out, static_cast<std::uint64_t>(*utc));
        };
        feed->push(frame.width, frame.height, utc.value_or(-1), fill);
      } catch (const std::exception& e) {
        spdlog::error("{}: live view {}: {}", ctx->outputs->name(), to_string(view), e.what());
      }
    }
  }
  gst_sample_unref(sample);
  return GST_FLOW_OK;
}

gchar* on_video_location(GstElement*, guint, GstSample*, gpointer data) {
  const auto& ctx = context_of(data);
  try {
    return g_strdup(ctx->outputs->next_video_segment(g_get_real_time()).c_str());
  } catch (const std::exception& e) {
    spdlog::error("{}: recording: {}", ctx->outputs->name(), e.what());
    return g_strdup("/dev/null");
  }
}

}  // namespace

// ---- PipelineInstance --------------------------------------------------------------------

PipelineInstance::PipelineInstance(const PipelinePlan& plan, std::shared_ptr<FrameOutputs> outputs,
                                   ViewFeeds views)
    : name_(plan.name), context_(std::make_shared<ProbeContext>()) {
  context_->outputs = std::move(outputs);
  context_->views = std::move(views);
  context_->live = plan.live;
  pipeline_ = gst_pipeline_new(plan.name.c_str());
  gst_object_ref_sink(pipeline_);
  context_->pipeline = pipeline_;
  try {
    // The source, and the conversion, as one description: sources whose pads come later
    // (decodebin, rtspsrc) are linked by the parser when they appear.
    std::string description = plan.source_launch;
    if (!plan.convert.empty()) description += " ! " + launch_text(plan.convert);
    GError* error = nullptr;
    // Only the src pad is ghosted, here: the parser's own ghosting would also take an element's
    // unlinked sink pad, and a sink pad that a later pad (decodebin's) is to be linked to is
    // unlinked at parse time: it became the bin's sink pad and the later link failed.
    GstElement* source = gst_parse_bin_from_description_full(description.c_str(), FALSE, nullptr,
                                                             GST_PARSE_FLAG_FATAL_ERRORS, &error);
    if (source == nullptr) {
      const std::string reason = error != nullptr ? error->message : "unknown";
      g_clear_error(&error);
      throw Error("the source '" + shown_value(description, 200) + "' does not parse: " + reason,
                  "a gst-launch-1.0 description whose last element has a video src pad");
    }
    g_clear_error(&error);
    if (GstPad* out = gst_bin_find_unlinked_pad(GST_BIN(source), GST_PAD_SRC)) {
      gst_element_add_pad(source, gst_ghost_pad_new("src", out));
      gst_object_unref(out);
    }
    gst_object_set_name(GST_OBJECT(source), kSourceBinName);
    gst_bin_add(GST_BIN(pipeline_), source);
    GstElement* tee = gst_element_factory_make("tee", kRawTeeName);
    gst_bin_add(GST_BIN(pipeline_), tee);
    if (!gst_element_link(source, tee)) {
      throw Error("the source '" + shown_value(description, 200) + "' has no video output to link",
                  "a description whose last element has a free src pad");
    }
    for (const auto* branch : {&plan.chain_line, &plan.frames_branch, &plan.video_branch}) {
      if (branch->empty()) continue;
      const auto [first, last] = add_line(GST_BIN(pipeline_), *branch);
      if (!gst_element_link(tee, first)) {
        throw Error("cannot link the raw tee to " + std::string(GST_ELEMENT_NAME(first)));
      }
    }
    // The live views, each from its tap (the raw tee, or a tee on the chain line).
    for (const ViewBranch& branch : plan.view_branches) {
      const auto [first, last] = add_line(GST_BIN(pipeline_), branch.elements);
      GstElement* tap = gst_bin_get_by_name(GST_BIN(pipeline_), branch.tap.c_str());
      const bool linked = tap != nullptr && gst_element_link(tap, first);
      if (tap != nullptr) gst_object_unref(tap);
      if (!linked)
        throw Error("cannot link the tee " + branch.tap + " to " + GST_ELEMENT_NAME(first));
    }
    add_probes(plan);
  } catch (...) {
    gst_object_unref(pipeline_);
    pipeline_ = nullptr;
    throw;
  }
}

PipelineInstance::~PipelineInstance() {
  release();
}

void PipelineInstance::add_probes(const PipelinePlan& plan) {
  GstElement* tee = gst_bin_get_by_name(GST_BIN(pipeline_), kRawTeeName);
  GstPad* tee_sink = gst_element_get_static_pad(tee, "sink");
  gst_pad_add_probe(tee_sink, GST_PAD_PROBE_TYPE_BUFFER, on_source_buffer, new Context(context_),
                    free_context);
  gst_object_unref(tee_sink);
  gst_object_unref(tee);

  // The chain's output.
  GstElement* out = gst_bin_get_by_name(GST_BIN(pipeline_), plan.chain_output.c_str());
  GstPad* out_pad = gst_element_get_static_pad(out, "src");
  gst_pad_add_probe(out_pad, GST_PAD_PROBE_TYPE_BUFFER, on_chain_buffer, new Context(context_),
                    free_context);
  gst_object_unref(out_pad);
  gst_object_unref(out);

  if (!plan.frames_branch.empty()) {
    GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline_), kFramesSinkName);
    GstAppSinkCallbacks callbacks{};
    callbacks.new_sample = on_raw_sample;
    gst_app_sink_set_callbacks(GST_APP_SINK(sink), &callbacks, new Context(context_), free_context);
    gst_object_unref(sink);
  }
  for (const ViewBranch& branch : plan.view_branches) {
    GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline_), view_sink_name(branch.view).c_str());
    GstAppSinkCallbacks callbacks{};
    callbacks.new_sample = on_view_sample;
    gst_app_sink_set_callbacks(GST_APP_SINK(sink), &callbacks,
                               new ViewSinkData{context_, branch.view},
                               [](gpointer d) { delete static_cast<ViewSinkData*>(d); });
    gst_object_unref(sink);
  }
  if (!plan.video_branch.empty()) {
    GstElement* recorder = gst_bin_get_by_name(GST_BIN(pipeline_), kRecorderName);
    g_signal_connect_data(
        recorder, "format-location-full", G_CALLBACK(on_video_location), new Context(context_),
        [](gpointer data, GClosure*) { free_context(data); }, static_cast<GConnectFlags>(0));
    gst_object_unref(recorder);
  }
}

void PipelineInstance::play() {
  context_->start_utc_us.store(g_get_real_time());
  if (gst_element_set_state(pipeline_, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
    // The element that refused posted why on the bus; the watch will not see it (the pipeline
    // goes before the main loop runs again), so it is read here.
    std::string why = "PLAYING refused";
    GstBus* bus = gst_element_get_bus(pipeline_);
    if (GstMessage* message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
      GError* error = nullptr;
      gchar* debug = nullptr;
      gst_message_parse_error(message, &error, &debug);
      why = std::string(GST_MESSAGE_SRC_NAME(message)) + ": " +
            (error != nullptr ? error->message : "unknown error") +
            (debug != nullptr ? std::string(" (") + debug + ")" : "");
      g_clear_error(&error);
      g_free(debug);
      gst_message_unref(message);
    }
    gst_object_unref(bus);
    throw Error("pipeline '" + name_ + "' could not start: " + why);
  }
}

void PipelineInstance::set_views(const ViewFeeds& views) {
  std::lock_guard lock(context_->views_mutex);
  context_->views = views;
}

void PipelineInstance::send_eos() {
  if (pipeline_ != nullptr) gst_element_send_event(pipeline_, gst_event_new_eos());
}

void PipelineInstance::rewind() {
  context_->outputs->new_stream();
  gst_element_seek_simple(pipeline_, GST_FORMAT_TIME,
                          static_cast<GstSeekFlags>(GST_SEEK_FLAG_FLUSH | GST_SEEK_FLAG_KEY_UNIT),
                          0);
}

void PipelineInstance::set_chain(const std::string& flow_yaml) {
  GstElement* chain = gst_bin_get_by_name(GST_BIN(pipeline_), kChainName);
  if (chain == nullptr) throw Error("pipeline '" + name_ + "' has no siftchain to update");
  g_object_set(chain, "chain", flow_yaml.c_str(), nullptr);
  gst_object_unref(chain);
}

void PipelineInstance::set_detect(const DetectParams& params) {
  GstElement* detect = gst_bin_get_by_name(GST_BIN(pipeline_), kDetectName);
  if (detect == nullptr) throw Error("pipeline '" + name_ + "' has no siftdetect to update");
  try {
    for (const auto& [key, value] : detect_properties(params)) {
      set_property_text(G_OBJECT(detect), key, value);
    }
  } catch (...) {
    gst_object_unref(detect);
    throw;
  }
  gst_object_unref(detect);
}

std::string PipelineInstance::active_backend() const {
  for (const char* name : {kChainName, kDetectName}) {
    GstElement* e = gst_bin_get_by_name(GST_BIN(pipeline_), name);
    if (e == nullptr) continue;
    gchar* backend = nullptr;
    g_object_get(e, "active-backend", &backend, nullptr);
    gst_object_unref(e);
    std::string text = backend != nullptr ? backend : "";
    g_free(backend);
    if (!text.empty()) return text;
  }
  return {};
}

std::optional<ChainTimes> PipelineInstance::chain_times() const {
  if (pipeline_ == nullptr) return std::nullopt;
  GstElement* chain = gst_bin_get_by_name(GST_BIN(pipeline_), kChainName);
  if (chain == nullptr) return std::nullopt;
  GstStructure* stats = nullptr;
  g_object_get(chain, "stats", &stats, nullptr);
  gst_object_unref(chain);
  if (stats == nullptr) return std::nullopt;
  ChainTimes times;
  gdouble ms = 0;
  if (gst_structure_get_double(stats, "upload-ms", &ms)) times.upload_s = ms * 1e-3;
  if (gst_structure_get_double(stats, "download-ms", &ms)) times.download_s = ms * 1e-3;
  guint64 count = 0;
  if (gst_structure_get_uint64(stats, "zero-copy", &count)) times.zero_copy = count;
  if (gst_structure_get_uint64(stats, "copied", &count)) times.copied = count;
  const gchar* names = gst_structure_get_string(stats, "stages");
  const GValue* stage_ms = gst_structure_get_value(stats, "stage-ms");
  if (names != nullptr && stage_ms != nullptr && GST_VALUE_HOLDS_ARRAY(stage_ms)) {
    std::string text = names;
    std::size_t start = 0;
    for (guint i = 0; i < gst_value_array_get_size(stage_ms); ++i) {
      const std::size_t comma = text.find(',', start);
      const std::string name =
          text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      start = comma == std::string::npos ? text.size() : comma + 1;
      const GValue* v = gst_value_array_get_value(stage_ms, i);
      if (G_VALUE_HOLDS_DOUBLE(v)) {
        times.stage_s.emplace_back(std::to_string(i) + ":" + name, g_value_get_double(v) * 1e-3);
      }
    }
  }
  gst_structure_free(stats);
  return times;
}

std::string PipelineInstance::camera_description() const {
  if (pipeline_ == nullptr) return {};
  GstElement* camera = gst_bin_get_by_name(GST_BIN(pipeline_), "camera");
  if (camera == nullptr) return {};
  GstStructure* stats = nullptr;
  if (std::string(G_OBJECT_TYPE_NAME(camera)) == "GstSiftCamSrc") {
    g_object_get(camera, "stats", &stats, nullptr);
  }
  gst_object_unref(camera);
  if (stats == nullptr) return {};
  const auto text = [&](const char* field) {
    const gchar* v = gst_structure_get_string(stats, field);
    return std::string(v != nullptr ? v : "?");
  };
  const auto number = [&](const char* field) {
    gdouble v = -1;
    gst_structure_get_double(stats, field, &v);
    return v;
  };
  gint width = 0, height = 0, packet = 0;
  gst_structure_get_int(stats, "width", &width);
  gst_structure_get_int(stats, "height", &height);
  gst_structure_get_int(stats, "packet-size", &packet);
  // -1: the camera has no such feature.
  const auto optional = [](double v, const char* unit) {
    return v < 0 ? std::string("n/a") : fmt::format("{:g} {}", v, unit);
  };
  std::string description =
      fmt::format("{} ({}): {} {}x{}, {}, exposure {}, gain {}", text("camera"), text("model"),
                  text("pixel-format"), width, height, optional(number("fps"), "fps"),
                  optional(number("exposure-us"), "us"), optional(number("gain-db"), "dB"));
  if (packet > 0) description += fmt::format(", packets {} B", packet);
  gst_structure_free(stats);
  return description;
}

std::shared_ptr<Teardown> PipelineInstance::release() {
  if (pipeline_ == nullptr) return nullptr;
  context_->active.store(false);
  GstElement* pipeline = pipeline_;
  pipeline_ = nullptr;
  return std::make_shared<Teardown>(name_, pipeline);
}

}  // namespace starsift::daemon
