// SPDX-License-Identifier: LGPL-2.1-or-later
#include "element_support.hpp"

#include <catch2/catch.hpp>

#include "pipeline/backend.hpp"
#include "pipeline/median/reference.hpp"
#include "pipeline/thread_pool.hpp"

namespace starsift::test {

namespace {

ThreadPool& reference_pool() {
  static ThreadPool pool(2);
  return pool;
}

}  // namespace

void init_gstreamer() {
  static const bool initialised = [] {
    gst_init(nullptr, nullptr);
    return true;
  }();
  (void)initialised;
}

GstElement* make_element(const char* factory, Properties props) {
  init_gstreamer();
  GstElement* element = gst_element_factory_make(factory, nullptr);
  REQUIRE(element != nullptr);
  for (const auto& [name, value] : props) gst_util_set_object_arg(G_OBJECT(element), name, value);
  return element;
}

Harness::Harness(const char* factory, Properties props) : Harness(make_element(factory, props)) {}

Harness::Harness(GstElement* element) {
  h_ = gst_harness_new_with_element(element, "sink", "src");
  gst_object_unref(element);
}

Harness::~Harness() {
  if (bus_ != nullptr) {
    gst_element_set_bus(h_->element, nullptr);
    gst_object_unref(bus_);
  }
  gst_harness_teardown(h_);
}

GstBus* Harness::bus() {
  if (bus_ == nullptr) {
    bus_ = gst_bus_new();
    gst_element_set_bus(h_->element, bus_);
  }
  return bus_;
}

std::string gst_format_name(PixelFormat format) {
  return std::string(to_string(format));
}

std::string caps_string(PixelFormat format, int width, int height) {
  return "video/x-raw,format=" + gst_format_name(format) + ",width=" + std::to_string(width) +
         ",height=" + std::to_string(height) + ",framerate=30/1";
}

GstVideoInfo video_info(PixelFormat format, int width, int height) {
  init_gstreamer();
  GstCaps* caps = gst_caps_from_string(caps_string(format, width, height).c_str());
  GstVideoInfo info;
  REQUIRE(gst_video_info_from_caps(&info, caps));
  gst_caps_unref(caps);
  return info;
}

TestImage make_frame(PixelFormat format, int width, int height, std::uint32_t seed,
                     std::ptrdiff_t stride) {
  const GstVideoInfo info = video_info(format, width, height);
  if (stride == 0) stride = GST_VIDEO_INFO_PLANE_STRIDE(&info, 0);
  const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(width) * bytes_per_pixel(format);
  TestImage image(width, height, format, static_cast<int>(stride - row));
  fill(image, Fill::Random, seed);
  image.set_key(0, 0, 0, 0);                                 // sentinel
  image.set_key(width - 1, height - 1, 0, max_key(format));  // sentinel
  return image;
}

GstBuffer* to_buffer(const TestImage& image, bool add_meta) {
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

TestImage from_buffer(GstBuffer* buffer, PixelFormat format, int width, int height) {
  const GstVideoInfo info = video_info(format, width, height);
  TestImage image(width, height, format,
                  static_cast<int>(GST_VIDEO_INFO_PLANE_STRIDE(&info, 0) -
                                   static_cast<std::ptrdiff_t>(width) * bytes_per_pixel(format)));
  REQUIRE(gst_buffer_get_size(buffer) >= image.bytes.size());
  gst_buffer_extract(buffer, 0, image.bytes.data(), image.bytes.size());
  return image;
}

TestImage median_of(const MedianParams& params, const TestImage& in) {
  TestImage out(in.width, in.height, in.format);
  median_reference(params, in.cview(), out.view(), reference_pool());
  return out;
}

TestImage push_and_pull(Harness& harness, const TestImage& in, bool add_meta) {
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

void check_properties_documented(GstElement* element) {
  guint count = 0;
  GParamSpec** specs = g_object_class_list_properties(G_OBJECT_GET_CLASS(element), &count);
  for (guint i = 0; i < count; ++i) {
    INFO("property " << g_param_spec_get_name(specs[i]));
    const char* blurb = g_param_spec_get_blurb(specs[i]);
    CHECK(blurb != nullptr);
    if (blurb != nullptr) CHECK(blurb[0] != '\0');
  }
  g_free(specs);
}

void check_inspect_shows(const char* factory, std::initializer_list<const char*> expected) {
  init_gstreamer();
  gchar* out = nullptr;
  gchar* err = nullptr;
  gint status = 0;
  GError* error = nullptr;
  const std::string command = std::string("gst-inspect-1.0 ") + factory;
  if (!g_spawn_command_line_sync(command.c_str(), &out, &err, &status, &error)) {
    WARN("skipped: gst-inspect-1.0 not runnable here: " << error->message);
    g_clear_error(&error);
    return;
  }
  const std::string text = out != nullptr ? out : "";
  g_free(out);
  g_free(err);
  CHECK(g_spawn_check_wait_status(status, nullptr));

  const auto squeeze = [](std::string s) {
    std::erase_if(s, [](unsigned char c) { return g_ascii_isspace(c); });
    return s;
  };
  const std::string squeezed = squeeze(text);
  for (const char* part : expected) {
    INFO("expected " << part << " in\n" << text);
    CHECK(squeezed.find(squeeze(part)) != std::string::npos);
  }
}

void check_double_refused(GstElement* element, const char* name, double value, double kept,
                          const char* message_part) {
  INFO(name << " = " << value);
  WarningCapture warnings;
  g_object_set(element, name, value, nullptr);
  gdouble now = 0.0;
  g_object_get(element, name, &now, nullptr);
  CHECK(now == kept);
  INFO(warnings.all());
  REQUIRE(warnings.messages().size() == 1);
  CHECK(warnings.messages()[0].find(message_part) != std::string::npos);
}

void check_output_caps(Harness& harness, const std::string& caps) {
  GstCaps* in_caps = gst_caps_from_string(caps.c_str());
  GstCaps* out_caps = gst_pad_get_current_caps(harness.get()->sinkpad);
  REQUIRE(out_caps != nullptr);
  CHECK(gst_caps_is_equal(in_caps, out_caps));
  gst_caps_unref(out_caps);
  gst_caps_unref(in_caps);
}

void check_refuses_other_formats(const char* factory) {
  Harness harness(factory, {{"backend", "cpu"}});
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

WarningCapture::WarningCapture() {
  for (const char* domain : {"starsift", "GLib-GObject"}) {
    handlers_.emplace_back(domain, g_log_set_handler(domain, G_LOG_LEVEL_WARNING, &on_log, this));
  }
}

WarningCapture::~WarningCapture() {
  for (const auto& [domain, id] : handlers_) g_log_remove_handler(domain, id);
}

std::string WarningCapture::all() const {
  std::string text;
  for (const auto& m : messages_) text += m + "\n";
  return text;
}

void WarningCapture::on_log(const gchar*, GLogLevelFlags, const gchar* message, gpointer self) {
  static_cast<WarningCapture*>(self)->messages_.emplace_back(message);
}

ErrorText parse_error(GstMessage* message) {
  GError* error = nullptr;
  gchar* debug = nullptr;
  gst_message_parse_error(message, &error, &debug);
  ErrorText text;
  if (error != nullptr) {
    text.domain = error->domain;
    text.code = error->code;
    text.message = error->message;
  }
  if (debug != nullptr) text.debug = debug;
  g_clear_error(&error);
  g_free(debug);
  return text;
}

bool cuda_usable_or_skip() {
  const std::string why = cuda_unusable_reason(0);
  if (why.empty()) return true;
  WARN("skipped: CUDA is not usable here (" << why << ")");
  return false;
}

void check_switch_to_cuda_fails(Harness& harness) {
  if (cuda_unusable_reason(0).empty()) {
    SUCCEED("a CUDA device is usable here");
    return;
  }
  GstBus* bus = harness.bus();
  gst_harness_set_src_caps_str(harness.get(), caps_string(PixelFormat::Gray8, 16, 8).c_str());
  const TestImage in = make_frame(PixelFormat::Gray8, 16, 8, 6);
  push_and_pull(harness, in);

  gst_util_set_object_arg(G_OBJECT(harness.element()), "backend", "cuda");
  CHECK(gst_harness_push(harness.get(), to_buffer(in)) == GST_FLOW_ERROR);
  GstMessage* message = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  REQUIRE(message != nullptr);
  CHECK(parse_error(message).message.find("backend=cuda") != std::string::npos);
  gst_message_unref(message);
}

PipelineResult run_pipeline(const char* description) {
  init_gstreamer();
  GError* parse_failure = nullptr;
  GstElement* pipeline = gst_parse_launch(description, &parse_failure);
  if (parse_failure != nullptr) {
    const std::string message = parse_failure->message;
    g_clear_error(&parse_failure);
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
      const ErrorText error = parse_error(message);
      result.error = error.message;
      result.error_debug = error.debug;
    }
    gst_message_unref(message);
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
  return result;
}

}  // namespace starsift::test
