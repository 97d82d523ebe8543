// SPDX-License-Identifier: LGPL-2.1-or-later
// siftcamsrc against aravis's fake GigE Vision camera, over UDP on 127.0.0.1: the frames and
// their caps, values, numbers and timestamps; exposure, gain and frame rate set and read back;
// errors for values the camera refuses and for an unknown camera; frames that land in the
// pool siftchain and siftmedian propose (no copy into the engine), where aravissrc's do not;
// rows packed tighter than GStreamer's stride; dropped frames counted and posted; a camera
// that vanishes mid-stream.
#include <arv.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <signal.h>
#include <sys/types.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "element_support.hpp"
#include "pipeline/backend.hpp"
#include "pipeline/median/params.hpp"
#include "support/fake_camera.hpp"

using starsift::MedianParams;
using starsift::PixelFormat;
using starsift::test::FakeGigECamera;
using namespace starsift::test;

namespace {

constexpr GstClockTime kFrameWait = 5 * GST_SECOND;

// A gst-launch description run as a pipeline, its bus read by the test. Stopped (NULL) and
// released on destruction.
class Pipeline {
 public:
  explicit Pipeline(const std::string& description) {
    init_gstreamer();
    GError* error = nullptr;
    pipeline_ = gst_parse_launch(description.c_str(), &error);
    if (error != nullptr) {
      const std::string message = error->message;
      g_error_free(error);
      FAIL("cannot parse '" << description << "': " << message);
    }
    REQUIRE(pipeline_ != nullptr);
    bus_ = gst_element_get_bus(pipeline_);
  }
  ~Pipeline() {
    gst_element_set_state(pipeline_, GST_STATE_NULL);
    gst_object_unref(bus_);
    gst_object_unref(pipeline_);
  }
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  GstStateChangeReturn play() { return gst_element_set_state(pipeline_, GST_STATE_PLAYING); }

  // Plays, failing with the pipeline's error when it does not start.
  void start() {
    if (play() != GST_STATE_CHANGE_FAILURE) return;
    GstMessage* message = wait(GST_MESSAGE_ERROR, 0);
    const ErrorText text = message != nullptr ? parse_error(message) : ErrorText{};
    if (message != nullptr) gst_message_unref(message);
    FAIL("the pipeline did not start: " << text.message << " (" << text.debug << ")");
  }
  GstStateChangeReturn stop() { return gst_element_set_state(pipeline_, GST_STATE_NULL); }

  // The element named `name` (a reference the pipeline keeps).
  GstElement* element(const char* name) {
    GstElement* e = gst_bin_get_by_name(GST_BIN(pipeline_), name);
    REQUIRE(e != nullptr);
    gst_object_unref(e);  // the pipeline holds it
    return e;
  }

  // The next sample of appsink `name`, or nullptr after `timeout` (its action signal: no
  // need to link libgstapp).
  GstSample* pull(const char* name, GstClockTime timeout = kFrameWait) {
    GstSample* sample = nullptr;
    g_signal_emit_by_name(element(name), "try-pull-sample", timeout, &sample);
    return sample;
  }

  // The first message of `types` within `timeout`, or nullptr.
  GstMessage* wait(GstMessageType types, GstClockTime timeout) {
    return gst_bus_timed_pop_filtered(bus_, timeout, types);
  }

  // The ERROR message the pipeline posted (within `timeout`), REQUIREd.
  ErrorText error(GstClockTime timeout = 10 * GST_SECOND) {
    GstMessage* message = wait(GST_MESSAGE_ERROR, timeout);
    REQUIRE(message != nullptr);
    ErrorText text = parse_error(message);
    gst_message_unref(message);
    return text;
  }

 private:
  GstElement* pipeline_ = nullptr;
  GstBus* bus_ = nullptr;
};

GstStructure* stats_of(GstElement* element) {
  GstStructure* stats = nullptr;
  g_object_get(element, "stats", &stats, nullptr);
  REQUIRE(stats != nullptr);
  return stats;
}

guint64 stat_u64(GstElement* element, const char* field) {
  GstStructure* stats = stats_of(element);
  guint64 value = 0;
  CHECK(gst_structure_get_uint64(stats, field, &value));
  gst_structure_free(stats);
  return value;
}

double stat_double(GstElement* element, const char* field) {
  GstStructure* stats = stats_of(element);
  double value = 0.0;
  CHECK(gst_structure_get_double(stats, field, &value));
  gst_structure_free(stats);
  return value;
}

std::string stat_string(GstElement* element, const char* field) {
  GstStructure* stats = stats_of(element);
  const gchar* value = gst_structure_get_string(stats, field);
  std::string text = value != nullptr ? value : "";
  gst_structure_free(stats);
  return text;
}

bool stat_bool(GstElement* element, const char* field) {
  GstStructure* stats = stats_of(element);
  gboolean value = FALSE;
  CHECK(gst_structure_get_boolean(stats, field, &value));
  gst_structure_free(stats);
  return value != FALSE;
}

// The camera's 16-bit frame id of a buffer's offset (its unwrapped frame number): ids run
// 1..65535 and wrap to 1.
std::uint64_t frame_id_of(guint64 offset) {
  return (offset - 1) % 0xFFFF + 1;
}

// The frame the fake camera sent with id `frame_id`, as an image.
TestImage fake_frame(int width, int height, std::uint64_t frame_id, bool sixteen_bit,
                     int gain_raw = 0, double exposure_us = 10000.0) {
  TestImage image(width, height, sixteen_bit ? PixelFormat::Gray16 : PixelFormat::Gray8);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      image.set_key(x, y, 0, fake_camera_pixel(x, y, frame_id, sixteen_bit, gain_raw, exposure_us));
    }
  }
  return image;
}

// A sample's frame as an image, through its GstVideoMeta when it has one.
TestImage image_of(GstSample* sample) {
  GstVideoInfo info;
  REQUIRE(gst_video_info_from_caps(&info, gst_sample_get_caps(sample)));
  const PixelFormat format = GST_VIDEO_INFO_FORMAT(&info) == GST_VIDEO_FORMAT_GRAY8
                                 ? PixelFormat::Gray8
                                 : PixelFormat::Gray16;
  GstVideoFrame frame;
  REQUIRE(gst_video_frame_map(&frame, &info, gst_sample_get_buffer(sample), GST_MAP_READ));
  TestImage image(GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info), format);
  const std::size_t row = static_cast<std::size_t>(image.width) * starsift::bytes_per_pixel(format);
  for (int y = 0; y < image.height; ++y) {
    std::memcpy(image.bytes.data() + y * image.stride,
                static_cast<const guint8*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0)) +
                    y * GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0),
                row);
  }
  gst_video_frame_unmap(&frame);
  return image;
}

// A buffer's reference timestamp of kind `caps_name`, or nothing.
std::optional<guint64> reference_time(GstBuffer* buffer, const char* caps_name) {
  GstCaps* reference = gst_caps_new_empty_simple(caps_name);
  GstReferenceTimestampMeta* meta = gst_buffer_get_reference_timestamp_meta(buffer, reference);
  gst_caps_unref(reference);
  if (meta == nullptr) return std::nullopt;
  return meta->timestamp;
}

bool is_frame_memory(GstBuffer* buffer) {
  return gst_buffer_n_memory(buffer) == 1 &&
         gst_memory_is_type(gst_buffer_peek_memory(buffer, 0), "StarsiftFrameMemory");
}

// Counts the buffers that reach a pad, and those in starsift frame memory.
struct MemoryCount {
  int buffers = 0;
  int frame_memory = 0;
};

GstPadProbeReturn count_memory(GstPad*, GstPadProbeInfo* info, gpointer data) {
  auto* count = static_cast<MemoryCount*>(data);
  GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  ++count->buffers;
  if (is_frame_memory(buffer)) ++count->frame_memory;
  return GST_PAD_PROBE_OK;
}

void probe_sink_pad(GstElement* element, MemoryCount* count) {
  GstPad* pad = gst_element_get_static_pad(element, "sink");
  REQUIRE(pad != nullptr);
  gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, count_memory, count, nullptr);
  gst_object_unref(pad);
}

// Waits for EOS, failing on an ERROR.
void wait_eos(Pipeline& pipeline) {
  GstMessage* message = pipeline.wait(
      static_cast<GstMessageType>(GST_MESSAGE_EOS | GST_MESSAGE_ERROR), 20 * GST_SECOND);
  REQUIRE(message != nullptr);
  if (GST_MESSAGE_TYPE(message) == GST_MESSAGE_ERROR) {
    const ErrorText error = parse_error(message);
    gst_message_unref(message);
    FAIL("error instead of EOS: " << error.message << " (" << error.debug << ")");
  }
  gst_message_unref(message);
}

// Starting `description` fails with an ERROR of `domain`/`code`; its text.
ErrorText start_error(const std::string& description, GQuark domain, gint code) {
  Pipeline pipeline(description);
  CHECK(pipeline.play() == GST_STATE_CHANGE_FAILURE);
  ErrorText error = pipeline.error();
  INFO(error.message << " (" << error.debug << ")");
  CHECK(error.domain == domain);
  CHECK(error.code == code);
  return error;
}

const MedianParams kMedian3 = [] {
  MedianParams p;
  p.size = 3;
  return p;
}();

// Pulls `frames` 128x96 frames that a 3x3 median filtered, each checked against the median of
// the fake camera's frame of the same number (appsink posts EOS once all are pulled).
void pull_medians(Pipeline& pipeline, int frames) {
  for (int i = 0; i < frames; ++i) {
    GstSample* sample = pipeline.pull("sink");
    REQUIRE(sample != nullptr);
    const guint64 offset = GST_BUFFER_OFFSET(gst_sample_get_buffer(sample));
    INFO("frame " << i << ", offset " << offset);
    check_same(image_of(sample),
               median_of(kMedian3, fake_frame(128, 96, frame_id_of(offset), false)));
    gst_sample_unref(sample);
  }
}

}  // namespace

TEST_CASE("siftcamsrc: the fake camera's Mono8 frames with their caps, numbers and times",
          "[camera]") {
  FakeGigECamera camera("MONO8");
  INFO(camera.why_not());
  REQUIRE(camera.running());
  Pipeline pipeline("siftcamsrc name=src camera=" + camera.id() + " ! appsink name=sink");
  const guint64 before_ns = static_cast<guint64>(g_get_real_time()) * 1000u;
  pipeline.start();

  GstClockTime last_pts = 0;
  guint64 last_offset = 0;
  guint64 gaps = 0;
  for (int i = 0; i < 6; ++i) {
    GstSample* sample = pipeline.pull("sink");
    REQUIRE(sample != nullptr);
    const GstStructure* caps = gst_caps_get_structure(gst_sample_get_caps(sample), 0);
    CHECK(std::string(gst_structure_get_string(caps, "format")) == "GRAY8");
    int width = 0, height = 0, fps_n = 0, fps_d = 0;
    CHECK(gst_structure_get_int(caps, "width", &width));
    CHECK(gst_structure_get_int(caps, "height", &height));
    CHECK(gst_structure_get_fraction(caps, "framerate", &fps_n, &fps_d));
    CHECK(width == 512);
    CHECK(height == 512);
    CHECK(fps_n == 25 * fps_d);  // the fake camera's own rate

    GstBuffer* buffer = gst_sample_get_buffer(sample);
    const guint64 offset = GST_BUFFER_OFFSET(buffer);
    INFO("frame " << i << ", offset " << offset);
    CHECK(GST_BUFFER_OFFSET_END(buffer) == offset + 1);
    check_same(image_of(sample), fake_frame(512, 512, frame_id_of(offset), false));
    // Written by the camera's stream straight into starsift frame memory (siftcamsrc's own
    // pool: appsink proposes none).
    CHECK(is_frame_memory(buffer));

    const GstClockTime pts = GST_BUFFER_PTS(buffer);
    REQUIRE(GST_CLOCK_TIME_IS_VALID(pts));
    CHECK(GST_BUFFER_DURATION(buffer) == GST_SECOND / 25);
    const std::optional<guint64> unix_ns = reference_time(buffer, "timestamp/x-unix");
    REQUIRE(unix_ns.has_value());
    CHECK(*unix_ns >= before_ns);
    CHECK(*unix_ns <= static_cast<guint64>(g_get_real_time()) * 1000u);
    CHECK(reference_time(buffer, "timestamp/x-camera").has_value());
    if (i == 0) {
      CHECK(GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DISCONT));
    } else {
      CHECK(pts >= last_pts);
      REQUIRE(offset > last_offset);
      gaps += offset - last_offset - 1;
    }
    last_pts = pts;
    last_offset = offset;
    gst_sample_unref(sample);
  }
  GstElement* src = pipeline.element("src");
  CHECK(stat_u64(src, "frames") >= 6);
  CHECK(stat_u64(src, "dropped") >= gaps);
  CHECK(stat_string(src, "camera") == camera.id());
  CHECK(stat_string(src, "pixel-format") == "Mono8");
  CHECK_FALSE(stat_bool(src, "downstream-pool"));
}

TEST_CASE("siftcamsrc: a frame held downstream keeps its pixels while the camera streams on",
          "[camera]") {
  FakeGigECamera camera("HOLD");
  INFO(camera.why_not());
  REQUIRE(camera.running());
  camera.set_size(64, 64);
  // Two buffers lent to the camera at 50 frames a second: within the second the frame is held,
  // the camera fills 50 more. None of them may land in the held one.
  Pipeline pipeline("siftcamsrc camera-buffers=2 fps=50/1 camera=" + camera.id() +
                    " ! appsink name=sink max-buffers=1 drop=true");
  pipeline.start();
  GstSample* held = pipeline.pull("sink");
  REQUIRE(held != nullptr);
  const guint64 offset = GST_BUFFER_OFFSET(gst_sample_get_buffer(held));
  const TestImage expected = fake_frame(64, 64, frame_id_of(offset), false);
  check_same(image_of(held), expected);
  g_usleep(G_USEC_PER_SEC);
  GstSample* later = pipeline.pull("sink");
  REQUIRE(later != nullptr);
  CHECK(GST_BUFFER_OFFSET(gst_sample_get_buffer(later)) > offset + 10);
  check_same(image_of(held), expected);
  gst_sample_unref(later);
  gst_sample_unref(held);
}

TEST_CASE("siftcamsrc: Mono16 frames are GRAY16_LE with bit-depth 16 and the camera's values",
          "[camera]") {
  FakeGigECamera camera("MONO16");
  INFO(camera.why_not());
  REQUIRE(camera.running());
  camera.set_size(320, 240);
  Pipeline pipeline("siftcamsrc camera=" + camera.id() +
                    " pixel-format=Mono16 num-buffers=3 ! appsink name=sink");
  pipeline.start();
  for (int i = 0; i < 3; ++i) {
    GstSample* sample = pipeline.pull("sink");
    REQUIRE(sample != nullptr);
    const GstStructure* caps = gst_caps_get_structure(gst_sample_get_caps(sample), 0);
    CHECK(std::string(gst_structure_get_string(caps, "format")) == "GRAY16_LE");
    int bits = 0;
    CHECK(gst_structure_get_int(caps, "bit-depth", &bits));
    CHECK(bits == 16);
    const guint64 offset = GST_BUFFER_OFFSET(gst_sample_get_buffer(sample));
    check_same(image_of(sample), fake_frame(320, 240, frame_id_of(offset), true));
    gst_sample_unref(sample);
  }
}

TEST_CASE("siftcamsrc: exposure, gain and frame rate are set in the camera and read back",
          "[camera]") {
  FakeGigECamera camera("SETTINGS");
  INFO(camera.why_not());
  REQUIRE(camera.running());
  camera.set_size(256, 64);
  {
    Pipeline pipeline("siftcamsrc name=src camera=" + camera.id() +
                      " exposure-us=20000 gain-db=1 fps=50/1 ! appsink name=sink");
    pipeline.start();
    std::vector<guint64> camera_ns;
    for (int i = 0; i < 11; ++i) {
      GstSample* sample = pipeline.pull("sink");
      REQUIRE(sample != nullptr);
      GstBuffer* buffer = gst_sample_get_buffer(sample);
      if (i == 0) {
        int fps_n = 0, fps_d = 0;
        const GstStructure* caps = gst_caps_get_structure(gst_sample_get_caps(sample), 0);
        CHECK(gst_structure_get_fraction(caps, "framerate", &fps_n, &fps_d));
        CHECK(fps_n == 50);
        CHECK(fps_d == 1);
        // The fake camera scales its ramp by 1 + gain + log10(exposure / 10 ms).
        check_same(image_of(sample),
                   fake_frame(256, 64, frame_id_of(GST_BUFFER_OFFSET(buffer)), false, 1, 20000.0));
      }
      const std::optional<guint64> t = reference_time(buffer, "timestamp/x-camera");
      REQUIRE(t.has_value());
      camera_ns.push_back(*t);
      gst_sample_unref(sample);
    }
    // 50 frames a second: 20 ms apart on the camera's clock (25 a second would be 40).
    const double mean_ms = static_cast<double>(camera_ns.back() - camera_ns.front()) / 10.0 / 1e6;
    CHECK(mean_ms > 10.0);
    CHECK(mean_ms < 30.0);
    GstElement* src = pipeline.element("src");
    CHECK(stat_double(src, "exposure-us") == Approx(20000.0));
    CHECK(stat_double(src, "gain-db") == Approx(1.0));
    CHECK(stat_double(src, "fps") == Approx(50.0));
  }
  // Read back once more by another client, after siftcamsrc let the camera go.
  GError* error = nullptr;
  arv_update_device_list();
  ArvCamera* reader = arv_camera_new(camera.id().c_str(), &error);
  REQUIRE(reader != nullptr);
  CHECK(arv_camera_get_exposure_time(reader, nullptr) == Approx(20000.0));
  CHECK(arv_camera_get_gain(reader, nullptr) == Approx(1.0));
  CHECK(arv_camera_get_frame_rate(reader, nullptr) == Approx(50.0));
  g_object_unref(reader);
}

TEST_CASE("siftcamsrc: values the camera refuses stop the start, saying what it takes",
          "[camera]") {
  FakeGigECamera camera("BOUNDS");
  INFO(camera.why_not());
  REQUIRE(camera.running());
  const std::string src = "siftcamsrc camera=" + camera.id();
  const std::string cam = "camera '" + camera.id() + "'";

  ErrorText error = start_error(src + " exposure-us=5 ! fakesink", GST_RESOURCE_ERROR,
                                GST_RESOURCE_ERROR_SETTINGS);
  CHECK_THAT(error.message, Catch::Contains("exposure-us 5 is outside what " + cam + " takes"));
  CHECK_THAT(error.message, Catch::Contains("allowed: 10..1e+07 us"));

  error =
      start_error(src + " gain-db=20 ! fakesink", GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS);
  CHECK_THAT(error.message, Catch::Contains("gain-db 20 is outside what " + cam + " takes"));
  CHECK_THAT(error.message, Catch::Contains("allowed: 0..10 dB"));

  error = start_error(src + " pixel-format=Mono12 ! fakesink", GST_RESOURCE_ERROR,
                      GST_RESOURCE_ERROR_SETTINGS);
  CHECK_THAT(error.message, Catch::Contains(cam + " does not offer pixel-format Mono12"));
  CHECK_THAT(error.message, Catch::Contains("siftcamsrc takes Mono8, Mono16"));

  // A camera set to a colour format, with no pixel-format asked: refused, not misread.
  arv_fake_camera_write_register(camera.fake(), ARV_FAKE_CAMERA_REGISTER_PIXEL_FORMAT,
                                 ARV_PIXEL_FORMAT_BAYER_RG_8);
  error = start_error(src + " ! fakesink", GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS);
  CHECK_THAT(error.message,
             Catch::Contains(cam + " sends pixel format BayerRG8, which siftcamsrc does not take"));
}

TEST_CASE("siftcamsrc: an unknown camera id stops the start, naming the cameras found",
          "[camera]") {
  FakeGigECamera camera("PRESENT");
  INFO(camera.why_not());
  REQUIRE(camera.running());
  const gint64 begin = g_get_monotonic_time();
  const ErrorText error = start_error("siftcamsrc camera=Nobody-0000 ! fakesink",
                                      GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_NOT_FOUND);
  CHECK_THAT(error.message, Catch::Contains("camera 'Nobody-0000' not found"));
  CHECK_THAT(error.message, Catch::Contains(camera.id()));
  CHECK(g_get_monotonic_time() - begin < 10 * G_USEC_PER_SEC);
}

TEST_CASE("siftcamsrc: frames land in the pool siftchain and siftmedian propose, no copy",
          "[camera]") {
  FakeGigECamera camera("POOL");
  INFO(camera.why_not());
  REQUIRE(camera.running());
  camera.set_size(128, 96);
  // Page-locked where a GPU is usable (read in place), ordinary memory otherwise (the engine
  // copies what is not page-locked); either way the frames are in the pool's frame memory.
  const bool pinned = starsift::cuda_unusable_reason(0).empty();
  constexpr int kFrames = 8;

  SECTION("siftchain") {
    Pipeline pipeline("siftcamsrc name=src num-buffers=8 camera=" + camera.id() +
                      " ! siftchain name=filter backend=auto chain=\"[{median: {size: 3}}]\" "
                      "! appsink name=sink");
    MemoryCount count;
    probe_sink_pad(pipeline.element("filter"), &count);
    pipeline.start();
    pull_medians(pipeline, kFrames);
    wait_eos(pipeline);
    CHECK(count.buffers == kFrames);
    CHECK(count.frame_memory == kFrames);
    GstElement* filter = pipeline.element("filter");
    CHECK(stat_u64(filter, "zero-copy") == (pinned ? kFrames : 0u));
    CHECK(stat_u64(filter, "copied") == (pinned ? 0u : kFrames));
    CHECK(stat_bool(pipeline.element("src"), "downstream-pool"));
  }

  SECTION("siftmedian") {
    Pipeline pipeline("siftcamsrc name=src num-buffers=8 camera=" + camera.id() +
                      " ! siftmedian name=filter backend=auto size=3 ! appsink name=sink");
    MemoryCount count;
    probe_sink_pad(pipeline.element("filter"), &count);
    pipeline.start();
    pull_medians(pipeline, kFrames);
    wait_eos(pipeline);
    CHECK(count.buffers == kFrames);
    CHECK(count.frame_memory == kFrames);
    CHECK(stat_bool(pipeline.element("src"), "downstream-pool"));
  }

  SECTION("aravissrc, for comparison: aravis's own memory, copied into the engine") {
    GstElementFactory* factory = gst_element_factory_find("aravissrc");
    if (factory == nullptr) {
      WARN("skipped: no aravissrc (Debian: libaravis-0.8-0)");
      return;
    }
    gst_object_unref(factory);
    Pipeline pipeline("aravissrc num-buffers=8 camera-name=" + camera.id() +
                      " ! siftchain name=filter backend=auto chain=\"[{median: {size: 3}}]\" "
                      "! fakesink");
    MemoryCount count;
    probe_sink_pad(pipeline.element("filter"), &count);
    pipeline.start();
    wait_eos(pipeline);
    CHECK(count.buffers == kFrames);
    CHECK(count.frame_memory == 0);
    CHECK(stat_u64(pipeline.element("filter"), "zero-copy") == 0u);
    CHECK(stat_u64(pipeline.element("filter"), "copied") == kFrames);
  }
}

TEST_CASE("siftcamsrc: rows the camera packs tighter than GStreamer's stride", "[camera]") {
  FakeGigECamera camera("ODD");
  INFO(camera.why_not());
  REQUIRE(camera.running());
  camera.set_size(101, 37);  // GRAY8 rows of 101 bytes; GStreamer's stride would be 104

  SECTION("reach siftchain through a GstVideoMeta, with the right values") {
    Pipeline pipeline("siftcamsrc num-buffers=3 camera=" + camera.id() +
                      " ! siftchain name=filter backend=cpu chain=\"[{median: {size: 3}}]\" "
                      "! appsink name=sink");
    MemoryCount count;
    probe_sink_pad(pipeline.element("filter"), &count);
    pipeline.start();
    for (int i = 0; i < 3; ++i) {
      GstSample* sample = pipeline.pull("sink");
      REQUIRE(sample != nullptr);
      const guint64 offset = GST_BUFFER_OFFSET(gst_sample_get_buffer(sample));
      check_same(image_of(sample),
                 median_of(kMedian3, fake_frame(101, 37, frame_id_of(offset), false)));
      gst_sample_unref(sample);
    }
    CHECK(count.frame_memory == count.buffers);
  }

  SECTION("into an element that does not read GstVideoMeta: an error that says so") {
    Pipeline pipeline("siftcamsrc camera=" + camera.id() + " ! appsink name=sink");
    pipeline.play();
    const ErrorText error = pipeline.error();
    CHECK(error.domain == GST_CORE_ERROR);
    CHECK_THAT(error.message, Catch::Contains("rows of 101 pixels packed in 101 bytes"));
    CHECK_THAT(error.message, Catch::Contains("does not read GstVideoMeta"));
  }
}

TEST_CASE("siftcamsrc: frames dropped while downstream is slow are counted, posted, DISCONT",
          "[camera]") {
  FakeGigECamera camera("SLOW");
  INFO(camera.why_not());
  REQUIRE(camera.running());
  camera.set_size(64, 64);
  // Two buffers lent to the camera at 50 frames a second, and 100 ms spent on each frame
  // downstream: frames come while both are full, and are lost.
  Pipeline pipeline("siftcamsrc name=src camera-buffers=2 fps=50/1 camera=" + camera.id() +
                    " ! identity sleep-time=100000 ! appsink name=sink");
  pipeline.start();
  guint64 last_offset = 0;
  guint64 gaps = 0;
  bool discont_after_gap = true;
  for (int i = 0; i < 8; ++i) {
    GstSample* sample = pipeline.pull("sink");
    REQUIRE(sample != nullptr);
    GstBuffer* buffer = gst_sample_get_buffer(sample);
    const guint64 offset = GST_BUFFER_OFFSET(buffer);
    if (i > 0 && offset > last_offset + 1) {
      gaps += offset - last_offset - 1;
      discont_after_gap =
          discont_after_gap && GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DISCONT);
    }
    last_offset = offset;
    gst_sample_unref(sample);
  }
  CHECK(gaps > 0);
  CHECK(discont_after_gap);
  GstElement* src = pipeline.element("src");
  CHECK(stat_u64(src, "dropped") >= gaps);
  CHECK(stat_u64(src, "underruns") > 0);

  GstMessage* message = nullptr;
  while ((message = pipeline.wait(GST_MESSAGE_ELEMENT, GST_SECOND)) != nullptr) {
    if (gst_structure_has_name(gst_message_get_structure(message), "siftcamsrc-drops")) break;
    gst_message_unref(message);
  }
  REQUIRE(message != nullptr);
  guint64 dropped = 0;
  CHECK(gst_structure_get_uint64(gst_message_get_structure(message), "dropped", &dropped));
  CHECK(dropped > 0);
  CHECK(GST_MESSAGE_SRC(message) == GST_OBJECT(src));
  gst_message_unref(message);
}

TEST_CASE("siftcamsrc: a camera that vanishes mid-stream ends it with an error naming it",
          "[camera]") {
  // The camera runs as a process of its own, killed as a camera is unplugged. The program is
  // the one built beside this test, or $STARSIFT_FAKE_CAMERA where the tests were moved.
  const char* program = g_getenv("STARSIFT_FAKE_CAMERA");
  if (program == nullptr) program = STARSIFT_FAKE_CAMERA;
  const char* argv[] = {program, "--serial", "GONE", nullptr};
  GPid pid = 0;
  gint out_fd = -1;
  GError* spawn_error = nullptr;
  REQUIRE(g_spawn_async_with_pipes(nullptr, const_cast<gchar**>(argv), nullptr,
                                   G_SPAWN_DO_NOT_REAP_CHILD, nullptr, nullptr, &pid, nullptr,
                                   &out_fd, nullptr, &spawn_error));
  GIOChannel* out = g_io_channel_unix_new(out_fd);
  g_io_channel_set_close_on_unref(out, TRUE);
  gchar* line = nullptr;
  g_io_channel_read_line(out, &line, nullptr, nullptr, nullptr);
  const std::string ready = line != nullptr ? line : "";
  g_free(line);
  g_io_channel_unref(out);
  INFO("starsift_fake_camera said: " << ready);
  const bool serving = ready.rfind("ready Aravis-Fake-GONE", 0) == 0;
  if (!serving) {
    kill(pid, SIGKILL);
    g_spawn_close_pid(pid);
    FAIL("the fake camera process did not serve");
  }

  Pipeline pipeline("siftcamsrc camera=Aravis-Fake-GONE ! appsink name=sink");
  pipeline.start();
  for (int i = 0; i < 3; ++i) {
    GstSample* sample = pipeline.pull("sink");
    REQUIRE(sample != nullptr);
    gst_sample_unref(sample);
  }
  kill(pid, SIGKILL);
  g_spawn_close_pid(pid);
  const gint64 gone = g_get_monotonic_time();
  const ErrorText error = pipeline.error(20 * GST_SECOND);
  const double seconds = static_cast<double>(g_get_monotonic_time() - gone) / G_USEC_PER_SEC;
  INFO(error.message << " (" << error.debug << "), after " << seconds << " s");
  CHECK(error.domain == GST_RESOURCE_ERROR);
  CHECK(error.code == GST_RESOURCE_ERROR_READ);
  CHECK_THAT(error.message, Catch::Contains("camera 'Aravis-Fake-GONE' stopped answering"));
  CHECK(seconds < 15.0);
  // A dead camera does not hold up the stop: it is released in the background.
  const gint64 stopping = g_get_monotonic_time();
  CHECK(pipeline.stop() == GST_STATE_CHANGE_SUCCESS);
  CHECK(g_get_monotonic_time() - stopping < 2 * G_USEC_PER_SEC);
}

TEST_CASE("siftcamsrc: every property is documented; bad values are refused", "[camera]") {
  GstElement* element = make_element("siftcamsrc", {});
  check_properties_documented(element);
  {
    WarningCapture warnings;
    g_object_set(element, "pixel-format", "Mono14", nullptr);
    CHECK_THAT(warnings.all(), Catch::Contains("Mono8, Mono10, Mono12, Mono16"));
  }
  gchar* format = nullptr;
  g_object_get(element, "pixel-format", &format, nullptr);
  CHECK(std::string(format) == "");
  g_free(format);
  {
    WarningCapture warnings;
    g_object_set(element, "packet-size", 100, nullptr);
    CHECK_THAT(warnings.all(), Catch::Contains("576..9000"));
  }
  gint packet = -1;
  g_object_get(element, "packet-size", &packet, nullptr);
  CHECK(packet == 0);
  gst_object_unref(element);
}
