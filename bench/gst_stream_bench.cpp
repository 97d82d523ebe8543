// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift-bench-gst: end-to-end frames/s and latency of `siftchain` inside a real GStreamer
// pipeline, beside the machine's pinned transfer bound measured in the same run.
//
//   poolsrc ! siftchain chain=... depth=D backend=cuda ! fakesink sync=false
//
// The source models a camera driver DMA-ing into pinned memory: it takes the buffer pool
// siftchain proposes (page-locked frame memory), writes each buffer's pixels the first time
// it sees that buffer and never again, and stamps timestamps. So what is timed is GStreamer,
// the element and the engine, not a CPU writing 33 MB per frame (which no source could do at
// PCIe rate). `--source system` gives the source plain memory instead: the element then
// copies each frame into its ring once (the path of a source that ignores the pool).
#include <gst/base/gstpushsrc.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "bench/json.hpp"
#include "bench/list_args.hpp"
#include "bench/transfer_bound.hpp"
#include "pipeline/error.hpp"
#include "pipeline/pixel_format.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int width = 4096;
  int height = 4096;
  std::string format = "GRAY16_LE";
  std::string chain = "[{median: {size: 3}}]";
  std::vector<int> depths{1, 3, 4};
  int frames = 600;
  int warmup = 60;  // frames before timing starts (pools grow, the GPU clocks up)
  std::string source = "pool";
  std::string backend = "cuda";  // cpu: a smoke run on a host without a GPU (no bound)
  std::string json_path;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw starsift::Error("option " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--width") {
      o.width = std::stoi(value());
    } else if (a == "--height") {
      o.height = std::stoi(value());
    } else if (a == "--format") {
      o.format = value();
    } else if (a == "--chain") {
      o.chain = value();
    } else if (a == "--depths") {
      o.depths = starsift::bench::parse_ints(value());
    } else if (a == "--frames") {
      o.frames = std::stoi(value());
    } else if (a == "--warmup") {
      o.warmup = std::stoi(value());
    } else if (a == "--source") {
      o.source = value();
      if (o.source != "pool" && o.source != "system") {
        throw starsift::Error("--source " + o.source, "pool, system");
      }
    } else if (a == "--backend") {
      o.backend = value();
      if (o.backend != "cuda" && o.backend != "cpu") {
        throw starsift::Error("--backend " + o.backend, "cuda, cpu");
      }
    } else if (a == "--json") {
      o.json_path = value();
    } else {
      throw starsift::Error("unknown option " + a,
                            "--width --height --format --chain --depths --frames --warmup "
                            "--source --backend --json");
    }
  }
  if (o.warmup >= o.frames) throw starsift::Error("--warmup must be below --frames");
  return o;
}

/* The source: a GstPushSrc that fills each distinct buffer once. */

struct PoolSrc {
  GstPushSrc parent;
  GstCaps* caps;
  gboolean use_pool;
  guint64 produced;
  GstClockTime duration;
  std::set<const void*>* filled;         // memory already written (by its address)
  std::vector<Clock::time_point>* made;  // when each frame left the source, by index
};

struct PoolSrcClass {
  GstPushSrcClass parent_class;
};

GType pool_src_get_type();
#define POOL_SRC(obj) (reinterpret_cast<PoolSrc*>(obj))

G_DEFINE_TYPE(PoolSrc, pool_src, GST_TYPE_PUSH_SRC)

GstCaps* pool_src_get_caps(GstBaseSrc* src, GstCaps* filter) {
  GstCaps* caps = gst_caps_ref(POOL_SRC(src)->caps);
  if (filter == nullptr) return caps;
  GstCaps* both = gst_caps_intersect_full(filter, caps, GST_CAPS_INTERSECT_FIRST);
  gst_caps_unref(caps);
  return both;
}

// With use_pool FALSE downstream's pool is replaced by a plain one of the source's own
// (ordinary memory, reused): a source that ignores the proposal, as most do.
gboolean pool_src_decide_allocation(GstBaseSrc* src, GstQuery* query) {
  if (!POOL_SRC(src)->use_pool) {
    GstCaps* caps = nullptr;
    gst_query_parse_allocation(query, &caps, nullptr);
    GstVideoInfo info;
    if (caps == nullptr || !gst_video_info_from_caps(&info, caps)) return FALSE;
    while (gst_query_get_n_allocation_pools(query) > 0) {
      gst_query_remove_nth_allocation_pool(query, 0);
    }
    while (gst_query_get_n_allocation_params(query) > 0) {
      gst_query_remove_nth_allocation_param(query, 0);
    }
    GstBufferPool* pool = gst_buffer_pool_new();
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, static_cast<guint>(info.size), 4, 0);
    gst_buffer_pool_set_config(pool, config);
    gst_query_add_allocation_pool(query, pool, static_cast<guint>(info.size), 4, 0);
    gst_object_unref(pool);
  }
  return GST_BASE_SRC_CLASS(pool_src_parent_class)->decide_allocation(src, query);
}

GstFlowReturn pool_src_fill(GstPushSrc* push, GstBuffer* buffer) {
  PoolSrc* self = POOL_SRC(push);
  GstMapInfo map;
  if (!gst_buffer_map(buffer, &map, GST_MAP_WRITE)) return GST_FLOW_ERROR;
  if (self->filled->insert(map.data).second) {
    // First sight of this memory: the "camera" writes a frame (one byte a page is enough to
    // make it differ; the element reads every byte anyway).
    for (gsize i = 0; i < map.size; i += 4096) map.data[i] = static_cast<guint8>(i >> 12);
  }
  gst_buffer_unmap(buffer, &map);
  const guint64 index = self->produced++;
  GST_BUFFER_PTS(buffer) = index * self->duration;
  GST_BUFFER_DURATION(buffer) = self->duration;
  GST_BUFFER_OFFSET(buffer) = index;
  self->made->push_back(Clock::now());
  return GST_FLOW_OK;
}

void pool_src_class_init(PoolSrcClass* klass) {
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  static GstStaticPadTemplate src_template =
      GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS("video/x-raw"));
  gst_element_class_add_static_pad_template(element_class, &src_template);
  gst_element_class_set_static_metadata(element_class, "Pool source", "Source/Video",
                                        "Frames in downstream's pool, written once per buffer",
                                        "starsift");
  GST_BASE_SRC_CLASS(klass)->get_caps = pool_src_get_caps;
  GST_BASE_SRC_CLASS(klass)->decide_allocation = pool_src_decide_allocation;
  GST_PUSH_SRC_CLASS(klass)->fill = pool_src_fill;
}

void pool_src_init(PoolSrc* self) {
  self->caps = nullptr;
  self->use_pool = TRUE;
  self->produced = 0;
  self->duration = GST_SECOND / 30;
  self->filled = nullptr;
  self->made = nullptr;
  gst_base_src_set_format(GST_BASE_SRC(self), GST_FORMAT_TIME);
}

/* One pipeline run */

struct Sink {
  std::vector<Clock::time_point> arrived;
  std::vector<guint64> order;
};

void on_handoff(GstElement*, GstBuffer* buffer, GstPad*, gpointer data) {
  auto* sink = static_cast<Sink*>(data);
  sink->arrived.push_back(Clock::now());
  sink->order.push_back(GST_BUFFER_OFFSET(buffer));
}

struct RunResult {
  double frames_per_s = 0.0;
  double latency_median_ms = 0.0;
  double latency_p99_ms = 0.0;
  bool order_exact = false;
  int frames_out = 0;
  std::string stats;
};

RunResult run_pipeline(const Options& o, int depth) {
  std::set<const void*> filled;
  std::vector<Clock::time_point> made;
  made.reserve(static_cast<std::size_t>(o.frames));
  Sink sink;
  sink.arrived.reserve(static_cast<std::size_t>(o.frames));
  sink.order.reserve(static_cast<std::size_t>(o.frames));

  GstElement* pipeline = gst_pipeline_new("bench");
  GstElement* src = GST_ELEMENT(g_object_new(pool_src_get_type(), "name", "src", nullptr));
  GstElement* chain = gst_element_factory_make("siftchain", "chain");
  GstElement* fakesink = gst_element_factory_make("fakesink", "sink");
  if (chain == nullptr || fakesink == nullptr) {
    throw starsift::Error("siftchain or fakesink is not available",
                          "the starsift plugin on GST_PLUGIN_PATH");
  }
  PoolSrc* ps = POOL_SRC(src);
  ps->caps = gst_caps_new_simple("video/x-raw", "format", G_TYPE_STRING, o.format.c_str(), "width",
                                 G_TYPE_INT, o.width, "height", G_TYPE_INT, o.height, "framerate",
                                 GST_TYPE_FRACTION, 30, 1, nullptr);
  ps->use_pool = o.source == "pool";
  ps->filled = &filled;
  ps->made = &made;
  g_object_set(src, "num-buffers", o.frames, nullptr);
  g_object_set(chain, "chain", o.chain.c_str(), "depth", depth, nullptr);
  gst_util_set_object_arg(G_OBJECT(chain), "backend", o.backend.c_str());
  g_object_set(fakesink, "sync", FALSE, "signal-handoffs", TRUE, nullptr);
  g_signal_connect(fakesink, "handoff", G_CALLBACK(on_handoff), &sink);
  gst_bin_add_many(GST_BIN(pipeline), src, chain, fakesink, nullptr);
  if (!gst_element_link_many(src, chain, fakesink, nullptr)) {
    throw starsift::Error("cannot link poolsrc ! siftchain ! fakesink");
  }

  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstBus* bus = gst_element_get_bus(pipeline);
  GstMessage* msg = gst_bus_timed_pop_filtered(
      bus, 300 * GST_SECOND, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  std::string error;
  if (msg == nullptr) {
    error = "no EOS within 300 s";
  } else if (GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
    GError* err = nullptr;
    gchar* debug = nullptr;
    gst_message_parse_error(msg, &err, &debug);
    error = std::string(err->message) + " (" + (debug ? debug : "") + ")";
    g_clear_error(&err);
    g_free(debug);
  }
  if (msg != nullptr) gst_message_unref(msg);
  gst_object_unref(bus);

  RunResult r;
  GstStructure* stats = nullptr;
  g_object_get(chain, "stats", &stats, nullptr);
  if (stats != nullptr) {
    gchar* text = gst_structure_to_string(stats);
    r.stats = text;
    g_free(text);
    gst_structure_free(stats);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_caps_unref(ps->caps);
  gst_object_unref(pipeline);
  if (!error.empty()) throw starsift::Error("pipeline: " + error);

  r.frames_out = static_cast<int>(sink.arrived.size());
  r.order_exact = r.frames_out == o.frames;
  for (int i = 0; i < r.frames_out && r.order_exact; ++i) {
    r.order_exact = sink.order[static_cast<std::size_t>(i)] == static_cast<guint64>(i);
  }
  if (r.frames_out <= o.warmup + 1) throw starsift::Error("too few frames came out");
  const auto first = sink.arrived[static_cast<std::size_t>(o.warmup)];
  const double seconds = std::chrono::duration<double>(sink.arrived.back() - first).count();
  r.frames_per_s = (r.frames_out - 1 - o.warmup) / seconds;
  std::vector<double> latency;
  for (int i = o.warmup; i < r.frames_out; ++i) {
    const auto idx = static_cast<std::size_t>(sink.order[static_cast<std::size_t>(i)]);
    latency.push_back(std::chrono::duration<double, std::milli>(
                          sink.arrived[static_cast<std::size_t>(i)] - made[idx])
                          .count());
  }
  r.latency_median_ms = starsift::bench::percentile(latency, 0.5);
  r.latency_p99_ms = starsift::bench::percentile(latency, 0.99);
  return r;
}

}  // namespace

int main(int argc, char** argv) try {
  gst_init(&argc, &argv);
  const Options o = parse(argc, argv);
  const starsift::PixelFormat format = starsift::parse_pixel_format(o.format);
  const std::size_t frame_bytes =
      static_cast<std::size_t>(o.width) * o.height * starsift::bytes_per_pixel(format);
  const starsift::bench::TransferBound bound = o.backend == "cuda"
                                                   ? starsift::bench::measure_transfers(frame_bytes)
                                                   : starsift::bench::TransferBound{0.0, 0.0, 0.0};
  const double bound_fps = bound.frames_per_s(frame_bytes);
  std::fprintf(stderr,
               "pinned transfers, %zu-byte frames: H2D %.1f GB/s, D2H %.1f GB/s, both %.1f GB/s -> "
               "%.0f frames/s\n",
               frame_bytes, bound.h2d, bound.d2h, bound.both, bound_fps);

  using starsift::bench::Json;
  Json out = Json::object();
  out.set("benchmark", "siftchain in a GStreamer pipeline")
      .set("pipeline", "poolsrc ! siftchain chain=" + o.chain + " depth=D backend=" + o.backend +
                           " ! fakesink sync=false")
      .set("width", o.width)
      .set("height", o.height)
      .set("format", o.format)
      .set("source", o.source == "pool"
                         ? "buffers from siftchain's proposed pool, each written once (camera "
                           "DMA model)"
                         : "plain system memory (copied into the ring by the element)")
      .set("frames", o.frames)
      .set("timed_after_frames", o.warmup)
      .set("transfer_bound", Json::object()
                                 .set("h2d_gb_per_s", bound.h2d)
                                 .set("d2h_gb_per_s", bound.d2h)
                                 .set("both_gb_per_s", bound.both)
                                 .set("frames_per_s", bound_fps));
  Json runs = Json::array();
  for (int depth : o.depths) {
    const RunResult r = run_pipeline(o, depth);
    std::fprintf(stderr,
                 "depth %d: %.0f frames/s (%.0f %% of the transfer bound), latency median %.2f "
                 "ms, p99 %.2f ms, %d frames out, order %s\n  %s\n",
                 depth, r.frames_per_s, 100.0 * r.frames_per_s / bound_fps, r.latency_median_ms,
                 r.latency_p99_ms, r.frames_out, r.order_exact ? "exact" : "WRONG",
                 r.stats.c_str());
    runs.push(Json::object()
                  .set("depth", depth)
                  .set("frames_per_s", r.frames_per_s)
                  .set("fraction_of_transfer_bound", r.frames_per_s / bound_fps)
                  .set("latency_ms_median", r.latency_median_ms)
                  .set("latency_ms_p99", r.latency_p99_ms)
                  .set("frames_out", r.frames_out)
                  .set("order_exact", r.order_exact)
                  .set("element_stats", r.stats));
  }
  out.set("runs", std::move(runs));
  if (o.json_path.empty()) {
    std::cout << out << "\n";
  } else {
    std::ofstream f(o.json_path);
    f << out << "\n";
    if (!f) throw starsift::Error("cannot write " + o.json_path);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "starsift-bench-gst: %s\n", e.what());
  return 1;
}
