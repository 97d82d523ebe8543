// SPDX-License-Identifier: LGPL-2.1-or-later
// siftwhiten element tests: properties and refused values, caps, the residual's noise on a
// static star field, bit-exact output and per-frame stats against the CPU WhitenStage run
// directly, depth 3 against depth 1, which property changes keep the history, flushes, the
// stats property and messages, and the report's GstStructure round trip.
#include <gst/gst.h>
#include <gst/video/video.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "element_support.hpp"
#include "pipeline/backend.hpp"
#include "pipeline/whiten/params.hpp"
#include "pipeline/whiten/stats.hpp"
#include "pipeline/whiten/whiten_stage.hpp"
#include "plugins/common/whiten_report.hpp"

using starsift::PixelFormat;
using starsift::WhitenParams;
using starsift::WhitenStats;
using starsift::gst::WhitenReport;
using namespace starsift::test;

namespace {

constexpr GstClockTime kFrame = GST_SECOND / 30;

// A fixed star field: sky plus Gaussian stars, noiseless, in ADU.
struct Scene {
  int width = 0, height = 0;
  PixelFormat format = PixelFormat::Gray16;
  std::vector<double> clean;  // row-major
};

Scene make_scene(int width, int height, PixelFormat format, double sky, double min_peak,
                 double max_peak, std::uint32_t seed) {
  Scene scene{width, height, format,
              std::vector<double>(static_cast<std::size_t>(width) * height, sky)};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> ux(3.0, width - 4.0), uy(3.0, height - 4.0);
  std::uniform_real_distribution<double> log_peak(std::log(min_peak), std::log(max_peak));
  constexpr double kPsfSigma = 1.3;
  for (int star = 0; star < 16; ++star) {
    const double cx = ux(rng), cy = uy(rng), peak = std::exp(log_peak(rng));
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        const double r2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
        scene.clean[static_cast<std::size_t>(y) * width + x] +=
            peak * std::exp(-r2 / (2.0 * kPsfSigma * kPsfSigma));
      }
    }
  }
  return scene;
}

// `count` frames of `scene` with independent Gaussian noise of `sigma` ADU, rounded, kept
// below saturation, with GStreamer's default stride.
std::vector<TestImage> noisy_frames(const Scene& scene, double sigma, int count,
                                    std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, sigma);
  const double top = static_cast<double>(max_key(scene.format)) - 1.0;
  std::vector<TestImage> frames;
  for (int i = 0; i < count; ++i) {
    // A seed the frame does not use: make_frame() gives the stride; every pixel is set below.
    TestImage frame = make_frame(scene.format, scene.width, scene.height, 0);
    for (int y = 0; y < scene.height; ++y) {
      for (int x = 0; x < scene.width; ++x) {
        const double v = scene.clean[static_cast<std::size_t>(y) * scene.width + x] + noise(rng);
        frame.set_key(x, y, 0, static_cast<std::uint32_t>(std::clamp(std::round(v), 0.0, top)));
      }
    }
    frames.push_back(std::move(frame));
  }
  return frames;
}

// backend=cpu unless `props` names one; and the modes most tests exercise (shift none, fit
// current, reject mask, float history: the defaults before the measured best became the
// default) unless `props` names them.
GstElement* whiten_element(Properties props) {
  const auto names = [&](std::string_view key) {
    return std::any_of(props.begin(), props.end(),
                       [&](const auto& p) { return std::string_view(p.first) == key; });
  };
  GstElement* element = make_element("siftwhiten", props);
  if (!names("backend")) gst_util_set_object_arg(G_OBJECT(element), "backend", "cpu");
  for (const auto& [key, value] :
       {std::pair{"shift", "none"}, std::pair{"fit", "current"}, std::pair{"reject", "mask"},
        std::pair{"history-format", "float"}, std::pair{"output", "residual"}}) {
    if (!names(key)) gst_util_set_object_arg(G_OBJECT(element), key, value);
  }
  g_object_set(element, "post-messages", TRUE, nullptr);
  return element;
}

void push(Harness& harness, const TestImage& frame, int index) {
  GstBuffer* buffer = to_buffer(frame);
  GST_BUFFER_PTS(buffer) = static_cast<GstClockTime>(index) * kFrame;
  GST_BUFFER_DURATION(buffer) = kFrame;
  REQUIRE(gst_harness_push(harness.get(), buffer) == GST_FLOW_OK);
}

// The "siftwhiten" element messages on `bus` so far, in order.
std::vector<WhitenReport> pop_reports(GstBus* bus) {
  std::vector<WhitenReport> reports;
  while (GstMessage* message = gst_bus_pop_filtered(bus, GST_MESSAGE_ELEMENT)) {
    const GstStructure* structure = gst_message_get_structure(message);
    if (gst_structure_has_name(structure, starsift::gst::kWhitenMessageName)) {
      const auto report = starsift::gst::whiten_report_from_structure(structure);
      CHECK(report.has_value());
      if (report) reports.push_back(*report);
    }
    gst_message_unref(message);
  }
  return reports;
}

WhitenReport stats_of(GstElement* element) {
  GstStructure* structure = nullptr;
  g_object_get(element, "stats", &structure, nullptr);
  REQUIRE(structure != nullptr);
  CHECK(gst_structure_has_name(structure, starsift::gst::kWhitenStatsName));
  const auto report = starsift::gst::whiten_report_from_structure(structure);
  gst_structure_free(structure);
  REQUIRE(report.has_value());
  return *report;
}

// What the element hands downstream: the frames (in order, with their PTS) and the report of
// each.
struct ElementRun {
  std::vector<TestImage> frames;
  std::vector<GstClockTime> pts;
  std::vector<WhitenReport> reports;
  WhitenReport stats;  // the stats property at the end
};

ElementRun run_element(Properties props, int depth, const std::vector<TestImage>& in) {
  GstElement* element = whiten_element(props);
  g_object_set(element, "depth", depth, nullptr);
  Harness harness(element);
  GstBus* bus = harness.bus();
  const TestImage& first = in.front();
  gst_harness_set_src_caps_str(harness.get(),
                               caps_string(first.format, first.width, first.height).c_str());
  for (int i = 0; i < static_cast<int>(in.size()); ++i) push(harness, in[i], i);
  REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_eos()));

  ElementRun run;
  while (GstBuffer* buffer = gst_harness_try_pull(harness.get())) {
    run.pts.push_back(GST_BUFFER_PTS(buffer));
    run.frames.push_back(from_buffer(buffer, first.format, first.width, first.height));
    gst_buffer_unref(buffer);
  }
  run.reports = pop_reports(bus);
  run.stats = stats_of(harness.element());
  return run;
}

// WhitenParams with the modes whiten_element() pins when a test does not name them.
WhitenParams classic() {
  WhitenParams p;
  p.shift = starsift::WhitenShift::None;
  p.fit = starsift::WhitenFit::Current;
  p.reject = starsift::WhitenReject::Mask;
  p.history_format = starsift::WhitenHistoryFormat::Float;
  p.output = starsift::WhitenOutput::Residual;
  return p;
}

// The CPU WhitenStage on the same frames, and its stats after each.
struct StageRun {
  std::vector<TestImage> frames;
  std::vector<WhitenStats> stats;
};

StageRun run_stage(const WhitenParams& params, const std::vector<TestImage>& in) {
  starsift::BackendChoice cpu;
  cpu.backend = starsift::Backend::Cpu;
  const auto stage = starsift::make_whiten_stage(params, cpu);
  const TestImage& first = in.front();
  stage->configure(
      {first.width, first.height, first.format, starsift::default_bit_depth(first.format)});
  StageRun run;
  for (const TestImage& frame : in) {
    TestImage out(frame.width, frame.height, frame.format,
                  static_cast<int>(frame.stride - static_cast<std::ptrdiff_t>(frame.width) *
                                                      starsift::bytes_per_pixel(frame.format)));
    stage->process(frame.cview(), out.view());
    run.frames.push_back(std::move(out));
    run.stats.push_back(stage->last_stats());
  }
  return run;
}

// The element's frames and per-frame reports equal the stage's, bit for bit, in order.
void check_same_as_stage(const ElementRun& element, const StageRun& stage) {
  REQUIRE(element.frames.size() == stage.frames.size());
  REQUIRE(element.reports.size() == stage.stats.size());
  for (std::size_t i = 0; i < stage.frames.size(); ++i) {
    INFO("frame " << i);
    check_same(element.frames[i], stage.frames[i]);
    CHECK(element.pts[i] == i * kFrame);
    WhitenReport expected;
    expected.stats = stage.stats[i];
    expected.frames = i + 1;
    expected.timestamp = i * kFrame;
    CHECK(element.reports[i] == expected);
  }
  CHECK(element.stats == element.reports.back());
}

// Residual samples of `frame` around `offset`: mean and standard deviation.
std::pair<double, double> residual_moments(const TestImage& frame, double offset) {
  double sum = 0.0, sum2 = 0.0;
  const double n = static_cast<double>(frame.width) * frame.height;
  for (int y = 0; y < frame.height; ++y) {
    for (int x = 0; x < frame.width; ++x) {
      const double r = static_cast<double>(frame.key(x, y, 0)) - offset;
      sum += r;
      sum2 += r * r;
    }
  }
  const double mean = sum / n;
  return {mean, std::sqrt(sum2 / n - mean * mean)};
}

}  // namespace

TEST_CASE("siftwhiten documents every property with its range and default", "[plugin][whiten]") {
  GstElement* element = make_element("siftwhiten", {});
  GObjectClass* klass = G_OBJECT_GET_CLASS(element);
  check_properties_documented(element);

  struct IntRange {
    const char* name;
    int min, max, def;
  };
  for (const IntRange& p :
       {IntRange{"history", WhitenParams::kMinHistory, WhitenParams::kMaxHistory,
                 WhitenParams::kDefaultHistory},
        IntRange{"refit-interval", 1, WhitenParams::kMaxRefitInterval,
                 WhitenParams::kDefaultRefitInterval},
        IntRange{"fit-subsample", WhitenParams::kAutoFitSubsample, WhitenParams::kMaxFitSubsample,
                 WhitenParams::kDefaultFitSubsample},
        IntRange{"shift-window", WhitenParams::kMinShiftWindow, WhitenParams::kMaxShiftWindow,
                 WhitenParams::kDefaultShiftWindow}}) {
    INFO("property " << p.name);
    auto* spec = G_PARAM_SPEC_INT(g_object_class_find_property(klass, p.name));
    REQUIRE(spec != nullptr);
    CHECK(spec->minimum == p.min);
    CHECK(spec->maximum == p.max);
    CHECK(spec->default_value == p.def);
  }

  struct DoubleRange {
    const char* name;
    double min, max, def;
  };
  for (const DoubleRange& p :
       {DoubleRange{"gamma", 0.0, G_MAXDOUBLE, WhitenParams::kDefaultGamma},
        DoubleRange{"shift-max", 0.0, G_MAXDOUBLE, WhitenParams::kDefaultShiftMax},
        DoubleRange{"reject-sigma", 0.0, G_MAXDOUBLE, WhitenParams::kDefaultRejectSigma},
        DoubleRange{"reject-object-sigma", 0.0, G_MAXDOUBLE,
                    WhitenParams::kDefaultRejectObjectSigma},
        DoubleRange{"noise-frames", 0.0, G_MAXDOUBLE, WhitenParams::kAutoNoiseFrames},
        DoubleRange{"offset", -1.0, 65535.0, -1.0},
        DoubleRange{"gain", -G_MAXDOUBLE, G_MAXDOUBLE, WhitenParams::kAutoGain}}) {
    INFO("property " << p.name);
    auto* spec = G_PARAM_SPEC_DOUBLE(g_object_class_find_property(klass, p.name));
    REQUIRE(spec != nullptr);
    CHECK(spec->minimum == p.min);
    CHECK(spec->maximum == p.max);
    CHECK(spec->default_value == p.def);
  }

  struct EnumNicks {
    const char* name;
    int def;
    std::vector<const char*> nicks;
  };
  for (const EnumNicks& p :
       {EnumNicks{"fit", static_cast<int>(WhitenParams::kDefaultFit), {"current", "past"}},
        EnumNicks{"shift", static_cast<int>(WhitenParams::kDefaultShift), {"none", "resample"}},
        EnumNicks{
            "reject", static_cast<int>(WhitenParams::kDefaultReject), {"none", "mask", "objects"}},
        EnumNicks{"warmup",
                  static_cast<int>(WhitenParams::kDefaultWarmup),
                  {"passthrough", "zeros", "partial"}},
        EnumNicks{"history-format",
                  static_cast<int>(WhitenParams::kDefaultHistoryFormat),
                  {"float", "half"}},
        EnumNicks{"output",
                  static_cast<int>(WhitenParams::kDefaultOutput),
                  {"significance", "residual"}}}) {
    INFO("property " << p.name);
    auto* spec = G_PARAM_SPEC_ENUM(g_object_class_find_property(klass, p.name));
    REQUIRE(spec != nullptr);
    CHECK(spec->default_value == p.def);
    CHECK(spec->enum_class->n_values == p.nicks.size());
    for (const char* nick : p.nicks) {
      INFO("nick " << nick);
      CHECK(g_enum_get_value_by_nick(spec->enum_class, nick) != nullptr);
    }
  }

  // The parameters that keep the history are controllable; those that restart it are not.
  for (const char* name : {"gamma", "refit-interval", "shift-max", "reject-sigma",
                           "reject-object-sigma", "warmup", "offset", "gain", "despike"}) {
    INFO("property " << name);
    CHECK((g_object_class_find_property(klass, name)->flags & GST_PARAM_CONTROLLABLE) != 0);
  }
  for (const char* name : {"history", "fit", "fit-subsample", "shift", "shift-window", "reject",
                           "noise-frames", "history-format"}) {
    INFO("property " << name);
    CHECK((g_object_class_find_property(klass, name)->flags & GST_PARAM_CONTROLLABLE) == 0);
  }

  auto* despike = G_PARAM_SPEC_BOOLEAN(g_object_class_find_property(klass, "despike"));
  REQUIRE(despike != nullptr);
  CHECK(despike->default_value == TRUE);
  auto* post = G_PARAM_SPEC_BOOLEAN(g_object_class_find_property(klass, "post-messages"));
  REQUIRE(post != nullptr);
  CHECK(post->default_value == FALSE);
  GParamSpec* stats = g_object_class_find_property(klass, "stats");
  REQUIRE(stats != nullptr);
  CHECK((stats->flags & G_PARAM_WRITABLE) == 0);
  gst_object_unref(element);
}

TEST_CASE("siftwhiten properties round trip, offset -1 meaning unset", "[plugin][whiten]") {
  GstElement* element = make_element("siftwhiten", {{"history", "12"},
                                                    {"gamma", "0.001"},
                                                    {"fit", "past"},
                                                    {"refit-interval", "3"},
                                                    {"fit-subsample", "2"},
                                                    {"shift", "resample"},
                                                    {"shift-window", "64"},
                                                    {"shift-max", "4.5"},
                                                    {"reject", "objects"},
                                                    {"reject-sigma", "5"},
                                                    {"reject-object-sigma", "3.5"},
                                                    {"noise-frames", "30"},
                                                    {"warmup", "zeros"},
                                                    {"offset", "1000"},
                                                    {"gain", "-2"},
                                                    {"despike", "false"},
                                                    {"history-format", "half"},
                                                    {"post-messages", "true"}});
  gint history = 0, refit = 0, subsample = 0, window = 0, fit = -1, shift = -1, reject = -1,
       warmup = -1;
  gdouble gamma = 0, shift_max = 0, reject_sigma = 0, noise_frames = 0, offset = 0, gain = 0,
          object_sigma = 0;
  gboolean post = FALSE, despike = TRUE;
  gint history_format = -1;
  g_object_get(element, "despike", &despike, "reject-object-sigma", &object_sigma, "history-format",
               &history_format, nullptr);
  CHECK(despike == FALSE);
  CHECK(history_format == static_cast<gint>(starsift::WhitenHistoryFormat::Half));
  CHECK(object_sigma == 3.5);
  g_object_get(element, "history", &history, "gamma", &gamma, "fit", &fit, "refit-interval", &refit,
               "fit-subsample", &subsample, "shift", &shift, "shift-window", &window, "shift-max",
               &shift_max, "reject", &reject, "reject-sigma", &reject_sigma, "noise-frames",
               &noise_frames, "warmup", &warmup, "offset", &offset, "gain", &gain, "post-messages",
               &post, nullptr);
  CHECK(history == 12);
  CHECK(gamma == 0.001);
  CHECK(fit == static_cast<gint>(starsift::WhitenFit::Past));
  CHECK(refit == 3);
  CHECK(subsample == 2);
  CHECK(shift == static_cast<gint>(starsift::WhitenShift::Resample));
  CHECK(window == 64);
  CHECK(shift_max == 4.5);
  CHECK(reject == static_cast<gint>(starsift::WhitenReject::Objects));
  CHECK(reject_sigma == 5.0);
  CHECK(noise_frames == 30.0);
  CHECK(warmup == static_cast<gint>(starsift::WhitenWarmup::Zeros));
  CHECK(offset == 1000.0);
  CHECK(gain == -2.0);
  CHECK(post == TRUE);

  // Any negative offset unsets it (mid-range), read back as -1.
  g_object_set(element, "offset", -0.5, nullptr);
  g_object_get(element, "offset", &offset, nullptr);
  CHECK(offset == -1.0);
  gst_object_unref(element);
}

TEST_CASE("siftwhiten refuses invalid values and keeps the previous one", "[plugin][whiten]") {
  GstElement* element = make_element("siftwhiten", {});
  {
    // In range for GObject, not a power of two: WhitenParams::validate() refuses it.
    WarningCapture warnings;
    g_object_set(element, "shift-window", 100, nullptr);
    gint window = 0;
    g_object_get(element, "shift-window", &window, nullptr);
    CHECK(window == WhitenParams::kDefaultShiftWindow);
    INFO(warnings.all());
    REQUIRE(warnings.messages().size() == 1);
    CHECK(warnings.messages()[0].find("shift-window") != std::string::npos);
    CHECK(warnings.messages()[0].find("powers of two") != std::string::npos);
  }
  {
    // Out of the param spec's range: GObject refuses it.
    WarningCapture warnings;
    g_object_set(element, "history", 0, nullptr);
    gint history = 0;
    g_object_get(element, "history", &history, nullptr);
    CHECK(history == WhitenParams::kDefaultHistory);
    INFO(warnings.all());
    REQUIRE(warnings.messages().size() == 1);
    CHECK(warnings.messages()[0].find("history") != std::string::npos);
  }
  struct Refused {
    const char* name;
    double value;
    double kept;
  };
  for (const Refused& r :
       {Refused{"shift-max", 0.0, WhitenParams::kDefaultShiftMax},
        Refused{"reject-sigma", 0.0, WhitenParams::kDefaultRejectSigma},
        Refused{"reject-object-sigma", 0.0, WhitenParams::kDefaultRejectObjectSigma},
        Refused{"noise-frames", 0.5, WhitenParams::kAutoNoiseFrames},
        Refused{"offset", -2.0, -1.0}}) {
    INFO(r.name << "=" << r.value);
    WarningCapture warnings;
    g_object_set(element, r.name, r.value, nullptr);
    gdouble value = 0.0;
    g_object_get(element, r.name, &value, nullptr);
    CHECK(value == r.kept);
    INFO(warnings.all());
    REQUIRE(warnings.messages().size() == 1);
    CHECK(warnings.messages()[0].find(r.name) != std::string::npos);
  }
  gst_object_unref(element);
}

TEST_CASE("siftwhiten accepts GRAY8 and GRAY16_LE only", "[plugin][whiten]") {
  Harness harness("siftwhiten", {{"backend", "cpu"}});
  GstPad* sinkpad = gst_element_get_static_pad(harness.element(), "sink");
  GstPad* srcpad = gst_element_get_static_pad(harness.element(), "src");
  for (const char* format : {"GRAY8", "GRAY16_LE"}) {
    INFO(format);
    GstCaps* caps = gst_caps_from_string(
        (std::string("video/x-raw,format=") + format + ",width=32,height=32,framerate=30/1")
            .c_str());
    CHECK(gst_pad_query_accept_caps(sinkpad, caps));
    gst_caps_unref(caps);
  }
  for (const char* format : {"RGBA", "BGRx", "GRAY16_BE", "I420"}) {
    INFO(format);
    GstCaps* caps = gst_caps_from_string(
        (std::string("video/x-raw,format=") + format + ",width=32,height=32,framerate=30/1")
            .c_str());
    CHECK_FALSE(gst_pad_query_accept_caps(sinkpad, caps));
    gst_caps_unref(caps);
  }
  // Both pads' templates are the element's own, not the base's six formats.
  for (GstPad* pad : {sinkpad, srcpad}) {
    GstCaps* templ = gst_pad_get_pad_template_caps(pad);
    GstCaps* expected = gst_caps_from_string("video/x-raw,format={GRAY8,GRAY16_LE}");
    CHECK(gst_caps_is_subset(templ, expected));
    gst_caps_unref(expected);
    gst_caps_unref(templ);
  }
  gst_object_unref(srcpad);
  gst_object_unref(sinkpad);
}

TEST_CASE("siftwhiten whitens a static noisy star field to sigma * sqrt(1 + sum-w2)",
          "[plugin][whiten]") {
  constexpr double kSigma = 20.0;
  constexpr int kHistory = 10;
  const Scene scene = make_scene(96, 96, PixelFormat::Gray16, 1000.0, 200.0, 5000.0, 3);
  const std::vector<TestImage> frames = noisy_frames(scene, kSigma, 30, 4);
  const ElementRun run = run_element({{"history", "10"}}, 1, frames);
  REQUIRE(run.frames.size() == frames.size());
  REQUIRE(run.reports.size() == frames.size());

  double ratio_sum = 0.0;
  int counted = 0;
  for (int i = kHistory; i < static_cast<int>(frames.size()); ++i) {
    const WhitenStats& stats = run.reports[static_cast<std::size_t>(i)].stats;
    INFO("frame " << i << " sum-w2 " << stats.weight_sq_sum);
    CHECK_FALSE(stats.warmup);
    CHECK(stats.history_used == kHistory);
    CHECK(stats.noise_floor == Approx(std::sqrt(1.0 + stats.weight_sq_sum)));
    // A static scene: nearly equal weights summing to 1, so sum-w2 is near its least, 1/N.
    CHECK(stats.weight_sq_sum >= 0.99 / kHistory);
    CHECK(stats.weight_sq_sum <= 1.5 / kHistory);
    // The stars cancel: what is left is the noise of the frame and of the prediction.
    const auto [mean, sd] = residual_moments(run.frames[static_cast<std::size_t>(i)], 32768.0);
    const double expected = kSigma * std::sqrt(1.0 + stats.weight_sq_sum);
    INFO("residual mean " << mean << " sd " << sd << ", expected sd " << expected);
    CHECK(std::abs(mean) < 1.5);
    // 9216 samples know one frame's sd to about 0.8 %; without the prediction's own noise the
    // ratio would be 1 / sqrt(1.1) = 0.953.
    CHECK(sd == Approx(expected).epsilon(0.05));
    ratio_sum += sd / expected;
    ++counted;
  }
  CHECK(ratio_sum / counted == Approx(1.0).epsilon(0.015));

  // The input's own noise around its clean scene, for scale: whitening leaves no scene.
  const auto [in_mean, in_sd] = residual_moments(frames.back(), 1000.0);
  CHECK(in_sd > 5.0 * kSigma);
}

TEST_CASE("siftwhiten's default output is whitening's significance in sigmas of 1024 levels",
          "[plugin][whiten]") {
  // The field of the test above, every property at its default but the modes whiten_element()
  // pins: once sigma has settled (noise-frames 20), the output read through the scale is white
  // noise of unit sigma.
  const Scene scene = make_scene(96, 96, PixelFormat::Gray16, 1000.0, 200.0, 5000.0, 3);
  const std::vector<TestImage> frames = noisy_frames(scene, 20.0, 60, 4);
  const ElementRun run = run_element({{"history", "10"}, {"output", "significance"}}, 1, frames);
  REQUIRE(run.frames.size() == frames.size());
  for (int i = 40; i < 60; ++i) {
    const auto [mean, sd] = residual_moments(run.frames[static_cast<std::size_t>(i)], 32768.0);
    INFO("frame " << i << " mean " << mean / 1024.0 << " sd " << sd / 1024.0 << " sigma");
    CHECK(std::abs(mean) < 0.05 * 1024.0);
    CHECK(sd == Approx(1024.0).epsilon(0.1));
  }
}

TEST_CASE("siftwhiten equals the CPU WhitenStage run directly, frames and stats",
          "[plugin][whiten]") {
  SECTION("GRAY16_LE, the classic modes but the history") {
    const Scene scene = make_scene(64, 48, PixelFormat::Gray16, 1000.0, 200.0, 5000.0, 5);
    const std::vector<TestImage> frames = noisy_frames(scene, 15.0, 24, 6);
    WhitenParams params = classic();
    params.history = 8;
    check_same_as_stage(run_element({{"history", "8"}}, 1, frames), run_stage(params, frames));
  }
  SECTION("GRAY16_LE, the shipped defaults but the history") {
    const Scene scene = make_scene(64, 48, PixelFormat::Gray16, 1000.0, 200.0, 5000.0, 5);
    const std::vector<TestImage> frames = noisy_frames(scene, 15.0, 24, 6);
    WhitenParams params;
    params.history = 8;
    const ElementRun run = run_element({{"history", "8"},
                                        {"shift", "resample"},
                                        {"fit", "current"},
                                        {"reject", "objects"},
                                        {"history-format", "half"},
                                        {"output", "significance"}},
                                       1, frames);
    check_same_as_stage(run, run_stage(params, frames));
  }
  SECTION("GRAY8 with a padded stride and every parameter set") {
    // 90 pixels of GRAY8: GStreamer's stride is 92.
    const Scene scene = make_scene(90, 40, PixelFormat::Gray8, 60.0, 20.0, 150.0, 7);
    const std::vector<TestImage> frames = noisy_frames(scene, 4.0, 20, 8);
    REQUIRE(frames.front().stride == 92);
    WhitenParams params = classic();
    params.history = 6;
    params.gamma = 1e-3;
    params.fit = starsift::WhitenFit::Past;
    params.refit_interval = 2;
    params.fit_subsample = 2;
    params.shift = starsift::WhitenShift::Resample;
    params.shift_window = 32;
    params.shift_max = 3.0;
    params.reject = starsift::WhitenReject::None;
    params.reject_sigma = 3.0;
    params.noise_frames = 5.0;
    params.warmup = starsift::WhitenWarmup::Zeros;
    params.offset = 100.0;
    params.gain = 3.0;
    const ElementRun run = run_element({{"history", "6"},
                                        {"gamma", "1e-3"},
                                        {"fit", "past"},
                                        {"refit-interval", "2"},
                                        {"fit-subsample", "2"},
                                        {"shift", "resample"},
                                        {"shift-window", "32"},
                                        {"shift-max", "3"},
                                        {"reject", "none"},
                                        {"reject-sigma", "3"},
                                        {"noise-frames", "5"},
                                        {"warmup", "zeros"},
                                        {"offset", "100"},
                                        {"gain", "3"}},
                                       1, frames);
    check_same_as_stage(run, run_stage(params, frames));
  }
  SECTION("reject=objects with shift=resample") {
    const Scene scene = make_scene(64, 48, PixelFormat::Gray16, 1000.0, 200.0, 5000.0, 11);
    const std::vector<TestImage> frames = noisy_frames(scene, 15.0, 16, 12);
    WhitenParams params = classic();
    params.history = 4;
    params.shift = starsift::WhitenShift::Resample;
    params.shift_window = 32;
    params.reject = starsift::WhitenReject::Objects;
    params.reject_object_sigma = 3.0;
    const ElementRun run = run_element({{"history", "4"},
                                        {"shift", "resample"},
                                        {"shift-window", "32"},
                                        {"reject", "objects"},
                                        {"reject-object-sigma", "3"}},
                                       1, frames);
    check_same_as_stage(run, run_stage(params, frames));
  }
}

TEST_CASE("siftwhiten at depth 3 hands out the frames and stats of depth 1, in order",
          "[plugin][whiten][depth]") {
  const Scene scene = make_scene(64, 64, PixelFormat::Gray16, 1000.0, 200.0, 5000.0, 9);
  const std::vector<TestImage> frames = noisy_frames(scene, 15.0, 20, 10);
  const Properties props = {{"history", "6"}, {"shift", "resample"}, {"shift-window", "32"}};
  const ElementRun depth1 = run_element(props, 1, frames);
  const ElementRun depth3 = run_element(props, 3, frames);
  REQUIRE(depth3.frames.size() == frames.size());
  REQUIRE(depth1.frames.size() == frames.size());
  REQUIRE(depth3.reports.size() == frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    INFO("frame " << i);
    CHECK(depth3.pts[i] == i * kFrame);
    check_same(depth3.frames[i], depth1.frames[i]);
    CHECK(depth3.reports[i] == depth1.reports[i]);
  }
  CHECK(depth3.stats == depth1.stats);
  CHECK(depth3.stats.frames == frames.size());
}

// On CUDA the engine queues a frame before its stats exist: each frame leaving must still be
// reported with its own numbers, as at depth 1 (where every frame finishes before the next).
TEST_CASE("siftwhiten on CUDA at depth 3 hands out the frames and stats of depth 1",
          "[plugin][whiten][depth][cuda]") {
  if (!cuda_usable_or_skip()) return;
  const Scene scene = make_scene(64, 64, PixelFormat::Gray16, 1000.0, 200.0, 5000.0, 9);
  const std::vector<TestImage> frames = noisy_frames(scene, 15.0, 24, 10);
  const Properties props = {
      {"backend", "cuda"}, {"history", "6"}, {"shift", "resample"}, {"shift-window", "32"}};
  const ElementRun depth1 = run_element(props, 1, frames);
  const ElementRun depth3 = run_element(props, 3, frames);
  REQUIRE(depth1.reports.size() == frames.size());
  REQUIRE(depth3.frames.size() == frames.size());
  REQUIRE(depth3.reports.size() == frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    INFO("frame " << i);
    CHECK(depth3.reports[i].stats.frame == i);
    check_same(depth3.frames[i], depth1.frames[i]);
    CHECK(depth3.reports[i] == depth1.reports[i]);
  }
  CHECK(depth3.stats == depth1.stats);
}

// The CUDA stage takes reject=objects with shift=resample only; with shift=none its refusal
// is the element's error, naming why and what is allowed.
TEST_CASE("siftwhiten on CUDA: reject=objects with shift=resample runs, with shift=none errors",
          "[plugin][whiten][cuda]") {
  if (!cuda_usable_or_skip()) return;
  const PipelineResult resample = run_pipeline(
      "videotestsrc num-buffers=12 pattern=snow ! video/x-raw,format=GRAY16_LE,width=64,height=48 "
      "! siftwhiten backend=cuda history=4 shift=resample shift-window=32 reject=objects ! "
      "fakesink");
  CHECK(resample.error == "");
  CHECK(resample.eos);
  for (const char* depth : {"1", "3"}) {
    INFO("depth " << depth);
    const std::string line =
        std::string(
            "videotestsrc num-buffers=4 ! video/x-raw,format=GRAY16_LE,width=64,height=48 "
            "! siftwhiten backend=cuda history=4 shift=none reject=objects depth=") +
        depth + " ! fakesink";
    const PipelineResult none = run_pipeline(line.c_str());
    CHECK_FALSE(none.eos);
    CHECK(none.error.find("reject objects with shift none") != std::string::npos);
    CHECK(none.error.find("shift: resample") != std::string::npos);
  }
}

TEST_CASE("siftwhiten keeps the history through a gamma change, restarts it for history",
          "[plugin][whiten][depth]") {
  const Scene scene = make_scene(48, 48, PixelFormat::Gray16, 1000.0, 200.0, 5000.0, 11);
  const std::vector<TestImage> frames = noisy_frames(scene, 15.0, 24, 12);
  for (const int depth : {1, 3}) {
    INFO("depth " << depth);
    GstElement* element = whiten_element({{"history", "6"}});
    g_object_set(element, "depth", depth, nullptr);
    Harness harness(element);
    GstBus* bus = harness.bus();
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, 48, 48).c_str());

    for (int i = 0; i < 12; ++i) push(harness, frames[static_cast<std::size_t>(i)], i);
    g_object_set(harness.element(), "gamma", 1e-2, nullptr);
    for (int i = 12; i < 16; ++i) push(harness, frames[static_cast<std::size_t>(i)], i);
    // Frames 0..15 pushed; at depth 3 the last two are still in flight.
    const WhitenReport after_gamma = stats_of(harness.element());
    CHECK(after_gamma.stats.frame == static_cast<std::uint64_t>(15 - (depth - 1)));
    CHECK(after_gamma.stats.history_used == 6);
    CHECK_FALSE(after_gamma.stats.warmup);

    g_object_set(harness.element(), "history", 4, nullptr);
    for (int i = 16; i < 20; ++i) push(harness, frames[static_cast<std::size_t>(i)], i);
    REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_eos()));

    const std::vector<WhitenReport> reports = pop_reports(bus);
    REQUIRE(reports.size() == 20);
    for (std::size_t i = 0; i < reports.size(); ++i) {
      INFO("frame " << i);
      const WhitenStats& stats = reports[i].stats;
      CHECK(reports[i].frames == i + 1);
      CHECK(reports[i].timestamp == i * kFrame);
      if (i < 16) {
        // One history from the start: gamma did not restart it.
        CHECK(stats.frame == i);
        CHECK(stats.history_used == static_cast<int>(std::min<std::size_t>(i, 6)));
      } else {
        // history=4 from frame 16 on: a new history.
        CHECK(stats.frame == i - 16);
        CHECK(stats.history_used == static_cast<int>(std::min<std::size_t>(i - 16, 4)));
        CHECK(stats.warmup == (i - 16 < 4));
      }
    }
    // The new gamma reached the solve at frame 12: the absolute regularisation is 100 times
    // larger (gamma * tr(R) / n, R nearly the same).
    CHECK(reports[12].stats.gamma > 50.0 * reports[11].stats.gamma);
    CHECK(reports[12].stats.gamma < 200.0 * reports[11].stats.gamma);
  }
}

TEST_CASE("siftwhiten starts a new history after a flush", "[plugin][whiten][depth]") {
  const Scene scene = make_scene(32, 32, PixelFormat::Gray8, 60.0, 20.0, 150.0, 13);
  const std::vector<TestImage> frames = noisy_frames(scene, 4.0, 12, 14);
  for (const int depth : {1, 3}) {
    INFO("depth " << depth);
    GstElement* element = whiten_element({{"history", "4"}});
    g_object_set(element, "depth", depth, nullptr);
    Harness harness(element);
    GstBus* bus = harness.bus();
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 32, 32).c_str());
    for (int i = 0; i < 8; ++i) push(harness, frames[static_cast<std::size_t>(i)], i);
    const std::size_t before = pop_reports(bus).size();
    CHECK(before == static_cast<std::size_t>(8 - (depth - 1)));

    REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_flush_start()));
    REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_flush_stop(TRUE)));
    GstSegment segment;
    gst_segment_init(&segment, GST_FORMAT_TIME);
    REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_segment(&segment)));
    for (int i = 8; i < 12; ++i) push(harness, frames[static_cast<std::size_t>(i)], i);
    REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_eos()));

    // The frames in flight at the flush were dropped; the rest start from frame 0.
    const std::vector<WhitenReport> after = pop_reports(bus);
    REQUIRE(after.size() == 4);
    for (std::size_t i = 0; i < after.size(); ++i) {
      INFO("frame " << 8 + i);
      CHECK(after[i].stats.frame == i);
      CHECK(after[i].timestamp == (8 + i) * kFrame);
    }
  }
}

TEST_CASE("siftwhiten keeps the history through new caps of the same shape, not a new size",
          "[plugin][whiten][depth]") {
  const Scene small = make_scene(32, 32, PixelFormat::Gray8, 60.0, 20.0, 150.0, 17);
  const Scene large = make_scene(40, 32, PixelFormat::Gray8, 60.0, 20.0, 150.0, 17);
  const std::vector<TestImage> small_frames = noisy_frames(small, 4.0, 8, 18);
  const std::vector<TestImage> large_frames = noisy_frames(large, 4.0, 2, 19);
  for (const int depth : {1, 3}) {
    INFO("depth " << depth);
    GstElement* element = whiten_element({{"history", "4"}});
    g_object_set(element, "depth", depth, nullptr);
    Harness harness(element);
    GstBus* bus = harness.bus();
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 32, 32).c_str());
    for (int i = 0; i < 4; ++i) push(harness, small_frames[static_cast<std::size_t>(i)], i);
    // Another frame rate: the same frames, the same history.
    gst_harness_set_src_caps_str(harness.get(),
                                 "video/x-raw,format=GRAY8,width=32,height=32,framerate=15/1");
    for (int i = 4; i < 8; ++i) push(harness, small_frames[static_cast<std::size_t>(i)], i);
    // Another size: a new history.
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 40, 32).c_str());
    for (int i = 8; i < 10; ++i) push(harness, large_frames[static_cast<std::size_t>(i - 8)], i);
    REQUIRE(gst_harness_push_event(harness.get(), gst_event_new_eos()));

    const std::vector<WhitenReport> reports = pop_reports(bus);
    REQUIRE(reports.size() == 10);
    for (std::size_t i = 0; i < reports.size(); ++i) {
      INFO("frame " << i);
      CHECK(reports[i].stats.frame == (i < 8 ? i : i - 8));
    }
  }
}

TEST_CASE("siftwhiten stats: zero before start, the last frame's after, kept after stop",
          "[plugin][whiten]") {
  GstElement* element =
      make_element("siftwhiten", {{"backend", "cpu"}, {"history", "3"}, {"fit", "current"}});
  gst_object_ref(element);
  const WhitenReport idle = stats_of(element);
  CHECK(idle == WhitenReport{});

  {
    Harness harness(element);
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 24, 16).c_str());
    const Scene scene = make_scene(24, 16, PixelFormat::Gray8, 60.0, 20.0, 150.0, 15);
    const std::vector<TestImage> frames = noisy_frames(scene, 4.0, 5, 16);
    for (int i = 0; i < 5; ++i) {
      push(harness, frames[static_cast<std::size_t>(i)], i);
      const WhitenReport now = stats_of(element);
      INFO("frame " << i);
      CHECK(now.frames == static_cast<std::uint64_t>(i + 1));
      CHECK(now.stats.frame == static_cast<std::uint64_t>(i));
      CHECK(now.timestamp == static_cast<GstClockTime>(i) * kFrame);
      CHECK(now.stats.history_used == std::min(i, 3));
    }
    // No messages unless asked for.
    CHECK(pop_reports(harness.bus()).empty());
  }
  // The harness set the element to NULL: the last frame's stats stay.
  const WhitenReport stopped = stats_of(element);
  CHECK(stopped.frames == 5);
  CHECK(stopped.stats.frame == 4);
  gst_object_unref(element);
}

TEST_CASE("siftwhiten refuses an offset the format cannot hold with an error", "[plugin][whiten]") {
  const PipelineResult result = run_pipeline(
      "videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=32,height=16 ! "
      "siftwhiten backend=cpu offset=300 ! fakesink");
  CHECK_FALSE(result.eos);
  CHECK(result.error.find("offset") != std::string::npos);
  CHECK(result.error.find("0..255") != std::string::npos);
}

TEST_CASE("siftwhiten runs in a pipeline to EOS", "[plugin][whiten]") {
  const PipelineResult result = run_pipeline(
      "videotestsrc num-buffers=12 pattern=snow ! video/x-raw,format=GRAY16_LE,width=64,height=48 "
      "! siftwhiten backend=cpu history=4 shift=resample shift-window=32 depth=3 ! fakesink");
  CHECK(result.error == "");
  CHECK(result.eos);
}

TEST_CASE("siftwhiten switched to backend=cuda mid-stream without a GPU stops with an error",
          "[plugin][whiten]") {
  // 16 x 8 frames: too small to align (shift=resample needs 16 x 16), so without it.
  Harness harness("siftwhiten", {{"backend", "cpu"}, {"shift", "none"}});
  check_switch_to_cuda_fails(harness);
}

TEST_CASE("siftwhiten reports round trip through their GstStructure", "[plugin][whiten]") {
  WhitenReport report;
  report.stats.frame = 41;
  report.stats.history_used = 17;
  report.stats.warmup = true;
  report.stats.refit = true;
  report.stats.weight_sq_sum = 0.0625;
  report.stats.noise_floor = std::sqrt(1.0625);
  report.stats.gamma = 1234.5;
  report.stats.shift_x = -0.25;
  report.stats.shift_y = 3.75;
  report.stats.shift_peak = 0.875;
  report.stats.reference_changed = true;
  report.stats.rejected = 99;
  report.stats.despiked = 26;
  report.frames = 1ull << 40;
  report.timestamp = 5 * GST_SECOND;
  for (const char* name : {starsift::gst::kWhitenStatsName, starsift::gst::kWhitenMessageName}) {
    INFO(name);
    GstStructure* structure = starsift::gst::whiten_report_to_structure(report, name);
    CHECK(gst_structure_has_name(structure, name));
    const auto back = starsift::gst::whiten_report_from_structure(structure);
    REQUIRE(back.has_value());
    CHECK(*back == report);
    // A field of another type is not a report.
    gst_structure_set(structure, "frame", G_TYPE_INT, 1, nullptr);
    CHECK_FALSE(starsift::gst::whiten_report_from_structure(structure).has_value());
    gst_structure_free(structure);
  }
}
