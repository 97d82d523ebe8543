// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift-bench-camera: do a GigE Vision camera's frames reach the engine without a copy?
//
//   <source> num-buffers=N ! video/x-raw,format=F ! <filter> backend=auto ! fakesink
//
// with aravis's fake GigE Vision camera on the loopback (in a network namespace of its own
// where the process may have one) as the camera, <source> aravissrc (Debian's
// libaravis-0.8-0) or siftcamsrc, <filter> siftchain (a 3x3 median chain) or siftmedian size=3.
// For each: the frames that reached the filter in starsift frame memory (its proposed pool),
// siftchain's zero-copy and copied counters, and each frame's time through the filter, from
// its sink pad to its src pad (median and 90th percentile). Beside them, this host's time to
// copy one frame from ordinary into frame memory on one core: what the engine does, once per
// frame, for a frame that is not in its pool. And, for each source, whether a frame held
// downstream for a second keeps its pixels while the camera streams on.
//
//   starsift-bench-camera [--frames N] [--sizes 512x512:Mono8,2048x2048:Mono16] [--fps F]
//                         [--json FILE]
#include <arv.h>
#include <gst/gst.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "bench/json.hpp"
#include "bench/list_args.hpp"
#include "pipeline/backend.hpp"
#include "pipeline/frame_memory.hpp"
#include "support/fake_camera.hpp"
#include "support/fake_camera_network.hpp"

namespace {

using starsift::bench::Json;

struct Size {
  int width = 0;
  int height = 0;
  bool sixteen_bit = false;
  std::string name() const {
    return std::to_string(width) + "x" + std::to_string(height) +
           (sixteen_bit ? " Mono16" : " Mono8");
  }
  std::size_t bytes() const {
    return static_cast<std::size_t>(width) * height * (sixteen_bit ? 2 : 1);
  }
};

struct Options {
  int frames = 60;
  double fps = 10.0;
  std::vector<Size> sizes{{512, 512, false}, {2048, 2048, true}};
  std::string json_path;
};

int usage(const std::string& problem) {
  std::cerr << "starsift-bench-camera: " << problem
            << "\nusage: starsift-bench-camera [--frames N] [--sizes WxH:Mono8|Mono16,...] "
               "[--fps F] [--json FILE]\n";
  return 2;
}

bool parse(int argc, char** argv, Options& o, std::string& problem) {
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) {
      problem = "no value after " + flag;
      return false;
    }
    const std::string value = argv[++i];
    if (flag == "--frames") {
      o.frames = std::stoi(value);
    } else if (flag == "--fps") {
      o.fps = std::stod(value);
    } else if (flag == "--json") {
      o.json_path = value;
    } else if (flag == "--sizes") {
      o.sizes.clear();
      for (const std::string& item : starsift::bench::split_list(value)) {
        Size s;
        char format[16] = {};
        if (std::sscanf(item.c_str(), "%dx%d:%15s", &s.width, &s.height, format) != 3 ||
            s.width < 1 || s.height < 1 || s.width > 2048 || s.height > 2048 ||
            (std::strcmp(format, "Mono8") != 0 && std::strcmp(format, "Mono16") != 0)) {
          problem = "--sizes takes WxH:Mono8 or WxH:Mono16, 1..2048 (the fake camera's sensor)";
          return false;
        }
        s.sixteen_bit = std::strcmp(format, "Mono16") == 0;
        o.sizes.push_back(s);
      }
    } else {
      problem = "unknown option " + flag;
      return false;
    }
  }
  if (o.frames < 2 || o.fps <= 0.0) {
    problem = "--frames takes 2 or more, --fps a positive rate";
    return false;
  }
  return true;
}

// Each frame's time from the filter's sink pad to its src pad, by buffer offset (the camera's
// frame number, which the filters keep), and how many arrived in frame memory.
struct Through {
  std::mutex mutex;
  std::map<guint64, gint64> entered;
  std::vector<double> ms;
  int buffers = 0;
  int frame_memory = 0;
};

GstPadProbeReturn on_enter(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* t = static_cast<Through*>(data);
  GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  const std::lock_guard lock(t->mutex);
  ++t->buffers;
  if (gst_buffer_n_memory(buffer) == 1 &&
      gst_memory_is_type(gst_buffer_peek_memory(buffer, 0), "StarsiftFrameMemory")) {
    ++t->frame_memory;
  }
  t->entered[GST_BUFFER_OFFSET(buffer)] = g_get_monotonic_time();
  return GST_PAD_PROBE_OK;
}

GstPadProbeReturn on_leave(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* t = static_cast<Through*>(data);
  const gint64 now = g_get_monotonic_time();
  const std::lock_guard lock(t->mutex);
  const auto it = t->entered.find(GST_BUFFER_OFFSET(GST_PAD_PROBE_INFO_BUFFER(info)));
  if (it != t->entered.end()) {
    t->ms.push_back(static_cast<double>(now - it->second) / 1000.0);
    t->entered.erase(it);
  }
  return GST_PAD_PROBE_OK;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

guint64 stat_u64(GstElement* element, const char* field) {
  GstStructure* stats = nullptr;
  g_object_get(element, "stats", &stats, nullptr);
  guint64 value = 0;
  if (stats != nullptr) {
    gst_structure_get_uint64(stats, field, &value);
    gst_structure_free(stats);
  }
  return value;
}

// One pipeline run: the JSON of what it measured, or of why it did not run.
Json run(const std::string& source, const std::string& filter, const Size& size,
         const std::string& camera_id, int frames) {
  const std::string format = size.sixteen_bit ? "GRAY16_LE" : "GRAY8";
  const std::string src = source == "aravissrc" ? "aravissrc camera-name=" + camera_id
                                                : "siftcamsrc name=src camera=" + camera_id;
  const std::string element =
      filter == "siftchain" ? "siftchain name=filter backend=auto chain=\"[{median: {size: 3}}]\""
                            : "siftmedian name=filter backend=auto size=3";
  const std::string description = src + " num-buffers=" + std::to_string(frames) +
                                  " ! video/x-raw,format=" + format + " ! " + element +
                                  " ! fakesink sync=false";
  Json result = Json::object();
  result.set("source", source).set("filter", filter).set("frame", size.name());
  result.set("pipeline", description);

  GError* error = nullptr;
  GstElement* pipeline = gst_parse_launch(description.c_str(), &error);
  if (error != nullptr) {
    result.set("error", error->message);
    g_error_free(error);
    if (pipeline != nullptr) gst_object_unref(pipeline);
    return result;
  }
  GstElement* f = gst_bin_get_by_name(GST_BIN(pipeline), "filter");
  Through through;
  GstPad* sink = gst_element_get_static_pad(f, "sink");
  GstPad* srcpad = gst_element_get_static_pad(f, "src");
  gst_pad_add_probe(sink, GST_PAD_PROBE_TYPE_BUFFER, on_enter, &through, nullptr);
  gst_pad_add_probe(srcpad, GST_PAD_PROBE_TYPE_BUFFER, on_leave, &through, nullptr);
  gst_object_unref(sink);
  gst_object_unref(srcpad);

  const auto begin = std::chrono::steady_clock::now();
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstBus* bus = gst_element_get_bus(pipeline);
  GstMessage* message = gst_bus_timed_pop_filtered(
      bus, 120 * GST_SECOND, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  if (message == nullptr) {
    result.set("error", "no EOS within 120 s");
  } else if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
    GError* e = nullptr;
    gst_message_parse_error(message, &e, nullptr);
    result.set("error", e != nullptr ? e->message : "error");
    if (e != nullptr) g_error_free(e);
  }
  if (message != nullptr) gst_message_unref(message);
  gst_element_set_state(pipeline, GST_STATE_NULL);

  result.set("seconds", seconds);
  result.set("frames_at_filter", through.buffers);
  result.set("in_frame_memory", through.frame_memory);
  if (filter == "siftchain") {
    result.set("zero_copy", stat_u64(f, "zero-copy"));
    result.set("copied", stat_u64(f, "copied"));
  }
  result.set("through_filter_ms_median", percentile(through.ms, 0.5));
  result.set("through_filter_ms_p90", percentile(through.ms, 0.9));
  if (source == "siftcamsrc") {
    GstElement* s = gst_bin_get_by_name(GST_BIN(pipeline), "src");
    result.set("camera_dropped", stat_u64(s, "dropped"));
    gst_object_unref(s);
  }
  gst_object_unref(f);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
  return result;
}

// Holds one frame downstream for a second while the camera streams on into two buffers, and
// says whether its pixels changed meanwhile: whether the source gave the memory back to the
// camera while downstream still had it.
Json hold_one_frame(const std::string& source, const std::string& camera_id) {
  // Mono8 both: aravissrc would set the camera to the first format of its caps (a Bayer one)
  // when nothing downstream narrows them.
  const std::string src =
      source == "aravissrc" ? "aravissrc num-arv-buffers=2 camera-name=" + camera_id
                            : "siftcamsrc camera-buffers=2 pixel-format=Mono8 camera=" + camera_id;
  const std::string description =
      src + " ! video/x-raw,format=GRAY8 ! appsink name=sink max-buffers=1 drop=true";
  Json result = Json::object();
  result.set("source", source).set("pipeline", description);
  GstElement* pipeline = gst_parse_launch(description.c_str(), nullptr);
  if (pipeline == nullptr) {
    result.set("error", "cannot parse");
    return result;
  }
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstSample* held = nullptr;
  g_signal_emit_by_name(sink, "try-pull-sample", 10 * GST_SECOND, &held);
  if (held == nullptr) {
    std::string why = "no frame within 10 s";
    GstBus* bus = gst_element_get_bus(pipeline);
    if (GstMessage* message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
      GError* e = nullptr;
      gst_message_parse_error(message, &e, nullptr);
      if (e != nullptr) why = e->message;
      g_clear_error(&e);
      gst_message_unref(message);
    }
    gst_object_unref(bus);
    result.set("error", why);
  } else {
    GstBuffer* buffer = gst_sample_get_buffer(held);
    GstMapInfo map;
    gst_buffer_map(buffer, &map, GST_MAP_READ);
    const std::vector<guint8> before(map.data, map.data + map.size);
    gst_buffer_unmap(buffer, &map);
    g_usleep(G_USEC_PER_SEC);
    gst_buffer_map(buffer, &map, GST_MAP_READ);
    const bool changed =
        map.size != before.size() || std::memcmp(map.data, before.data(), map.size) != 0;
    gst_buffer_unmap(buffer, &map);
    result.set("held_ms", 1000).set("overwritten_while_held", changed);
    gst_sample_unref(held);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
  return result;
}

// One core's time to copy a frame of `bytes` from ordinary memory into frame memory
// (page-locked where a GPU is usable), median of 21 copies after one to fault the pages in.
Json copy_cost(std::size_t bytes) {
  const starsift::FrameMemory to = starsift::allocate_frame_memory(bytes);
  std::vector<std::byte> from(bytes, std::byte{7});
  std::vector<double> ms;
  for (int i = 0; i < 22; ++i) {
    const auto begin = std::chrono::steady_clock::now();
    std::memcpy(to.data, from.data(), bytes);
    const double t =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
    if (i > 0) ms.push_back(t);
  }
  Json result = Json::object();
  result.set("bytes", static_cast<unsigned long long>(bytes));
  result.set("into_pinned", to.pinned);
  result.set("ms_median", percentile(ms, 0.5));
  starsift::free_frame_memory(to);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string network = starsift::test::isolate_loopback();  // before any thread
  Options options;
  std::string problem;
  if (!parse(argc, argv, options, problem)) return usage(problem);
  gst_init(nullptr, nullptr);

  Json report = Json::object();
  report.set("benchmark", "starsift-bench-camera");
  report.set("network", network);
  const std::string cuda = starsift::cuda_unusable_reason(0);
  report.set("cuda", cuda.empty() ? std::string("usable") : cuda);
  report.set("frames", options.frames);
  report.set("fps", options.fps);
  Json runs = Json::array();
  Json copies = Json::array();
  Json holds = Json::array();
  GstElementFactory* aravissrc = gst_element_factory_find("aravissrc");
  const bool have_aravissrc = aravissrc != nullptr;
  if (aravissrc != nullptr) gst_object_unref(aravissrc);

  for (const Size& size : options.sizes) {
    starsift::test::FakeGigECamera camera("BENCH");
    if (!camera.running()) {
      std::cerr << "starsift-bench-camera: " << camera.why_not() << "\n";
      return 1;
    }
    camera.set_size(size.width, size.height);
    arv_fake_camera_write_register(
        camera.fake(), ARV_FAKE_CAMERA_REGISTER_PIXEL_FORMAT,
        size.sixteen_bit ? ARV_PIXEL_FORMAT_MONO_16 : ARV_PIXEL_FORMAT_MONO_8);
    arv_fake_camera_write_register(camera.fake(),
                                   ARV_FAKE_CAMERA_REGISTER_ACQUISITION_FRAME_PERIOD_US,
                                   static_cast<guint32>(1e6 / options.fps));
    for (const char* source : {"aravissrc", "siftcamsrc"}) {
      if (std::string(source) == "aravissrc" && !have_aravissrc) continue;
      for (const char* filter : {"siftchain", "siftmedian"}) {
        Json r = run(source, filter, size, camera.id(), options.frames);
        std::cerr << r << "\n";
        runs.push(std::move(r));
      }
    }
    copies.push(copy_cost(size.bytes()));
    if (&size == &options.sizes.front()) {
      for (const char* source : {"aravissrc", "siftcamsrc"}) {
        if (std::string(source) == "aravissrc" && !have_aravissrc) continue;
        Json h = hold_one_frame(source, camera.id());
        std::cerr << h << "\n";
        holds.push(std::move(h));
      }
    }
  }
  report.set("runs", std::move(runs));
  report.set("copy_into_frame_memory_one_core", std::move(copies));
  report.set("frame_held_downstream", std::move(holds));
  std::cout << report << "\n";
  if (!options.json_path.empty()) {
    std::ofstream out(options.json_path);
    out << report << "\n";
  }
  return 0;
}
