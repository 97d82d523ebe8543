// SPDX-License-Identifier: LGPL-2.1-or-later
// siftskysrc element tests: properties, caps and fixation, frames equal to the pipeline
// layer's SkyGenerator, timestamps, the truth meta and file, refused values and errors,
// and the downstream pool.
#include <gst/gst.h>
#include <gst/video/video.h>

#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "element_support.hpp"
#include "pipeline/sky/sky_generator.hpp"
#include "pipeline/sky/sky_params.hpp"
#include "plugins/common/frame_allocator.hpp"
#include "plugins/common/sky_truth_meta.hpp"

using starsift::PixelFormat;
using starsift::SkyParams;
using starsift::SkyTruth;
using namespace starsift::test;

namespace {

// A source harness (no sink pad) around a fresh siftskysrc; downstream accepts `sink_caps`.
class SourceHarness {
 public:
  SourceHarness(Properties props, const char* sink_caps) {
    GstElement* element = make_element("siftskysrc", props);
    h_ = gst_harness_new_with_element(element, nullptr, "src");
    gst_object_unref(element);
    // A live source waits for the clock: the real one, not the harness's test clock.
    gst_harness_use_systemclock(h_);
    if (sink_caps != nullptr) gst_harness_set_sink_caps_str(h_, sink_caps);
    gst_harness_play(h_);
  }
  ~SourceHarness() { gst_harness_teardown(h_); }
  SourceHarness(const SourceHarness&) = delete;
  SourceHarness& operator=(const SourceHarness&) = delete;

  GstHarness* get() const { return h_; }

  // The caps the source settled on (after the first buffer).
  std::string caps() const {
    GstCaps* caps = gst_pad_get_current_caps(h_->sinkpad);
    REQUIRE(caps != nullptr);
    gchar* text = gst_caps_to_string(caps);
    std::string result = text;
    g_free(text);
    gst_caps_unref(caps);
    return result;
  }

 private:
  GstHarness* h_ = nullptr;
};

// Buffers that reached a fakesink, and how the pipeline ended.
struct Collected {
  std::vector<GstBuffer*> buffers;
  GstCaps* caps = nullptr;
  bool eos = false;
  std::string error;
  // Memory types of the buffers leaving the source (a probe on its src pad).
  std::vector<std::string> source_memory;

  Collected() = default;
  Collected(const Collected&) = delete;
  Collected& operator=(const Collected&) = delete;
  ~Collected() {
    for (GstBuffer* b : buffers) gst_buffer_unref(b);
    if (caps != nullptr) gst_caps_unref(caps);
  }
};

void on_handoff(GstElement*, GstBuffer* buffer, GstPad* pad, gpointer data) {
  auto* collected = static_cast<Collected*>(data);
  collected->buffers.push_back(gst_buffer_ref(buffer));
  if (collected->caps == nullptr) collected->caps = gst_pad_get_current_caps(pad);
}

GstPadProbeReturn on_source_buffer(GstPad*, GstPadProbeInfo* info, gpointer data) {
  GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  GstMemory* memory = gst_buffer_peek_memory(buffer, 0);
  const char* type =
      memory != nullptr && memory->allocator != nullptr ? memory->allocator->mem_type : "none";
  static_cast<Collected*>(data)->source_memory.emplace_back(type != nullptr ? type : "none");
  return GST_PAD_PROBE_OK;
}

// Runs `description`, which names its siftskysrc "sky" and ends in "fakesink name=sink",
// to EOS or ERROR, keeping every buffer the sink got.
void collect(const char* description, Collected& out) {
  init_gstreamer();
  GError* failure = nullptr;
  GstElement* pipeline = gst_parse_launch(description, &failure);
  if (failure != nullptr) {
    const std::string message = failure->message;
    g_clear_error(&failure);
    FAIL("cannot parse '" << description << "': " << message);
  }
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  GstElement* sky = gst_bin_get_by_name(GST_BIN(pipeline), "sky");
  REQUIRE(sink != nullptr);
  REQUIRE(sky != nullptr);
  g_object_set(sink, "signal-handoffs", TRUE, nullptr);
  g_signal_connect(sink, "handoff", G_CALLBACK(on_handoff), &out);
  GstPad* src_pad = gst_element_get_static_pad(sky, "src");
  gst_pad_add_probe(src_pad, GST_PAD_PROBE_TYPE_BUFFER, on_source_buffer, &out, nullptr);
  gst_object_unref(src_pad);

  GstBus* bus = gst_element_get_bus(pipeline);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstMessage* message = gst_bus_timed_pop_filtered(
      bus, 60 * GST_SECOND, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  if (message != nullptr) {
    if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_EOS) {
      out.eos = true;
    } else {
      out.error = parse_error(message).message;
    }
    gst_message_unref(message);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(sky);
  gst_object_unref(sink);
  gst_object_unref(pipeline);
}

std::vector<unsigned char> buffer_bytes(GstBuffer* buffer) {
  std::vector<unsigned char> bytes(gst_buffer_get_size(buffer));
  gst_buffer_extract(buffer, 0, bytes.data(), bytes.size());
  return bytes;
}

std::string temp_path(const char* name) {
  gchar* path = g_build_filename(g_get_tmp_dir(), name, nullptr);
  std::string result = path;
  g_free(path);
  return result;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("siftskysrc has a property per sky parameter, with its range and default",
          "[plugin][sky]") {
  GstElement* element = make_element("siftskysrc", {});
  GObjectClass* klass = G_OBJECT_GET_CLASS(element);
  check_properties_documented(element);

  struct Expected {
    const char* name;
    double minimum;
    double maximum;
    double default_value;
  };
  const Expected doubles[] = {
      {"star-density", 0.0, SkyParams::kMaxStarDensity, SkyParams::kDefaultStarDensity},
      {"star-flux-min", SkyParams::kMinStarFlux, SkyParams::kMaxStarFlux,
       SkyParams::kDefaultStarFluxMin},
      {"star-flux-max", SkyParams::kMinStarFlux, SkyParams::kMaxStarFlux,
       SkyParams::kDefaultStarFluxMax},
      {"star-flux-slope", SkyParams::kMinStarFluxSlope, SkyParams::kMaxStarFluxSlope,
       SkyParams::kDefaultStarFluxSlope},
      {"fwhm", SkyParams::kMinFwhm, SkyParams::kMaxFwhm, SkyParams::kDefaultFwhm},
      {"moffat-beta", SkyParams::kMinMoffatBeta, SkyParams::kMaxMoffatBeta,
       SkyParams::kDefaultMoffatBeta},
      {"sky-level", 0.0, SkyParams::kMaxSkyLevel, SkyParams::kDefaultSkyLevel},
      {"sky-gradient", 0.0, SkyParams::kMaxSkyGradient, SkyParams::kDefaultSkyGradient},
      {"sky-gradient-angle", 0.0, 360.0, SkyParams::kDefaultSkyGradientAngle},
      {"read-noise", 0.0, SkyParams::kMaxReadNoise, SkyParams::kDefaultReadNoise},
      {"gain", SkyParams::kMinGain, SkyParams::kMaxGain, SkyParams::kDefaultGain},
      {"bias", 0.0, SkyParams::kMaxBias, SkyParams::kDefaultBias},
      {"hot-pixel-fraction", 0.0, SkyParams::kMaxHotPixelFraction,
       SkyParams::kDefaultHotPixelFraction},
      {"hot-pixel-level", 0.0, SkyParams::kMaxHotPixelLevel, SkyParams::kDefaultHotPixelLevel},
      {"jitter", 0.0, SkyParams::kMaxJitter, SkyParams::kDefaultJitter},
      {"jitter-reversion", 0.0, 1.0, SkyParams::kDefaultJitterReversion},
      {"drift-x", -SkyParams::kMaxDrift, SkyParams::kMaxDrift, 0.0},
      {"drift-y", -SkyParams::kMaxDrift, SkyParams::kMaxDrift, 0.0},
      {"mover-snr-min", 0.0, SkyParams::kMaxMoverSnr, SkyParams::kDefaultMoverSnrMin},
      {"mover-snr-max", 0.0, SkyParams::kMaxMoverSnr, SkyParams::kDefaultMoverSnrMax},
      {"mover-speed-min", 0.0, SkyParams::kMaxMoverSpeed, SkyParams::kDefaultMoverSpeedMin},
      {"mover-speed-max", 0.0, SkyParams::kMaxMoverSpeed, SkyParams::kDefaultMoverSpeedMax},
      {"mover-direction", -1.0, 360.0, SkyParams::kRandomDirection},
  };
  for (const Expected& e : doubles) {
    INFO("property " << e.name);
    auto* spec = G_PARAM_SPEC_DOUBLE(g_object_class_find_property(klass, e.name));
    REQUIRE(spec != nullptr);
    CHECK(spec->minimum == e.minimum);
    CHECK(spec->maximum == e.maximum);
    CHECK(spec->default_value == e.default_value);
  }
  auto* seed = G_PARAM_SPEC_UINT64(g_object_class_find_property(klass, "seed"));
  REQUIRE(seed != nullptr);
  CHECK(seed->default_value == SkyParams::kDefaultSeed);
  auto* bit_depth = G_PARAM_SPEC_INT(g_object_class_find_property(klass, "bit-depth"));
  REQUIRE(bit_depth != nullptr);
  CHECK(bit_depth->minimum == 8);
  CHECK(bit_depth->maximum == 16);
  CHECK(bit_depth->default_value == 12);
  auto* movers = G_PARAM_SPEC_INT(g_object_class_find_property(klass, "movers"));
  REQUIRE(movers != nullptr);
  CHECK(movers->default_value == SkyParams::kDefaultMovers);
  auto* psf = G_PARAM_SPEC_ENUM(g_object_class_find_property(klass, "psf"));
  REQUIRE(psf != nullptr);
  CHECK(psf->default_value == static_cast<gint>(starsift::PsfKind::Gaussian));
  CHECK(g_enum_get_value_by_nick(psf->enum_class, "moffat") != nullptr);
  CHECK(g_object_class_find_property(klass, "truth-file") != nullptr);
  auto* is_live = G_PARAM_SPEC_BOOLEAN(g_object_class_find_property(klass, "is-live"));
  REQUIRE(is_live != nullptr);
  CHECK_FALSE(is_live->default_value);
  gboolean live = TRUE;
  g_object_get(element, "is-live", &live, nullptr);
  CHECK_FALSE(live);
  gst_object_unref(element);
}

TEST_CASE("siftskysrc properties round trip", "[plugin][sky]") {
  GstElement* element = make_element("siftskysrc", {{"seed", "18446744073709551615"},
                                                    {"psf", "moffat"},
                                                    {"fwhm", "4.5"},
                                                    {"bit-depth", "14"},
                                                    {"movers", "3"},
                                                    {"mover-direction", "-1"},
                                                    {"drift-x", "-2.5"},
                                                    {"truth-file", "/tmp/x.jsonl"},
                                                    {"is-live", "true"}});
  guint64 seed = 0;
  gint psf = -1, bits = 0, movers = 0;
  gdouble fwhm = 0, direction = 0, drift = 0;
  gboolean live = FALSE;
  g_object_get(element, "seed", &seed, "psf", &psf, "fwhm", &fwhm, "bit-depth", &bits, "movers",
               &movers, "mover-direction", &direction, "drift-x", &drift, "is-live", &live,
               nullptr);
  CHECK(seed == std::numeric_limits<guint64>::max());
  CHECK(psf == static_cast<gint>(starsift::PsfKind::Moffat));
  CHECK(fwhm == 4.5);
  CHECK(bits == 14);
  CHECK(movers == 3);
  CHECK(direction == -1.0);
  CHECK(drift == -2.5);
  CHECK(live);
  CHECK(string_property(element, "truth-file") == "/tmp/x.jsonl");
  g_object_set(element, "truth-file", "", nullptr);
  CHECK(string_property(element, "truth-file").empty());
  gst_object_unref(element);
}

TEST_CASE("siftskysrc refuses values and keeps the previous one", "[plugin][sky]") {
  GstElement* element = make_element("siftskysrc", {{"fwhm", "4"}, {"bit-depth", "10"}});
  {
    // GObject's range check.
    WarningCapture warnings;
    g_object_set(element, "fwhm", 25.0, nullptr);
    g_object_set(element, "bit-depth", 17, nullptr);
    CHECK(warnings.messages().size() == 2);
  }
  {
    // Not a number: refused (by GObject, or by the element where GObject lets NaN through).
    WarningCapture warnings;
    g_object_set(element, "fwhm", std::nan(""), nullptr);
    REQUIRE(warnings.messages().size() == 1);
    CHECK_THAT(warnings.messages()[0], Catch::Contains("fwhm"));
  }
  gdouble fwhm = 0.0;
  gint bits = 0;
  g_object_get(element, "fwhm", &fwhm, "bit-depth", &bits, nullptr);
  CHECK(fwhm == 4.0);
  CHECK(bits == 10);
  gst_object_unref(element);
}

TEST_CASE("siftskysrc fixates to 1024x1024 GRAY16_LE at 30/1 and follows downstream",
          "[plugin][sky]") {
  {
    SourceHarness h({{"num-buffers", "1"}}, nullptr);
    GstBuffer* buffer = gst_harness_pull(h.get());
    REQUIRE(buffer != nullptr);
    CHECK(gst_buffer_get_size(buffer) == 1024u * 1024u * 2u);
    gst_buffer_unref(buffer);
    const std::string caps = h.caps();
    INFO(caps);
    CHECK_THAT(caps, Catch::Contains("format=(string)GRAY16_LE") &&
                         Catch::Contains("width=(int)1024") &&
                         Catch::Contains("height=(int)1024") &&
                         Catch::Contains("framerate=(fraction)30/1"));
  }
  {
    SourceHarness h({{"num-buffers", "1"}},
                    "video/x-raw,format=GRAY8,width=[100,200],height=48,framerate=[5/1,10/1]");
    GstBuffer* buffer = gst_harness_pull(h.get());
    REQUIRE(buffer != nullptr);
    gst_buffer_unref(buffer);
    const std::string caps = h.caps();
    INFO(caps);
    CHECK_THAT(caps, Catch::Contains("format=(string)GRAY8") && Catch::Contains("width=(int)200") &&
                         Catch::Contains("height=(int)48") &&
                         Catch::Contains("framerate=(fraction)10/1"));
  }
}

TEST_CASE("siftskysrc makes num-buffers frames, timestamped by the frame rate, then EOS",
          "[plugin][sky]") {
  Collected out;
  collect(
      "siftskysrc name=sky num-buffers=7 ! video/x-raw,width=64,height=48,framerate=25/2 "
      "! fakesink name=sink",
      out);
  CHECK(out.error.empty());
  CHECK(out.eos);
  REQUIRE(out.buffers.size() == 7);
  for (std::size_t k = 0; k < out.buffers.size(); ++k) {
    INFO("frame " << k);
    GstBuffer* b = out.buffers[k];
    const GstClockTime pts = gst_util_uint64_scale(k, 2 * GST_SECOND, 25);
    CHECK(GST_BUFFER_PTS(b) == pts);
    CHECK(GST_BUFFER_DURATION(b) == gst_util_uint64_scale(k + 1, 2 * GST_SECOND, 25) - pts);
    CHECK(GST_BUFFER_OFFSET(b) == k);
    CHECK(GST_BUFFER_OFFSET_END(b) == k + 1);
    CHECK(gst_buffer_get_size(b) == 64u * 48u * 2u);
  }
}

TEST_CASE("siftskysrc frames are SkyGenerator's frames and carry their truth", "[plugin][sky]") {
  const std::string truth_path = temp_path("starsift-siftskysrc-truth.jsonl");
  std::remove(truth_path.c_str());
  const std::string description =
      "siftskysrc name=sky num-buffers=6 seed=9 movers=4 mover-speed-min=3 "
      "mover-speed-max=20 jitter=0.5 drift-x=0.3 bit-depth=14 gain=1.5 psf=moffat truth-file=" +
      truth_path + " ! video/x-raw,format=GRAY16_LE,width=80,height=64 ! fakesink name=sink";
  Collected out;
  collect(description.c_str(), out);
  CHECK(out.error.empty());
  REQUIRE(out.buffers.size() == 6);

  SkyParams params;
  params.width = 80;
  params.height = 64;
  params.seed = 9;
  params.movers = 4;
  params.mover_speed_min = 3.0;
  params.mover_speed_max = 20.0;
  params.jitter = 0.5;
  params.drift_x = 0.3;
  params.bit_depth = 14;
  params.gain = 1.5;
  params.psf = starsift::PsfKind::Moffat;
  starsift::SkyGenerator sky(params, 1);

  const std::vector<std::string> lines = read_lines(truth_path);
  REQUIRE(lines.size() == 6);
  for (std::size_t k = 0; k < out.buffers.size(); ++k) {
    INFO("frame " << k);
    // 80 GRAY16 pixels are 160 bytes: GStreamer's stride, no padding.
    TestImage expected(80, 64, PixelFormat::Gray16);
    SkyTruth truth;
    sky.render(k, expected.view(), truth);
    const std::vector<unsigned char> bytes = buffer_bytes(out.buffers[k]);
    REQUIRE(bytes.size() == expected.bytes.size());
    CHECK(std::memcmp(bytes.data(), expected.bytes.data(), bytes.size()) == 0);

    GstSiftSkyTruthMeta* meta = gst_buffer_get_sift_sky_truth_meta(out.buffers[k]);
    REQUIRE(meta != nullptr);
    CHECK(meta->truth.frame == k);
    CHECK(meta->truth.movers.size() == 4);
    CHECK(starsift::to_json_line(meta->truth) == starsift::to_json_line(truth));
    CHECK(lines[k] == starsift::to_json_line(truth));
  }
  std::remove(truth_path.c_str());
}

namespace {

// Buffers that reached a fakesink, counted as they arrive (read from the test's thread while
// the pipeline runs).
struct Arrivals {
  std::atomic<int> count{0};
  std::mutex mutex;
  std::vector<guint64> offsets;  // GST_BUFFER_OFFSET: the frame index
};

void on_arrival(GstElement*, GstBuffer* buffer, GstPad*, gpointer data) {
  auto* arrivals = static_cast<Arrivals*>(data);
  {
    const std::lock_guard lock(arrivals->mutex);
    arrivals->offsets.push_back(GST_BUFFER_OFFSET(buffer));
  }
  ++arrivals->count;
}

// Plays a live siftskysrc until `frames` frames reached the sink, then sends EOS, as an
// application stopping a camera does, and waits for it.
void run_live_until(const std::string& truth_path, int frames, Arrivals& arrivals) {
  init_gstreamer();
  const std::string description =
      "siftskysrc name=sky is-live=true movers=2 truth-file=" + truth_path +
      " ! video/x-raw,width=32,height=32,framerate=50/1 ! fakesink name=sink";
  GError* failure = nullptr;
  GstElement* pipeline = gst_parse_launch(description.c_str(), &failure);
  REQUIRE(failure == nullptr);
  GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
  g_object_set(sink, "signal-handoffs", TRUE, nullptr);
  g_signal_connect(sink, "handoff", G_CALLBACK(on_arrival), &arrivals);
  gst_object_unref(sink);
  GstBus* bus = gst_element_get_bus(pipeline);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  for (int waited_ms = 0; arrivals.count < frames && waited_ms < 20000; ++waited_ms) {
    g_usleep(1000);
  }
  CHECK(arrivals.count >= frames);
  // The source has made the next frame and waits for the clock to push it: EOS now makes
  // it drop that frame.
  gst_element_send_event(pipeline, gst_event_new_eos());
  GstMessage* message = gst_bus_timed_pop_filtered(
      bus, 20 * GST_SECOND, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  REQUIRE(message != nullptr);
  CHECK(GST_MESSAGE_TYPE(message) == GST_MESSAGE_EOS);
  gst_message_unref(message);
  gst_element_set_state(pipeline, GST_STATE_NULL);  // stop(): the truth file is closed
  gst_object_unref(bus);
  gst_object_unref(pipeline);
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The frame index a truth line names: {"frame":12,...}
guint64 frame_of_line(const std::string& line) {
  const std::string prefix = "{\"frame\":";
  REQUIRE(line.rfind(prefix, 0) == 0);
  return std::stoull(line.substr(prefix.size()));
}

}  // namespace

TEST_CASE("siftskysrc's truth file has one line per frame pushed, also when a live sky stops",
          "[plugin][sky]") {
  const std::string truth_path = temp_path("starsift-siftskysrc-live-truth.jsonl");
  std::remove(truth_path.c_str());
  // Three stops, so a line written for the frame dropped at EOS cannot slip through by luck.
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    Arrivals arrivals;
    run_live_until(truth_path, 3 + round, arrivals);
    const std::vector<std::string> lines = read_lines(truth_path);
    const std::lock_guard lock(arrivals.mutex);
    REQUIRE(lines.size() == arrivals.offsets.size());
    for (std::size_t k = 0; k < lines.size(); ++k) {
      INFO("line " << k);
      CHECK(frame_of_line(lines[k]) == arrivals.offsets[k]);
    }
  }
  std::remove(truth_path.c_str());
}

TEST_CASE("siftskysrc stops with an error naming a truth file it cannot write", "[plugin][sky]") {
  Collected out;
  collect(
      "siftskysrc name=sky num-buffers=3 truth-file=/dev/full "
      "! video/x-raw,width=32,height=32 ! fakesink name=sink",
      out);
  CHECK_FALSE(out.eos);
  // The first frame's line could not be written, so the frame was not pushed either.
  CHECK(out.buffers.empty());
  CHECK_THAT(out.error, Catch::Contains("truth-file '/dev/full'") &&
                            Catch::Contains(g_strerror(ENOSPC)) &&
                            Catch::Contains("the truth of the 0 frames pushed before"));
}

TEST_CASE("siftskysrc writes each truth line whole or not at all", "[plugin][sky]") {
  const std::string truth_path = temp_path("starsift-siftskysrc-partial-truth.jsonl");
  const std::string description =
      "siftskysrc name=sky num-buffers=4 movers=6 truth-file=" + truth_path +
      " ! video/x-raw,width=64,height=64 ! fakesink name=sink";
  std::vector<std::string> lines;
  {
    Collected out;
    collect(description.c_str(), out);
    REQUIRE(out.error.empty());
    lines = read_lines(truth_path);
    REQUIRE(lines.size() == 4);
  }
  // A file size limit in the middle of the second line: the disk takes half of it, then
  // refuses. (SIGXFSZ ignored, so the write fails with EFBIG instead of ending the process.)
  const std::size_t limit = lines[0].size() + 1 + lines[1].size() / 2;
  rlimit saved{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &saved) == 0);
  void (*saved_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);
  rlimit limited = saved;
  limited.rlim_cur = limit;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &limited) == 0);
  Collected out;
  collect(description.c_str(), out);
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, saved_handler);

  CHECK(file_text(truth_path) == lines[0] + "\n");
  CHECK(out.buffers.size() == 1);  // the frame whose line failed was not pushed
  CHECK_THAT(out.error, Catch::Contains("truth-file '" + truth_path + "'") &&
                            Catch::Contains(g_strerror(EFBIG)) &&
                            Catch::Contains("the truth of the 1 frames pushed before"));
  std::remove(truth_path.c_str());
}

TEST_CASE("siftskysrc GRAY8 frames saturate at 255, GRAY16 at 2^bit-depth - 1", "[plugin][sky]") {
  for (const char* format : {"GRAY8", "GRAY16_LE"}) {
    INFO(format);
    const std::string description =
        std::string(
            "siftskysrc name=sky num-buffers=1 star-density=3000 star-flux-min=1e6 "
            "star-flux-max=1e7 bit-depth=10 bias=20 ! video/x-raw,format=") +
        format + ",width=64,height=64 ! fakesink name=sink";
    Collected out;
    collect(description.c_str(), out);
    REQUIRE(out.buffers.size() == 1);
    const std::vector<unsigned char> bytes = buffer_bytes(out.buffers[0]);
    int top = 0;
    if (std::string(format) == "GRAY8") {
      for (unsigned char v : bytes) top = std::max(top, static_cast<int>(v));
      CHECK(top == 255);
    } else {
      for (std::size_t i = 0; i + 1 < bytes.size(); i += 2)
        top = std::max(top, bytes[i] | bytes[i + 1] << 8);
      CHECK(top == 1023);
    }
  }
}

TEST_CASE("siftskysrc's truth meta survives filters that keep the frame", "[plugin][sky]") {
  Collected out;
  collect(
      "siftskysrc name=sky num-buffers=4 ! video/x-raw,width=48,height=32 "
      "! siftmedian backend=cpu ! siftchain backend=cpu chain=\"[{median: {size: 3}}]\" "
      "! fakesink name=sink",
      out);
  CHECK(out.error.empty());
  REQUIRE(out.buffers.size() == 4);
  for (std::size_t k = 0; k < 4; ++k) {
    GstSiftSkyTruthMeta* meta = gst_buffer_get_sift_sky_truth_meta(out.buffers[k]);
    REQUIRE(meta != nullptr);
    CHECK(meta->truth.frame == k);
  }
}

TEST_CASE("siftskysrc fills the frame memory siftchain proposes", "[plugin][sky]") {
  Collected out;
  collect(
      "siftskysrc name=sky num-buffers=3 ! video/x-raw,width=48,height=32 "
      "! siftchain backend=cpu chain=\"[{median: {size: 3}}]\" ! fakesink name=sink",
      out);
  CHECK(out.error.empty());
  REQUIRE(out.source_memory.size() == 3);
  for (const std::string& type : out.source_memory) {
    CHECK(type == starsift::gst::kFrameMemoryType);
  }
}

TEST_CASE("siftskysrc reports bad settings at start, naming the property", "[plugin][sky]") {
  struct Case {
    const char* properties;
    const char* caps;
    const char* expected;
  };
  const std::string unwritable = temp_path("no-such-directory/truth.jsonl");
  const Case cases[] = {
      {"star-flux-min=5000 star-flux-max=1000", "",
       "star-flux-min 5000 exceeds star-flux-max 1000"},
      {"mover-speed-min=3 mover-speed-max=1", "", "mover-speed-min 3 exceeds mover-speed-max 1"},
      {"bit-depth=8 bias=300", "", "bias 300 ADU is not below the saturation"},
      {"bias=300", "! video/x-raw,format=GRAY8 ",
       "bias 300 ADU is not below the saturation of GRAY8"},
  };
  for (const Case& c : cases) {
    INFO(c.properties << " " << c.caps);
    Collected out;
    const std::string description = std::string("siftskysrc name=sky num-buffers=2 ") +
                                    c.properties + " " + c.caps + "! fakesink name=sink";
    collect(description.c_str(), out);
    CHECK_FALSE(out.eos);
    CHECK(out.buffers.empty());
    CHECK_THAT(out.error, Catch::Contains(c.expected));
  }
  Collected out;
  const std::string description =
      "siftskysrc name=sky num-buffers=2 truth-file=" + unwritable + " ! fakesink name=sink";
  collect(description.c_str(), out);
  CHECK(out.buffers.empty());
  CHECK_THAT(out.error, Catch::Contains("truth-file") && Catch::Contains(unwritable));
}

TEST_CASE("siftskysrc is-live answers the latency query with one frame", "[plugin][sky]") {
  SourceHarness h({{"is-live", "true"}, {"num-buffers", "2"}},
                  "video/x-raw,width=32,height=32,framerate=20/1");
  GstBuffer* buffer = gst_harness_pull(h.get());
  REQUIRE(buffer != nullptr);
  gst_buffer_unref(buffer);
  GstQuery* query = gst_query_new_latency();
  REQUIRE(gst_pad_peer_query(h.get()->sinkpad, query));
  gboolean live = FALSE;
  GstClockTime min = 0, max = 0;
  gst_query_parse_latency(query, &live, &min, &max);
  CHECK(live);
  CHECK(min == GST_SECOND / 20);
  gst_query_unref(query);
}
