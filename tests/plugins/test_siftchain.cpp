// SPDX-License-Identifier: LGPL-2.1-or-later
// siftchain element tests: chains from the `chain` and `config` properties against
// median_reference() applied stage by stage, stats, refused values, start failures on the bus,
// chain and caps changes while playing, and a real pipeline.
#include <gst/gst.h>
#include <gst/video/video.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "element_support.hpp"
#include "pipeline/backend.hpp"
#include "pipeline/median/params.hpp"

using starsift::BorderMode;
using starsift::MedianParams;
using starsift::PixelFormat;
using namespace starsift::test;

namespace {

constexpr const char* kTwoMedians = "[{median: {size: 3}}, {median: {size: 5}}]";

// The chain of kTwoMedians, stage by stage with the reference.
TestImage two_medians(const TestImage& in) {
  return median_of({5, BorderMode::Reflect101, 0.0},
                   median_of({3, BorderMode::Reflect101, 0.0}, in));
}

// A folder of chain files for one test, removed with everything in it.
class ConfigDir {
 public:
  ConfigDir()
      : path_(std::filesystem::temp_directory_path() /
              ("starsift_test_siftchain_" + std::to_string(getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~ConfigDir() { std::filesystem::remove_all(path_); }
  ConfigDir(const ConfigDir&) = delete;
  ConfigDir& operator=(const ConfigDir&) = delete;

  // Writes `text` to `name` in the folder; returns its path.
  std::string write(const char* name, const std::string& text) const {
    const std::filesystem::path file = path_ / name;
    std::ofstream out(file);
    out << text;
    return file.string();
  }

 private:
  std::filesystem::path path_;
};

// A 3x3 constant-border median, then a 7x7 replicate one, as a chain file would say it.
constexpr const char* kFileChain =
    "# two medians\n"
    "chain:\n"
    "  - median:\n"
    "      size: 3\n"
    "      border: constant\n"
    "      border-value: 200\n"
    "  - median: {size: 7, border: replicate}\n";

TestImage file_chain(const TestImage& in) {
  return median_of({7, BorderMode::Replicate, 0.0},
                   median_of({3, BorderMode::Constant, 200.0}, in));
}

// The element's stats structure (a copy, owned by the caller).
GstStructure* stats_of(GstElement* element) {
  GstStructure* stats = nullptr;
  g_object_get(element, "stats", &stats, nullptr);
  REQUIRE(stats != nullptr);
  return stats;
}

// Takes `element` (stopped, with its properties set) towards PAUSED, which must fail, and
// returns the ERROR message it posted.
ErrorText start_error(GstElement* element) {
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(element, bus);
  CHECK(gst_element_set_state(element, GST_STATE_PAUSED) == GST_STATE_CHANGE_FAILURE);
  GstMessage* message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  ErrorText text;
  if (message != nullptr) {
    text = parse_error(message);
    gst_message_unref(message);
  }
  CHECK(message != nullptr);
  // A configuration the element was given: RESOURCE/SETTINGS.
  CHECK(text.domain == GST_RESOURCE_ERROR);
  CHECK(text.code == GST_RESOURCE_ERROR_SETTINGS);
  gst_element_set_state(element, GST_STATE_NULL);
  gst_element_set_bus(element, nullptr);
  gst_object_unref(bus);
  return text;
}

}  // namespace

TEST_CASE("siftchain documents every property", "[plugin][chain]") {
  GstElement* element = make_element("siftchain", {});
  GObjectClass* klass = G_OBJECT_GET_CLASS(element);

  check_properties_documented(element);

  for (const char* name : {"config", "chain"}) {
    INFO("property " << name);
    GParamSpec* spec = g_object_class_find_property(klass, name);
    REQUIRE(spec != nullptr);
    CHECK(spec->value_type == G_TYPE_STRING);
    CHECK((spec->flags & G_PARAM_WRITABLE) != 0);
    CHECK((spec->flags & GST_PARAM_MUTABLE_PLAYING) != 0);
    CHECK(string_property(element, name).empty());
  }
  for (const char* name : {"backend", "device-id"}) {
    CHECK(g_object_class_find_property(klass, name) != nullptr);
  }
  for (const char* name : {"active-backend", "stats"}) {
    INFO("property " << name);
    GParamSpec* spec = g_object_class_find_property(klass, name);
    REQUIRE(spec != nullptr);
    CHECK((spec->flags & G_PARAM_WRITABLE) == 0);
  }
  CHECK(g_object_class_find_property(klass, "stats")->value_type == GST_TYPE_STRUCTURE);

  // Before any frame: a structure with every field, zero frames.
  GstStructure* stats = stats_of(element);
  CHECK(gst_structure_has_name(stats, "siftchain-stats"));
  guint64 frames = 1;
  CHECK(gst_structure_get_uint64(stats, "frames", &frames));
  CHECK(frames == 0);
  for (const char* field : {"backend", "stages", "stage-ms", "upload-ms", "download-ms"}) {
    INFO("field " << field);
    CHECK(gst_structure_has_field(stats, field));
  }
  gst_structure_free(stats);
  gst_object_unref(element);
}

TEST_CASE("gst-inspect-1.0 siftchain shows its properties", "[plugin][chain]") {
  init_gstreamer();
  gchar* out = nullptr;
  gint status = 0;
  GError* error = nullptr;
  if (!g_spawn_command_line_sync("gst-inspect-1.0 siftchain", &out, nullptr, &status, &error)) {
    WARN("gst-inspect-1.0 not runnable here: " << error->message);
    g_clear_error(&error);
    return;
  }
  const std::string text = out != nullptr ? out : "";
  g_free(out);
  CHECK(g_spawn_check_wait_status(status, nullptr));
  for (const char* expected : {"config", "chain", "backend", "device-id", "active-backend", "stats",
                               "GRAY16_LE", "BGRx"}) {
    INFO("expected " << expected << " in\n" << text);
    CHECK(text.find(expected) != std::string::npos);
  }
}

TEST_CASE("siftchain output equals two medians, padded strides and GstVideoMeta strides",
          "[plugin][chain]") {
  struct Case {
    PixelFormat format;
    int width, height;
    std::ptrdiff_t stride;  // 0: GStreamer's default
    std::ptrdiff_t expected_stride;
    bool add_meta;
  };
  const Case cases[] = {
      // 37 pixels of GRAY8 give GStreamer's default stride of 40: 3 padding bytes per row.
      {PixelFormat::Gray8, 37, 29, 0, 40, false},
      // 37 pixels of GRAY16_LE give 74 bytes, padded to 76.
      {PixelFormat::Gray16, 37, 23, 0, 76, false},
      // RGBA rows are never padded by default; upstream's video meta says 12 extra bytes.
      {PixelFormat::Rgba, 37, 21, 37 * 4 + 12, 37 * 4 + 12, true},
  };
  for (const Case& c : cases) {
    INFO(gst_format_name(c.format) << " " << c.width << "x" << c.height);
    const TestImage in = make_frame(c.format, c.width, c.height, 21, c.stride);
    REQUIRE(in.stride == c.expected_stride);
    Harness harness("siftchain", {{"backend", "cpu"}, {"chain", kTwoMedians}});
    gst_harness_set_src_caps_str(harness.get(), caps_string(c.format, c.width, c.height).c_str());
    check_same(push_and_pull(harness, in, c.add_meta), two_medians(in));
    CHECK(string_property(harness.element(), "active-backend") == "cpu");
  }
}

TEST_CASE("siftchain negotiates every supported format", "[plugin][chain]") {
  for (const PixelFormat format : kGstFormats) {
    INFO("format " << gst_format_name(format));
    Harness harness("siftchain", {{"backend", "cpu"}, {"chain", kTwoMedians}});
    gst_harness_set_src_caps_str(harness.get(), caps_string(format, 19, 11).c_str());
    const TestImage in = make_frame(format, 19, 11, 24);
    check_same(push_and_pull(harness, in), two_medians(in));
  }
}

TEST_CASE("siftchain with backend=auto equals the reference (the GPU, where one is usable)",
          "[plugin][chain]") {
  for (const PixelFormat format : kGstFormats) {
    INFO("format " << gst_format_name(format));
    Harness harness("siftchain", {{"backend", "auto"}, {"chain", kTwoMedians}});
    gst_harness_set_src_caps_str(harness.get(), caps_string(format, 67, 45).c_str());
    const TestImage in = make_frame(format, 67, 45, 25);
    check_same(push_and_pull(harness, in), two_medians(in));
    const std::string expected = starsift::cuda_unusable_reason(0).empty() ? "cuda:0" : "cpu";
    CHECK(string_property(harness.element(), "active-backend") == expected);
  }
}

TEST_CASE("siftchain runs the chain of a config file", "[plugin][chain]") {
  const ConfigDir dir;
  const std::string path = dir.write("chain.yaml", kFileChain);
  Harness harness("siftchain", {{"backend", "cpu"}, {"config", path.c_str()}});
  CHECK(string_property(harness.element(), "config") == path);
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, 41, 27).c_str());
  const TestImage in = make_frame(PixelFormat::Gray16, 41, 27, 26);
  check_same(push_and_pull(harness, in), file_chain(in));
}

TEST_CASE("siftchain stats count the frames and name the stages", "[plugin][chain]") {
  Harness harness("siftchain", {{"backend", "cpu"}, {"chain", kTwoMedians}});
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 32, 16).c_str());
  const TestImage in = make_frame(PixelFormat::Gray8, 32, 16, 27);
  for (int i = 0; i < 3; ++i) push_and_pull(harness, in);

  GstStructure* stats = stats_of(harness.element());
  gchar* text = gst_structure_to_string(stats);
  INFO(text);
  g_free(text);
  CHECK(gst_structure_has_name(stats, "siftchain-stats"));
  guint64 frames = 0;
  CHECK(gst_structure_get_uint64(stats, "frames", &frames));
  CHECK(frames == 3);
  CHECK(std::string(gst_structure_get_string(stats, "backend")) == "cpu");
  CHECK(std::string(gst_structure_get_string(stats, "stages")) == "median,median");

  const GValue* stage_ms = gst_structure_get_value(stats, "stage-ms");
  REQUIRE(stage_ms != nullptr);
  REQUIRE(GST_VALUE_HOLDS_ARRAY(stage_ms));
  REQUIRE(gst_value_array_get_size(stage_ms) == 2);
  for (guint i = 0; i < 2; ++i) {
    const GValue* ms = gst_value_array_get_value(stage_ms, i);
    REQUIRE(G_VALUE_HOLDS_DOUBLE(ms));
    CHECK(g_value_get_double(ms) >= 0.0);
  }
  double upload_ms = -1.0;
  double download_ms = -1.0;
  CHECK(gst_structure_get_double(stats, "upload-ms", &upload_ms));
  CHECK(gst_structure_get_double(stats, "download-ms", &download_ms));
  CHECK(upload_ms == 0.0);  // the CPU copies nothing
  CHECK(download_ms == 0.0);
  gst_structure_free(stats);

  // A new chain: the count goes on, the stages are the new ones.
  g_object_set(harness.element(), "chain", "[{median: {size: 9}}]", nullptr);
  push_and_pull(harness, in);
  stats = stats_of(harness.element());
  CHECK(gst_structure_get_uint64(stats, "frames", &frames));
  CHECK(frames == 4);
  CHECK(std::string(gst_structure_get_string(stats, "stages")) == "median");
  CHECK(gst_value_array_get_size(gst_structure_get_value(stats, "stage-ms")) == 1);
  gst_structure_free(stats);
}

TEST_CASE("siftchain refuses an inline chain that does not parse, keeping the old one",
          "[plugin][chain]") {
  GstElement* element = make_element("siftchain", {{"chain", kTwoMedians}});
  struct Case {
    const char* chain;
    const char* says;  // besides the location
  };
  const Case cases[] = {
      {"[{unsharp: {size: 3}}]", "chain property:1:3: stage 1: unknown filter 'unsharp'"},
      {"[{median: {size: 4}}]", "chain property:1:18: stage 1 (median): size: 4"},
      {"[{median: {sise: 3}}]", "chain property:1:12: stage 1 (median)"},
  };
  for (const Case& c : cases) {
    INFO("chain=" << c.chain);
    WarningCapture warnings;
    g_object_set(element, "chain", c.chain, nullptr);
    CHECK(string_property(element, "chain") == kTwoMedians);
    INFO(warnings.all());
    REQUIRE(warnings.messages().size() == 1);
    const std::string& warning = warnings.messages()[0];
    CHECK(warning.find("chain") != std::string::npos);
    CHECK(warning.find(c.says) != std::string::npos);
    CHECK(warning.find("allowed: ") != std::string::npos);
  }
  {
    WarningCapture warnings;
    g_object_set(element, "chain", "[{unsharp: {}}]", nullptr);
    REQUIRE(warnings.messages().size() == 1);
    CHECK(warnings.messages()[0].find("allowed: median") != std::string::npos);
  }
  gst_object_unref(element);
}

TEST_CASE("siftchain refuses a config file that does not parse, naming file:line:column",
          "[plugin][chain]") {
  const ConfigDir dir;
  const std::string good = dir.write("good.yaml", kFileChain);
  const std::string bad = dir.write("bad.yaml", "chain:\n  - median: {size: 4}\n");
  const std::string missing = (std::filesystem::path(good).parent_path() / "missing.yaml").string();

  GstElement* element = make_element("siftchain", {{"config", good.c_str()}});
  {
    WarningCapture warnings;
    g_object_set(element, "config", bad.c_str(), nullptr);
    CHECK(string_property(element, "config") == good);
    INFO(warnings.all());
    REQUIRE(warnings.messages().size() == 1);
    CHECK(warnings.messages()[0].find(bad + ":2:20: stage 1 (median): size") != std::string::npos);
    CHECK(warnings.messages()[0].find("allowed: odd values 3..31") != std::string::npos);
  }
  {
    WarningCapture warnings;
    g_object_set(element, "config", missing.c_str(), nullptr);
    CHECK(string_property(element, "config") == good);
    REQUIRE(warnings.messages().size() == 1);
    CHECK(warnings.messages()[0].find(missing + ": cannot read the chain file") !=
          std::string::npos);
  }
  gst_object_unref(element);
}

TEST_CASE("siftchain with a config path that cannot be read does not start", "[plugin][chain]") {
  const std::string missing = "/nonexistent/starsift/chain.yaml";
  WarningCapture warnings;  // the refusal at set time
  const PipelineResult result =
      run_pipeline(("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=32,height=16 ! "
                    "siftchain backend=cpu config=" +
                    missing + " ! fakesink")
                       .c_str());
  CHECK_FALSE(result.eos);
  INFO(result.error << "\n" << result.error_debug);
  CHECK(result.error.find("neither config nor chain is set") != std::string::npos);
  CHECK(result.error.find(missing) != std::string::npos);
  REQUIRE(warnings.messages().size() == 1);
  CHECK(warnings.messages()[0].find(missing) != std::string::npos);
}

TEST_CASE("siftchain with an inline chain that does not parse does not start", "[plugin][chain]") {
  WarningCapture warnings;  // the refusal at set time
  const PipelineResult result = run_pipeline(
      "videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=32,height=16 ! "
      "siftchain backend=cpu chain=\"[{median: {size: 4}}]\" ! fakesink");
  CHECK_FALSE(result.eos);
  INFO(result.error << "\n" << result.error_debug);
  CHECK(result.error.find("chain property:1:18: stage 1 (median): size") != std::string::npos);
  CHECK(result.error.find("allowed: odd values 3..31") != std::string::npos);
  CHECK(warnings.messages().size() == 1);
}

TEST_CASE("siftchain cuts a huge refused value in its warning and its start error",
          "[plugin][chain]") {
  const std::string chain = "[{median: {border: " + std::string(5'000'000, 'w') + "}}]";
  WarningCapture warnings;
  GstElement* element = make_element("siftchain", {{"backend", "cpu"}});
  g_object_set(element, "chain", chain.c_str(), nullptr);
  REQUIRE(warnings.messages().size() == 1);
  CHECK(warnings.messages()[0].size() < 1000);
  CHECK(warnings.messages()[0].find("(5000000 bytes)") != std::string::npos);
  const ErrorText error = start_error(element);
  CHECK(error.message.size() + error.debug.size() < 2000);
  // The property value and the YAML value, each cut.
  CHECK(error.message.find("(" + std::to_string(chain.size()) + " bytes)") != std::string::npos);
  CHECK(error.message.find("(5000000 bytes)") != std::string::npos);
  gst_object_unref(element);
}

TEST_CASE("siftchain reads its config file again at start", "[plugin][chain]") {
  const ConfigDir dir;
  const std::string path = dir.write("chain.yaml", kFileChain);

  SECTION("a file that no longer parses: the error names file:line:column") {
    GstElement* element = make_element("siftchain", {{"backend", "cpu"}, {"config", path.c_str()}});
    dir.write("chain.yaml", "chain:\n  - median: {size: 3}\n  - median: {border: mirror}\n");
    const ErrorText error = start_error(element);
    INFO(error.message << "\n" << error.debug);
    CHECK(error.message.find(path + ":3:22: stage 2 (median): border") != std::string::npos);
    CHECK(error.message.find("allowed: ") != std::string::npos);
    CHECK(error.debug.find("config=" + path) != std::string::npos);
    CHECK(string_property(element, "active-backend").empty());
    gst_object_unref(element);
  }
  SECTION("a file that is gone: the error names the path") {
    GstElement* element = make_element("siftchain", {{"backend", "cpu"}, {"config", path.c_str()}});
    std::filesystem::remove(path);
    const ErrorText error = start_error(element);
    INFO(error.message << "\n" << error.debug);
    CHECK(error.message.find(path + ": cannot read the chain file") != std::string::npos);
    gst_object_unref(element);
  }
  SECTION("a file that changed: the new chain runs") {
    GstElement* element = make_element("siftchain", {{"backend", "cpu"}, {"config", path.c_str()}});
    dir.write("chain.yaml", "chain:\n  - median: {size: 5, border: replicate}\n");
    Harness harness(element);
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 30, 20).c_str());
    const TestImage in = make_frame(PixelFormat::Gray8, 30, 20, 28);
    check_same(push_and_pull(harness, in), median_of({5, BorderMode::Replicate, 0.0}, in));
  }
}

TEST_CASE("siftchain does not start with both config and chain set", "[plugin][chain]") {
  const ConfigDir dir;
  const std::string path = dir.write("chain.yaml", kFileChain);
  GstElement* element = make_element(
      "siftchain", {{"backend", "cpu"}, {"config", path.c_str()}, {"chain", kTwoMedians}});
  const ErrorText error = start_error(element);
  INFO(error.message);
  CHECK(error.message.find("both config") != std::string::npos);
  CHECK(error.message.find("set exactly one") != std::string::npos);
  gst_object_unref(element);

  const PipelineResult result =
      run_pipeline(("videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=32,height=16 ! "
                    "siftchain backend=cpu config=" +
                    path + " chain=\"" + kTwoMedians + "\" ! fakesink")
                       .c_str());
  CHECK_FALSE(result.eos);
  CHECK(result.error.find("both config") != std::string::npos);
}

TEST_CASE("siftchain does not start with neither config nor chain set", "[plugin][chain]") {
  GstElement* element = make_element("siftchain", {{"backend", "cpu"}});
  const ErrorText error = start_error(element);
  INFO(error.message);
  CHECK(error.message.find("neither config nor chain is set") != std::string::npos);
  gst_object_unref(element);

  // Unsetting counts as not set.
  element = make_element("siftchain", {{"backend", "cpu"}, {"chain", kTwoMedians}});
  g_object_set(element, "chain", "", nullptr);
  CHECK(string_property(element, "chain").empty());
  CHECK(start_error(element).message.find("neither") != std::string::npos);
  gst_object_unref(element);
}

TEST_CASE("siftchain applies a new chain at the next frame", "[plugin][chain]") {
  Harness harness("siftchain", {{"backend", "cpu"}, {"chain", kTwoMedians}});
  GstBus* bus = harness.bus();
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 37, 29).c_str());
  const TestImage in = make_frame(PixelFormat::Gray8, 37, 29, 29);

  const TestImage first = push_and_pull(harness, in);
  check_same(first, two_medians(in));

  g_object_set(harness.element(), "chain", "[{median: {size: 9, border: constant}}]", nullptr);
  const TestImage second = push_and_pull(harness, in);
  check_same(second, median_of({9, BorderMode::Constant, 0.0}, in));
  CHECK_FALSE(second.same_pixels(first));

  // From the inline chain to a file: unset one, set the other.
  const ConfigDir dir;
  const std::string path = dir.write("chain.yaml", kFileChain);
  g_object_set(harness.element(), "chain", nullptr, "config", path.c_str(), nullptr);
  check_same(push_and_pull(harness, in), file_chain(in));

  // Both set while playing: the running chain stays, with a warning on the bus.
  g_object_set(harness.element(), "chain", kTwoMedians, nullptr);
  check_same(push_and_pull(harness, in), file_chain(in));
  GstMessage* warning = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING);
  REQUIRE(warning != nullptr);
  GError* error = nullptr;
  gst_message_parse_warning(warning, &error, nullptr);
  CHECK(std::string(error->message).find("both config") != std::string::npos);
  g_clear_error(&error);
  gst_message_unref(warning);

  // ...until exactly one is set again.
  g_object_set(harness.element(), "config", "", nullptr);
  check_same(push_and_pull(harness, in), two_medians(in));
}

TEST_CASE("siftchain reconfigures its chain when the caps change", "[plugin][chain]") {
  Harness harness("siftchain", {{"backend", "cpu"}, {"chain", kTwoMedians}});
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 37, 29).c_str());
  const TestImage small = make_frame(PixelFormat::Gray8, 37, 29, 30);
  check_same(push_and_pull(harness, small), two_medians(small));

  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Bgrx, 53, 41).c_str());
  const TestImage large = make_frame(PixelFormat::Bgrx, 53, 41, 31);
  check_same(push_and_pull(harness, large), two_medians(large));
}

TEST_CASE("siftchain switched to backend=cuda mid-stream without a GPU stops with an error",
          "[plugin][chain]") {
  Harness harness("siftchain", {{"backend", "cpu"}, {"chain", kTwoMedians}});
  check_switch_to_cuda_fails(harness);
}

TEST_CASE("siftchain runs in a real pipeline to EOS", "[plugin][chain]") {
  const PipelineResult result = run_pipeline(
      "videotestsrc num-buffers=3 ! video/x-raw,format=GRAY8,width=64,height=48 ! "
      "siftchain backend=cpu chain=\"[{median: {size: 3}}, {median: {size: 5}}]\" ! fakesink");
  INFO(result.error << "\n" << result.error_debug);
  CHECK(result.error.empty());
  CHECK(result.eos);
}
