// siftmedian element tests: caps, pixel values against median_reference(), properties, errors
// on the bus, and a real pipeline. The plugin is found through GST_PLUGIN_PATH (set by ctest).
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/video/video.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/backend.hpp"
#include "pipeline/median/params.hpp"
#include "pipeline/median/reference.hpp"
#include "pipeline/thread_pool.hpp"
#include "support/test_image.hpp"

using starsift::MedianParams;
using starsift::PixelFormat;
using starsift::test::Fill;
using starsift::test::TestImage;

namespace {

using Properties = std::initializer_list<std::pair<const char*, const char*>>;

void init_gstreamer() {
  static const bool initialised = [] {
    gst_init(nullptr, nullptr);
    return true;
  }();
  (void)initialised;
}

starsift::ThreadPool& reference_pool() {
  static starsift::ThreadPool pool(2);
  return pool;
}

// A siftmedian with `props` set from strings, as gst-launch-1.0 would set them.
GstElement* make_median(Properties props) {
  init_gstreamer();
  GstElement* element = gst_element_factory_make("siftmedian", nullptr);
  REQUIRE(element != nullptr);
  for (const auto& [name, value] : props) gst_util_set_object_arg(G_OBJECT(element), name, value);
  return element;
}

// A harness around a fresh siftmedian (set to PLAYING by the harness).
class Harness {
 public:
  explicit Harness(Properties props) {
    GstElement* element = make_median(props);
    h_ = gst_harness_new_with_element(element, "sink", "src");
    gst_object_unref(element);
  }
  ~Harness() {
    if (bus_ != nullptr) {
      gst_element_set_bus(h_->element, nullptr);
      gst_object_unref(bus_);
    }
    gst_harness_teardown(h_);
  }
  Harness(const Harness&) = delete;
  Harness& operator=(const Harness&) = delete;

  GstHarness* get() const { return h_; }
  GstElement* element() const { return h_->element; }

  // Gives the element a bus so its ERROR messages can be read.
  GstBus* bus() {
    if (bus_ == nullptr) {
      bus_ = gst_bus_new();
      gst_element_set_bus(h_->element, bus_);
    }
    return bus_;
  }

 private:
  GstHarness* h_ = nullptr;
  GstBus* bus_ = nullptr;
};

// The GStreamer name of a format (pixel_format.hpp spells them as GStreamer does).
std::string gst_format_name(PixelFormat format) {
  return std::string(starsift::to_string(format));
}

std::string caps_string(PixelFormat format, int width, int height) {
  return "video/x-raw,format=" + gst_format_name(format) + ",width=" + std::to_string(width) +
         ",height=" + std::to_string(height) + ",framerate=30/1";
}

GstVideoInfo video_info(PixelFormat format, int width, int height) {
  GstCaps* caps = gst_caps_from_string(caps_string(format, width, height).c_str());
  GstVideoInfo info;
  REQUIRE(gst_video_info_from_caps(&info, caps));
  gst_caps_unref(caps);
  return info;
}

// A random test frame with the row stride GStreamer gives this format and width (or
// `stride` when not 0).
TestImage make_frame(PixelFormat format, int width, int height, std::uint32_t seed,
                     std::ptrdiff_t stride = 0) {
  const GstVideoInfo info = video_info(format, width, height);
  if (stride == 0) stride = GST_VIDEO_INFO_PLANE_STRIDE(&info, 0);
  const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(width) * starsift::bytes_per_pixel(format);
  TestImage image(width, height, format, static_cast<int>(stride - row));
  starsift::test::fill(image, Fill::Random, seed);
  image.set_key(0, 0, 0, 0);                                                 // sentinel
  image.set_key(width - 1, height - 1, 0, starsift::test::max_key(format));  // sentinel
  return image;
}

// Wraps `image` (padding included) in a buffer. With `add_meta` the buffer carries a
// GstVideoMeta with the image's own stride, which need not be GStreamer's default.
GstBuffer* to_buffer(const TestImage& image, bool add_meta = false) {
  GstBuffer* buffer = gst_buffer_new_allocate(nullptr, image.bytes.size(), nullptr);
  gst_buffer_fill(buffer, 0, image.bytes.data(), image.bytes.size());
  if (add_meta) {
    gsize offsets[GST_VIDEO_MAX_PLANES] = {0};
    gint strides[GST_VIDEO_MAX_PLANES] = {static_cast<gint>(image.stride)};
    const GstVideoInfo info = video_info(image.format, image.width, image.height);
    gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE, GST_VIDEO_INFO_FORMAT(&info),
                                   image.width, image.height, 1, offsets, strides);
  }
  GST_BUFFER_PTS(buffer) = 0;
  GST_BUFFER_DURATION(buffer) = GST_SECOND / 30;
  return buffer;
}

// Reads a pulled buffer back as an image with GStreamer's default stride.
TestImage from_buffer(GstBuffer* buffer, PixelFormat format, int width, int height) {
  const GstVideoInfo info = video_info(format, width, height);
  TestImage image(
      width, height, format,
      static_cast<int>(GST_VIDEO_INFO_PLANE_STRIDE(&info, 0) -
                       static_cast<std::ptrdiff_t>(width) * starsift::bytes_per_pixel(format)));
  REQUIRE(gst_buffer_get_size(buffer) >= image.bytes.size());
  gst_buffer_extract(buffer, 0, image.bytes.data(), image.bytes.size());
  return image;
}

TestImage reference(const MedianParams& params, const TestImage& in) {
  TestImage out(in.width, in.height, in.format);
  starsift::median_reference(params, in.cview(), out.view(), reference_pool());
  return out;
}

// Pushes `in` through the harness and returns the output frame.
TestImage push_and_pull(Harness& harness, const TestImage& in, bool add_meta = false) {
  REQUIRE(gst_harness_push(harness.get(), to_buffer(in, add_meta)) == GST_FLOW_OK);
  GstBuffer* out = gst_harness_try_pull(harness.get());
  REQUIRE(out != nullptr);
  TestImage image = from_buffer(out, in.format, in.width, in.height);
  gst_buffer_unref(out);
  return image;
}

void check_same(const TestImage& actual, const TestImage& expected) {
  INFO("first difference: " << actual.first_difference(expected));
  CHECK(actual.same_pixels(expected));
}

std::string string_property(GstElement* element, const char* name) {
  gchar* value = nullptr;
  g_object_get(element, name, &value, nullptr);
  std::string result = value != nullptr ? value : "";
  g_free(value);
  return result;
}

// Collects GLib warnings of the plugin's and GObject's log domains while alive.
class WarningCapture {
 public:
  WarningCapture() {
    for (const char* domain : {"starsift", "GLib-GObject"}) {
      handlers_.emplace_back(domain, g_log_set_handler(domain, G_LOG_LEVEL_WARNING, &on_log, this));
    }
  }
  ~WarningCapture() {
    for (const auto& [domain, id] : handlers_) g_log_remove_handler(domain, id);
  }
  const std::vector<std::string>& messages() const { return messages_; }
  std::string all() const {
    std::string text;
    for (const auto& m : messages_) text += m + "\n";
    return text;
  }

 private:
  static void on_log(const gchar*, GLogLevelFlags, const gchar* message, gpointer self) {
    static_cast<WarningCapture*>(self)->messages_.emplace_back(message);
  }
  std::vector<std::pair<const char*, guint>> handlers_;
  std::vector<std::string> messages_;
};

struct PipelineResult {
  bool eos = false;
  std::string error;  // the first ERROR message's text, empty when none
};

// Runs a gst-launch style pipeline until EOS or ERROR (or 20 s).
PipelineResult run_pipeline(const char* description) {
  init_gstreamer();
  GError* parse_error = nullptr;
  GstElement* pipeline = gst_parse_launch(description, &parse_error);
  if (parse_error != nullptr) {
    const std::string message = parse_error->message;
    g_clear_error(&parse_error);
    if (pipeline != nullptr) gst_object_unref(pipeline);
    FAIL("cannot parse '" << description << "': " << message);
  }
  REQUIRE(pipeline != nullptr);

  PipelineResult result;
  GstBus* bus = gst_element_get_bus(pipeline);
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstMessage* message = gst_bus_timed_pop_filtered(
      bus, 20 * GST_SECOND, static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR));
  if (message != nullptr) {
    if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_EOS) {
      result.eos = true;
    } else {
      GError* error = nullptr;
      gst_message_parse_error(message, &error, nullptr);
      result.error = error->message;
      g_clear_error(&error);
    }
    gst_message_unref(message);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
  return result;
}

constexpr PixelFormat kGstFormats[] = {PixelFormat::Gray8, PixelFormat::Gray16, PixelFormat::Rgba,
                                       PixelFormat::Bgra,  PixelFormat::Rgbx,   PixelFormat::Bgrx};

}  // namespace

TEST_CASE("siftmedian documents every property with its range and default", "[plugin]") {
  GstElement* element = make_median({});
  GObjectClass* klass = G_OBJECT_GET_CLASS(element);

  guint count = 0;
  GParamSpec** specs = g_object_class_list_properties(klass, &count);
  for (guint i = 0; i < count; ++i) {
    INFO("property " << g_param_spec_get_name(specs[i]));
    const char* blurb = g_param_spec_get_blurb(specs[i]);
    CHECK(blurb != nullptr);
    if (blurb != nullptr) CHECK(std::strlen(blurb) > 0);
  }
  g_free(specs);

  auto* size = G_PARAM_SPEC_INT(g_object_class_find_property(klass, "size"));
  REQUIRE(size != nullptr);
  CHECK(size->minimum == MedianParams::kMinSize);
  CHECK(size->maximum == MedianParams::kMaxSize);
  CHECK(size->default_value == MedianParams::kDefaultSize);

  auto* border = G_PARAM_SPEC_ENUM(g_object_class_find_property(klass, "border"));
  REQUIRE(border != nullptr);
  CHECK(border->default_value == static_cast<gint>(MedianParams::kDefaultBorder));
  for (const char* nick : {"replicate", "reflect-101", "constant"}) {
    CHECK(g_enum_get_value_by_nick(border->enum_class, nick) != nullptr);
  }

  auto* border_value = G_PARAM_SPEC_DOUBLE(g_object_class_find_property(klass, "border-value"));
  REQUIRE(border_value != nullptr);
  CHECK(border_value->default_value == MedianParams::kDefaultBorderValue);
  CHECK(border_value->minimum == 0.0);
  CHECK(border_value->maximum == 65535.0);

  auto* backend = G_PARAM_SPEC_ENUM(g_object_class_find_property(klass, "backend"));
  REQUIRE(backend != nullptr);
  CHECK(backend->default_value == static_cast<gint>(starsift::Backend::Auto));
  for (const char* nick : {"auto", "cuda", "cpu"}) {
    CHECK(g_enum_get_value_by_nick(backend->enum_class, nick) != nullptr);
  }

  auto* device_id = G_PARAM_SPEC_INT(g_object_class_find_property(klass, "device-id"));
  REQUIRE(device_id != nullptr);
  CHECK(device_id->minimum == 0);
  CHECK(device_id->default_value == 0);

  GParamSpec* active = g_object_class_find_property(klass, "active-backend");
  REQUIRE(active != nullptr);
  CHECK((active->flags & G_PARAM_WRITABLE) == 0);

  for (const char* name : {"size", "border", "border-value"}) {
    INFO("property " << name);
    CHECK((g_object_class_find_property(klass, name)->flags & GST_PARAM_CONTROLLABLE) != 0);
  }
  gst_object_unref(element);
}

TEST_CASE("gst-inspect-1.0 siftmedian shows every property with its range", "[plugin]") {
  init_gstreamer();
  gchar* out = nullptr;
  gchar* err = nullptr;
  gint status = 0;
  GError* error = nullptr;
  if (!g_spawn_command_line_sync("gst-inspect-1.0 siftmedian", &out, &err, &status, &error)) {
    WARN("gst-inspect-1.0 not runnable here: " << error->message);
    g_clear_error(&error);
    return;
  }
  const std::string text = out != nullptr ? out : "";
  g_free(out);
  g_free(err);
  CHECK(g_spawn_check_wait_status(status, nullptr));

  // gst-inspect-1.0 wraps long lines and aligns numbers, so compare without whitespace.
  const auto squeeze = [](std::string s) {
    std::erase_if(s, [](unsigned char c) { return g_ascii_isspace(c); });
    return s;
  };
  const std::string squeezed = squeeze(text);
  for (const char* expected :
       {"size:", "Integer. Range: 3 - 31 Default: 3", "border:", "Default: 1, \"reflect-101\"",
        "border-value:", "Double. Range: 0 - 65535 Default: 0", "backend:", "Default: 0, \"auto\"",
        "device-id:", "Integer. Range: 0 - 2147483647 Default: 0",
        "active-backend:", "GRAY16_LE"}) {
    INFO("expected " << expected << " in\n" << text);
    CHECK(squeezed.find(squeeze(expected)) != std::string::npos);
  }
}

TEST_CASE("siftmedian negotiates every supported format, same caps out", "[plugin]") {
  for (const PixelFormat format : kGstFormats) {
    INFO("format " << gst_format_name(format));
    Harness harness({{"backend", "cpu"}});
    const std::string caps = caps_string(format, 37, 9);
    gst_harness_set_src_caps_str(harness.get(), caps.c_str());

    const TestImage in = make_frame(format, 37, 9, 11);
    const TestImage out = push_and_pull(harness, in);
    check_same(out, reference(MedianParams{}, in));

    GstCaps* in_caps = gst_caps_from_string(caps.c_str());
    GstCaps* out_caps = gst_pad_get_current_caps(harness.get()->sinkpad);
    REQUIRE(out_caps != nullptr);
    CHECK(gst_caps_is_equal(in_caps, out_caps));
    gst_caps_unref(out_caps);
    gst_caps_unref(in_caps);
  }
}

TEST_CASE("siftmedian refuses formats it does not process", "[plugin]") {
  Harness harness({{"backend", "cpu"}});
  GstPad* sinkpad = gst_element_get_static_pad(harness.element(), "sink");
  for (const char* caps_text : {"video/x-raw,format=I420,width=32,height=32,framerate=30/1",
                                "video/x-raw,format=GRAY16_BE,width=32,height=32,framerate=30/1",
                                "video/x-raw,format=RGB,width=32,height=32,framerate=30/1"}) {
    INFO(caps_text);
    GstCaps* caps = gst_caps_from_string(caps_text);
    CHECK_FALSE(gst_pad_query_accept_caps(sinkpad, caps));
    gst_caps_unref(caps);
  }
  gst_object_unref(sinkpad);
}

TEST_CASE("siftmedian output equals median_reference on GRAY8 with a padded stride", "[plugin]") {
  // 37 pixels of GRAY8 give GStreamer's default stride of 40: 3 padding bytes per row.
  const GstVideoInfo info = video_info(PixelFormat::Gray8, 37, 29);
  REQUIRE(GST_VIDEO_INFO_PLANE_STRIDE(&info, 0) == 40);
  const TestImage in = make_frame(PixelFormat::Gray8, 37, 29, 1);

  struct Case {
    const char* size;
    const char* border;
    const char* border_value;
    MedianParams params;
  };
  const Case cases[] = {
      {"3", "reflect-101", "0", {3, starsift::BorderMode::Reflect101, 0.0}},
      {"5", "replicate", "0", {5, starsift::BorderMode::Replicate, 0.0}},
      {"7", "constant", "200", {7, starsift::BorderMode::Constant, 200.0}},
      {"31", "reflect-101", "0", {31, starsift::BorderMode::Reflect101, 0.0}},
  };
  for (const Case& c : cases) {
    INFO("size " << c.size << " border " << c.border << " border-value " << c.border_value);
    Harness harness({{"backend", "cpu"},
                     {"size", c.size},
                     {"border", c.border},
                     {"border-value", c.border_value}});
    gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 37, 29).c_str());
    check_same(push_and_pull(harness, in), reference(c.params, in));
  }
}

TEST_CASE("siftmedian output equals median_reference on GRAY16_LE", "[plugin]") {
  // 37 pixels of GRAY16_LE give 74 bytes, padded to a stride of 76.
  const TestImage in = make_frame(PixelFormat::Gray16, 37, 23, 2);
  REQUIRE(in.stride == 76);
  Harness harness(
      {{"backend", "cpu"}, {"size", "5"}, {"border", "constant"}, {"border-value", "65535"}});
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray16, 37, 23).c_str());
  check_same(push_and_pull(harness, in),
             reference({5, starsift::BorderMode::Constant, 65535.0}, in));
}

TEST_CASE("siftmedian output equals median_reference on RGBA with a GstVideoMeta stride",
          "[plugin]") {
  // RGBA rows are never padded by default; upstream's video meta says 12 extra bytes here.
  const TestImage in = make_frame(PixelFormat::Rgba, 37, 21, 3, 37 * 4 + 12);
  Harness harness({{"backend", "cpu"}, {"size", "3"}, {"border", "replicate"}});
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Rgba, 37, 21).c_str());
  check_same(push_and_pull(harness, in, /*add_meta=*/true),
             reference({3, starsift::BorderMode::Replicate, 0.0}, in));
}

TEST_CASE("siftmedian with backend=auto equals median_reference (the GPU, where one is usable)",
          "[plugin]") {
  // On a GPU host this runs the CUDA stage through the element, strides and all.
  const char* sizes[] = {"3", "5", "9", "31"};
  const char* borders[] = {"replicate", "reflect-101", "constant"};
  for (const PixelFormat format : kGstFormats) {
    const TestImage in = make_frame(format, 67, 45, 7);
    for (const char* size : sizes) {
      for (const char* border : borders) {
        INFO(gst_format_name(format) << " size " << size << " border " << border);
        Harness harness(
            {{"backend", "auto"}, {"size", size}, {"border", border}, {"border-value", "200"}});
        gst_harness_set_src_caps_str(harness.get(), caps_string(format, 67, 45).c_str());
        MedianParams params;
        params.size = std::stoi(size);
        params.border = starsift::parse_border_mode(border);
        params.border_value = 200.0;
        check_same(push_and_pull(harness, in), reference(params, in));
      }
    }
  }
}

TEST_CASE("siftmedian properties round trip", "[plugin]") {
  GstElement* element = make_median({});
  g_object_set(element, "size", 9, "border-value", 17.0, "device-id", 3, nullptr);
  gst_util_set_object_arg(G_OBJECT(element), "border", "constant");
  gst_util_set_object_arg(G_OBJECT(element), "backend", "cpu");

  gint size = 0;
  gint border = -1;
  gdouble border_value = 0.0;
  gint backend = -1;
  gint device_id = -1;
  g_object_get(element, "size", &size, "border", &border, "border-value", &border_value, "backend",
               &backend, "device-id", &device_id, nullptr);
  CHECK(size == 9);
  CHECK(border == static_cast<gint>(starsift::BorderMode::Constant));
  CHECK(border_value == 17.0);
  CHECK(backend == static_cast<gint>(starsift::Backend::Cpu));
  CHECK(device_id == 3);
  CHECK(string_property(element, "active-backend").empty());  // not started
  gst_object_unref(element);
}

TEST_CASE("siftmedian refuses invalid values and keeps the old one", "[plugin]") {
  GstElement* element = make_median({{"size", "5"}, {"border-value", "9"}});
  for (const gint bad : {4, 33, 1, 0, -3}) {
    INFO("size=" << bad);
    WarningCapture warnings;
    g_object_set(element, "size", bad, nullptr);
    gint size = 0;
    g_object_get(element, "size", &size, nullptr);
    CHECK(size == 5);
    INFO(warnings.all());
    REQUIRE(warnings.messages().size() == 1);
    CHECK(warnings.messages()[0].find("size") != std::string::npos);
  }
  {
    // In range for GObject, refused by the element: the message names the allowed values.
    WarningCapture warnings;
    g_object_set(element, "size", 4, nullptr);
    REQUIRE(warnings.messages().size() == 1);
    CHECK(warnings.messages()[0].find("odd values 3..31") != std::string::npos);
  }
  {
    WarningCapture warnings;
    g_object_set(element, "border-value", 1.5, nullptr);
    gdouble border_value = 0.0;
    g_object_get(element, "border-value", &border_value, nullptr);
    CHECK(border_value == 9.0);
    REQUIRE(warnings.messages().size() == 1);
    CHECK(warnings.messages()[0].find("border-value") != std::string::npos);
  }
  {
    WarningCapture warnings;
    g_object_set(element, "device-id", -1, nullptr);
    gint device_id = -1;
    g_object_get(element, "device-id", &device_id, nullptr);
    CHECK(device_id == 0);
    CHECK(warnings.messages().size() == 1);
  }
  gst_object_unref(element);
}

TEST_CASE("siftmedian applies a property change at the next frame", "[plugin]") {
  Harness harness({{"backend", "cpu"}});
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 37, 29).c_str());
  const TestImage in = make_frame(PixelFormat::Gray8, 37, 29, 4);

  const TestImage first = push_and_pull(harness, in);
  check_same(first, reference({3, starsift::BorderMode::Reflect101, 0.0}, in));

  g_object_set(harness.element(), "size", 7, nullptr);
  const TestImage second = push_and_pull(harness, in);
  check_same(second, reference({7, starsift::BorderMode::Reflect101, 0.0}, in));
  CHECK_FALSE(second.same_pixels(first));

  gst_util_set_object_arg(G_OBJECT(harness.element()), "border", "constant");
  g_object_set(harness.element(), "border-value", 255.0, nullptr);
  check_same(push_and_pull(harness, in), reference({7, starsift::BorderMode::Constant, 255.0}, in));
}

TEST_CASE("siftmedian reports and switches its backend at the next frame", "[plugin]") {
  Harness harness({{"backend", "cpu"}});
  CHECK(string_property(harness.element(), "active-backend") == "cpu");
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 16, 8).c_str());
  const TestImage in = make_frame(PixelFormat::Gray8, 16, 8, 5);
  check_same(push_and_pull(harness, in), reference(MedianParams{}, in));

  // auto runs on the GPU when one is usable, else on the CPU; the output is the same.
  gst_util_set_object_arg(G_OBJECT(harness.element()), "backend", "auto");
  check_same(push_and_pull(harness, in), reference(MedianParams{}, in));
  const std::string expected = starsift::cuda_unusable_reason(0).empty() ? "cuda:0" : "cpu";
  CHECK(string_property(harness.element(), "active-backend") == expected);
}

TEST_CASE("siftmedian backend=cuda without a usable GPU fails with a message", "[plugin]") {
  init_gstreamer();
  const std::string why_not = starsift::cuda_unusable_reason(0);
  const PipelineResult result = run_pipeline(
      "videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=32,height=16 ! "
      "siftmedian backend=cuda ! fakesink");
  if (why_not.empty()) {
    CHECK(result.eos);
    CHECK(result.error.empty());
    return;
  }
  INFO("CUDA not usable: " << why_not);
  CHECK_FALSE(result.eos);
  CHECK(result.error.find("backend=cuda") != std::string::npos);
  CHECK(result.error.find(why_not) != std::string::npos);
}

TEST_CASE("siftmedian switched to backend=cuda mid-stream without a GPU stops with an error",
          "[plugin]") {
  if (starsift::cuda_unusable_reason(0).empty()) {
    SUCCEED("a CUDA device is usable here");
    return;
  }
  Harness harness({{"backend", "cpu"}});
  GstBus* bus = harness.bus();
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 16, 8).c_str());
  const TestImage in = make_frame(PixelFormat::Gray8, 16, 8, 6);
  push_and_pull(harness, in);

  gst_util_set_object_arg(G_OBJECT(harness.element()), "backend", "cuda");
  CHECK(gst_harness_push(harness.get(), to_buffer(in)) == GST_FLOW_ERROR);
  GstMessage* message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  REQUIRE(message != nullptr);
  GError* error = nullptr;
  gst_message_parse_error(message, &error, nullptr);
  CHECK(std::string(error->message).find("backend=cuda") != std::string::npos);
  g_clear_error(&error);
  gst_message_unref(message);
}

TEST_CASE("siftmedian refuses a border-value that does not fit the format", "[plugin]") {
  const PipelineResult result = run_pipeline(
      "videotestsrc num-buffers=2 ! video/x-raw,format=GRAY8,width=32,height=16 ! "
      "siftmedian backend=cpu border=constant border-value=300 ! fakesink");
  CHECK_FALSE(result.eos);
  CHECK(result.error.find("border-value") != std::string::npos);
  CHECK(result.error.find("0..255") != std::string::npos);
}

TEST_CASE("siftmedian runs in a real pipeline to EOS", "[plugin]") {
  const PipelineResult result = run_pipeline(
      "videotestsrc num-buffers=3 pattern=snow ! video/x-raw,format=GRAY16_LE,width=64,height=48 "
      "! siftmedian size=5 border=reflect-101 backend=cpu ! fakesink");
  CHECK(result.error.empty());
  CHECK(result.eos);
}
