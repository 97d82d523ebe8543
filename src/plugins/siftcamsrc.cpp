// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * SECTION:element-siftcamsrc
 * @title: siftcamsrc
 *
 * A GigE Vision or USB3 Vision camera through aravis (libaravis-0.8), for the starsift
 * elements: the camera's stream writes each frame straight into a buffer of the pool
 * downstream proposes. siftchain, siftmedian and the other filters propose page-locked frame
 * memory, so a frame reaches the engine without a single copy (aravissrc hands out aravis's
 * own memory instead, which the engine then copies; docs/cameras.md has the numbers).
 *
 * The camera is opened and configured at start, each value checked against the camera's own
 * bounds: #GstSiftCamSrc:camera (aravis's id, as `arv-tool-0.8` lists it; empty: the first
 * camera found), #GstSiftCamSrc:exposure-us, #GstSiftCamSrc:gain-db (auto exposure and auto
 * gain are turned off when set), #GstSiftCamSrc:fps, #GstSiftCamSrc:pixel-format (Mono8 as
 * GRAY8; Mono10, Mono12, Mono16 as GRAY16_LE with the real bits in the caps' bit-depth field)
 * and #GstSiftCamSrc:packet-size (GigE Vision). A property left at its default keeps the
 * camera's own setting. The caps are the camera's: its size, format and frame rate.
 *
 * Timestamps: each buffer's PTS is the running time at which the frame's first data reached
 * the host; it carries that instant as host UTC (GstReferenceTimestampMeta "timestamp/x-unix")
 * and the camera's own timestamp ("timestamp/x-camera", ns on the camera's clock). The buffer
 * offset is the camera's frame number (its frame id, unwrapped past 65535 on GigE Vision 1.x),
 * so a gap in offsets is a frame the camera sent that never arrived whole; such frames are
 * counted (#GstSiftCamSrc:stats) and reported in a `siftcamsrc-drops` element message, at
 * most one a second, and the next buffer is marked DISCONT.
 *
 * A camera that stops answering (unplugged, powered off, network down: aravis loses control
 * of it) ends the stream with a RESOURCE/READ error naming the camera. An unknown camera id,
 * a pixel format the camera does not offer or the element does not take, or a value outside
 * the camera's range fail the start with an error that says what is allowed.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 siftcamsrc camera=Aravis-Fake-GV01 exposure-us=20000 fps=25/1 \
 *     pixel-format=Mono16 ! siftchain config=chain.yaml ! fakesink
 * ]| A camera at 25 frames per second, 20 ms exposures, 16-bit, through a chain.
 */

#include "plugins/siftcamsrc.hpp"

#include <arv.h>
#include <gst/video/video.h>

#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "pipeline/error.hpp"
#include "plugins/camera/camera_control.hpp"
#include "plugins/camera/frame_numbers.hpp"
#include "plugins/camera/frame_stream.hpp"
#include "plugins/camera/pool_loans.hpp"
#include "plugins/common/frame_allocator.hpp"
#include "plugins/common/transform.hpp"
#include "plugins/common/video.hpp"

GST_DEBUG_CATEGORY_STATIC(gst_sift_cam_src_debug);
#define GST_CAT_DEFAULT gst_sift_cam_src_debug

using starsift::camera::CameraControl;
using starsift::camera::CameraFrame;
using starsift::camera::CameraMode;
using starsift::camera::CameraSettings;
using starsift::camera::FrameStream;

#define DEFAULT_PROP_CAMERA ""
#define DEFAULT_PROP_EXPOSURE_US -1.0
#define DEFAULT_PROP_GAIN_DB -1.0
#define DEFAULT_PROP_FPS_N 0
#define DEFAULT_PROP_FPS_D 1
#define DEFAULT_PROP_PIXEL_FORMAT ""
#define DEFAULT_PROP_PACKET_SIZE 0
#define DEFAULT_PROP_CAMERA_BUFFERS CameraSettings::kDefaultBuffers

// How long create() waits for a frame before it looks at unlock and a lost camera again.
constexpr guint64 kPopSliceUs = 100000;
// The siftcamsrc-drops message: at most one a second while frames go missing.
constexpr gint64 kDropMessageIntervalUs = G_USEC_PER_SEC;

enum {
  PROP_0,
  PROP_CAMERA,
  PROP_EXPOSURE_US,
  PROP_GAIN_DB,
  PROP_FPS,
  PROP_PIXEL_FORMAT,
  PROP_PACKET_SIZE,
  PROP_CAMERA_BUFFERS,
  PROP_STATS,
  N_PROPERTIES
};

static GParamSpec* properties[N_PROPERTIES];

#define CAM_SRC_CAPS                                          \
  "video/x-raw, format = (string) { GRAY8, GRAY16_LE }, "     \
  "width = (int) [ 1, 65536 ], height = (int) [ 1, 65536 ], " \
  "framerate = (fraction) [ 0/1, 2147483647/1 ]"

static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(CAM_SRC_CAPS));

static GstStaticCaps unix_time_caps = GST_STATIC_CAPS("timestamp/x-unix");
static GstStaticCaps camera_time_caps = GST_STATIC_CAPS("timestamp/x-camera");

struct GstSiftCamSrcState {
  CameraSettings settings;  // as they were at start
  // The camera before its stream: members are destroyed in reverse, the stream first.
  std::unique_ptr<CameraControl> control;
  std::unique_ptr<FrameStream> stream;
  CameraMode mode;
  ArvPixelFormat arv_format = 0;  // what every frame must be in
  GstCaps* caps = nullptr;        // fixed: the camera's size, format and frame rate
  gint fps_n = 0;                 // the caps' frame rate; 0: unknown
  gint fps_d = 1;
  bool row_meta = false;          // rows packed tighter than GStreamer's stride: GstVideoMeta
  GstBufferPool* pool = nullptr;  // GstBaseSrc's negotiated pool, as create() last saw it
  bool acquiring = false;
  starsift::camera::FrameNumbers numbers;
  bool gap = true;  // the next buffer follows missing frames (or is the first): DISCONT
  GstClockTime last_pts = GST_CLOCK_TIME_NONE;
  gint64 last_drop_message_us = 0;  // monotonic time of the last siftcamsrc-drops message
  guint64 reported_missing = 0;     // missing frames that message reported

  ~GstSiftCamSrcState() {
    stream.reset();  // ends the loans: lent buffers go back to the pool
    if (pool != nullptr) gst_object_unref(pool);
    if (caps != nullptr) gst_caps_unref(caps);
  }
};

#define gst_sift_cam_src_parent_class parent_class
G_DEFINE_TYPE(GstSiftCamSrc, gst_sift_cam_src, GST_TYPE_PUSH_SRC);
GST_ELEMENT_REGISTER_DEFINE(siftcamsrc, "siftcamsrc", GST_RANK_NONE, GST_TYPE_SIFT_CAM_SRC);

/* helpers */

// The stats structure, from what the report holds. GLib allocations only: safe under the
// object lock.
static GstStructure* gst_sift_cam_src_report_structure(const GstSiftCamSrcReport& r,
                                                       const char* name) {
  return gst_structure_new(
      name, "camera", G_TYPE_STRING, r.camera.c_str(), "model", G_TYPE_STRING, r.model.c_str(),
      "pixel-format", G_TYPE_STRING, r.pixel_format.c_str(), "width", G_TYPE_INT, r.width, "height",
      G_TYPE_INT, r.height, "fps", G_TYPE_DOUBLE, r.fps, "exposure-us", G_TYPE_DOUBLE,
      r.exposure_us, "gain-db", G_TYPE_DOUBLE, r.gain_db, "packet-size", G_TYPE_INT, r.packet_size,
      "frames", G_TYPE_UINT64, r.frames, "dropped", G_TYPE_UINT64, r.missing, "incomplete",
      G_TYPE_UINT64, r.incomplete, "underruns", G_TYPE_UINT64, r.underruns, "failures",
      G_TYPE_UINT64, r.failures, "timeouts", G_TYPE_UINT64, r.timeouts, "missing-packets",
      G_TYPE_UINT64, r.missing_packets, "resent-packets", G_TYPE_UINT64, r.resent_packets,
      "restarts", G_TYPE_UINT64, r.restarts, "lent", G_TYPE_INT, r.lent, "downstream-pool",
      G_TYPE_BOOLEAN, r.downstream_pool, nullptr);
}

// The caps the camera's mode gives: its size, format (with the real bit depth for
// GRAY16_LE, as the starsift elements read it) and frame rate (0/1 when the camera has none).
static GstCaps* gst_sift_cam_src_mode_caps(const CameraMode& mode, const CameraSettings& settings,
                                           gint* fps_n, gint* fps_d) {
  *fps_n = 0;
  *fps_d = 1;
  if (settings.has_fps()) {
    *fps_n = settings.fps_n;
    *fps_d = settings.fps_d;
  } else if (mode.fps > 0.0) {
    gst_util_double_to_fraction(mode.fps, fps_n, fps_d);
  }
  const bool gray8 = mode.pixel.format == starsift::PixelFormat::Gray8;
  GstCaps* caps = gst_caps_new_simple(
      "video/x-raw", "format", G_TYPE_STRING, gray8 ? "GRAY8" : "GRAY16_LE", "width", G_TYPE_INT,
      mode.width, "height", G_TYPE_INT, mode.height, "framerate", GST_TYPE_FRACTION, *fps_n, *fps_d,
      "pixel-aspect-ratio", GST_TYPE_FRACTION, 1, 1, nullptr);
  if (!gray8) {
    gst_caps_set_simple(caps, "bit-depth", G_TYPE_INT, mode.pixel.bit_depth, nullptr);
  }
  return caps;
}

// aravis's code of the pixel format every frame must be in.
static ArvPixelFormat gst_sift_cam_src_arv_format(const CameraMode& mode) {
  switch (mode.pixel.bit_depth) {
    case 8:
      return ARV_PIXEL_FORMAT_MONO_8;
    case 10:
      return ARV_PIXEL_FORMAT_MONO_10;
    case 12:
      return ARV_PIXEL_FORMAT_MONO_12;
    default:
      return ARV_PIXEL_FORMAT_MONO_16;
  }
}

// Destroys the streaming state. A camera that was lost is released on a thread of its own:
// each of the register writes that releasing it makes waits for aravis's timeouts (seconds),
// and a dead camera must not hold up a stop, a restart or a shutdown.
static void gst_sift_cam_src_release_state(GstSiftCamSrcState* state) {
  if (state == nullptr) return;
  if (state->control && state->control->lost()) {
    try {
      std::thread([state] { delete state; }).detach();
      return;
    } catch (const std::system_error&) {
      // No thread to be had: release it here, waiting.
    }
  }
  delete state;
}

// Lends buffers of the pool to the camera's stream until it holds camera-buffers of them.
// False when the pool's buffers cannot take a frame at all (the caller posts the error).
static bool gst_sift_cam_src_top_up(GstSiftCamSrcState& state) {
  using starsift::gst::Lending;
  while (state.stream->lent() < state.settings.buffers) {
    const Lending lent =
        starsift::gst::lend_pool_buffer(state.pool, state.mode.payload, *state.stream);
    if (lent == Lending::Unusable) return false;
    if (lent == Lending::NoneFree) break;  // downstream holds the rest; frames may be dropped
  }
  return true;
}

// The running time at which a frame whose first data reached the host at UTC `host_ns`
// arrived: now, less the frame's age. Never before the previous frame's.
static GstClockTime gst_sift_cam_src_running_time(GstSiftCamSrc* self, GstSiftCamSrcState& state,
                                                  guint64 host_ns) {
  GstClock* clock = gst_element_get_clock(GST_ELEMENT(self));
  if (clock == nullptr) return GST_CLOCK_TIME_NONE;
  const GstClockTime now = gst_clock_get_time(clock);
  gst_object_unref(clock);
  const GstClockTime base = gst_element_get_base_time(GST_ELEMENT(self));
  const guint64 real_now = static_cast<guint64>(g_get_real_time()) * 1000u;
  const guint64 age = host_ns != 0 && real_now > host_ns ? real_now - host_ns : 0;
  GstClockTime pts = now > base + age ? now - base - age : 0;
  if (GST_CLOCK_TIME_IS_VALID(state.last_pts) && pts < state.last_pts) pts = state.last_pts;
  state.last_pts = pts;
  return pts;
}

// Posts a siftcamsrc-drops message when frames went missing since the last one, at most one
// a second. Streaming thread.
static void gst_sift_cam_src_report_drops(GstSiftCamSrc* self, GstSiftCamSrcState& state) {
  const gint64 now = g_get_monotonic_time();
  GstStructure* structure = nullptr;
  {
    const starsift::gst::ObjectLock lock(self);
    if (self->report.missing == state.reported_missing) return;
    if (state.last_drop_message_us != 0 &&
        now - state.last_drop_message_us < kDropMessageIntervalUs) {
      return;
    }
    state.reported_missing = self->report.missing;
    structure = gst_sift_cam_src_report_structure(self->report, "siftcamsrc-drops");
  }
  state.last_drop_message_us = now;
  GST_INFO_OBJECT(self, "frames missing: %" GST_PTR_FORMAT, structure);
  gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), structure));
}

// The stream's counters into the report.
static void gst_sift_cam_src_update_counters(GstSiftCamSrc* self, const GstSiftCamSrcState& state) {
  const starsift::camera::StreamCounters c = state.stream->counters();
  const starsift::gst::ObjectLock lock(self);
  GstSiftCamSrcReport& r = self->report;
  r.incomplete = state.stream->incomplete();
  r.underruns = c.underruns;
  r.failures = c.failures;
  r.timeouts = c.timeouts;
  r.missing_packets = c.missing_packets;
  r.resent_packets = c.resent_packets;
  r.lent = state.stream->lent();
}

// A frame that arrived whole, as the buffer to push: checked against the camera's mode,
// stamped, counted.
static GstFlowReturn gst_sift_cam_src_finish_frame(GstSiftCamSrc* self, GstSiftCamSrcState& state,
                                                   const CameraFrame& frame, GstBuffer** out) {
  GstBuffer* buffer = starsift::gst::take_lent_buffer(frame.owner);
  const CameraMode& mode = state.mode;
  const char* camera = mode.id.c_str();
  if (frame.payload_type != ARV_BUFFER_PAYLOAD_TYPE_IMAGE) {
    gst_buffer_unref(buffer);
    GST_ELEMENT_ERROR(self, STREAM, FORMAT,
                      ("camera '%s' sent a frame of payload type %d, not an image", camera,
                       static_cast<int>(frame.payload_type)),
                      ("siftcamsrc takes image payloads: turn the camera's chunk data off "
                       "(ChunkModeActive=false)"));
    return GST_FLOW_ERROR;
  }
  const std::size_t image_bytes = mode.row_bytes * static_cast<std::size_t>(mode.height);
  if (frame.width != mode.width || frame.height != mode.height ||
      frame.pixel_format != state.arv_format || frame.bytes < image_bytes) {
    gst_buffer_unref(buffer);
    const char* sent = arv_pixel_format_to_gst_caps_string(frame.pixel_format);
    GST_ELEMENT_ERROR(
        self, STREAM, FORMAT,
        ("camera '%s' sent a %dx%d frame of %zu bytes in pixel format 0x%08x, not the %dx%d %s "
         "it was configured for",
         camera, frame.width, frame.height, frame.bytes, static_cast<unsigned>(frame.pixel_format),
         mode.width, mode.height, std::string(mode.pixel.genicam).c_str()),
        ("its settings changed while it streamed (%s); restart the source",
         sent != nullptr ? sent : "a format without caps"));
    return GST_FLOW_ERROR;
  }

  gst_buffer_resize(buffer, 0, static_cast<gssize>(image_bytes));
  if (state.row_meta) {
    // The camera packs its rows; GStreamer's default stride for this width is longer.
    GstVideoMeta* meta = gst_buffer_get_video_meta(buffer);
    if (meta != nullptr) {
      meta->offset[0] = 0;
      meta->stride[0] = static_cast<gint>(mode.row_bytes);
    } else {
      gsize offset[GST_VIDEO_MAX_PLANES] = {0};
      gint stride[GST_VIDEO_MAX_PLANES] = {static_cast<gint>(mode.row_bytes)};
      gst_buffer_add_video_meta_full(
          buffer, GST_VIDEO_FRAME_FLAG_NONE,
          mode.pixel.format == starsift::PixelFormat::Gray8 ? GST_VIDEO_FORMAT_GRAY8
                                                            : GST_VIDEO_FORMAT_GRAY16_LE,
          static_cast<guint>(mode.width), static_cast<guint>(mode.height), 1, offset, stride);
    }
  }

  const guint64 host_ns =
      frame.host_ns != 0 ? frame.host_ns : static_cast<guint64>(g_get_real_time()) * 1000u;
  const GstClockTime pts = gst_sift_cam_src_running_time(self, state, host_ns);
  GST_BUFFER_PTS(buffer) = pts;
  GST_BUFFER_DTS(buffer) = pts;
  GST_BUFFER_DURATION(buffer) =
      state.fps_n > 0 ? gst_util_uint64_scale_int(GST_SECOND, state.fps_d, state.fps_n)
                      : GST_CLOCK_TIME_NONE;
  GstCaps* reference = gst_static_caps_get(&unix_time_caps);
  gst_buffer_add_reference_timestamp_meta(buffer, reference, host_ns, GST_CLOCK_TIME_NONE);
  gst_caps_unref(reference);
  if (frame.camera_ns != 0) {
    reference = gst_static_caps_get(&camera_time_caps);
    gst_buffer_add_reference_timestamp_meta(buffer, reference, frame.camera_ns,
                                            GST_CLOCK_TIME_NONE);
    gst_caps_unref(reference);
  }

  const starsift::camera::FrameNumbers::Step step = state.numbers.next(frame.frame_id);
  GST_BUFFER_OFFSET(buffer) = step.number;
  GST_BUFFER_OFFSET_END(buffer) = step.number + 1;
  if (state.gap || step.missing > 0) GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DISCONT);
  state.gap = false;
  if (step.missing > 0) {
    GST_DEBUG_OBJECT(self, "%" G_GUINT64_FORMAT " frames missing before frame %" G_GUINT64_FORMAT,
                     step.missing, step.number);
  }
  {
    const starsift::gst::ObjectLock lock(self);
    ++self->report.frames;
    self->report.missing += step.missing;
    if (step.restarted) ++self->report.restarts;
  }
  gst_sift_cam_src_update_counters(self, state);
  gst_sift_cam_src_report_drops(self, state);
  *out = buffer;
  return GST_FLOW_OK;
}

/* GstBaseSrc vfuncs */

// The camera is opened and configured here, so that every error (an unknown id, a value
// outside its range) stops the start, before caps.
static gboolean gst_sift_cam_src_start(GstBaseSrc* src) {
  GstSiftCamSrc* self = GST_SIFT_CAM_SRC(src);
  std::unique_ptr<GstSiftCamSrcState> state;
  try {
    state = std::make_unique<GstSiftCamSrcState>();
    const starsift::gst::ObjectLock lock(self);
    state->settings = self->settings;
    self->report = GstSiftCamSrcReport{};
  } catch (...) {
    STARSIFT_POST_CURRENT_EXCEPTION(self, "starting");
    return FALSE;
  }
  try {
    state->settings.validate();
  } catch (...) {
    STARSIFT_POST_CURRENT_CONFIG_EXCEPTION(self, "checking the properties at start");
    return FALSE;
  }
  try {
    state->control = std::make_unique<CameraControl>(state->settings.camera);
  } catch (const std::exception& e) {
    GST_ELEMENT_ERROR(self, RESOURCE, NOT_FOUND, ("%s", e.what()), ("while opening the camera"));
    return FALSE;
  }
  try {
    state->mode = state->control->configure(state->settings);
  } catch (...) {
    STARSIFT_POST_CURRENT_CONFIG_EXCEPTION(self, "configuring the camera");
    return FALSE;
  }
  try {
    state->stream =
        std::make_unique<FrameStream>(state->control->camera(), state->control->name().c_str());
  } catch (const std::exception& e) {
    GST_ELEMENT_ERROR(self, RESOURCE, OPEN_READ, ("%s", e.what()), ("while opening the stream"));
    return FALSE;
  }
  for (const std::string& warning : state->mode.warnings) {
    GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS, ("%s", warning.c_str()), (nullptr));
  }
  const CameraMode& mode = state->mode;
  state->arv_format = gst_sift_cam_src_arv_format(mode);
  state->caps = gst_sift_cam_src_mode_caps(mode, state->settings, &state->fps_n, &state->fps_d);
  GST_INFO_OBJECT(self, "camera '%s', %s: %" GST_PTR_FORMAT ", payload %zu bytes, packet %d",
                  mode.id.c_str(), mode.description.c_str(), state->caps, mode.payload,
                  mode.packet_size);

  const starsift::gst::ObjectLock lock(self);
  GstSiftCamSrcReport& r = self->report;
  r.camera = mode.id;
  r.model = mode.description;
  r.pixel_format = std::string(mode.pixel.genicam);
  r.width = mode.width;
  r.height = mode.height;
  r.fps = mode.fps;
  r.exposure_us = mode.exposure_us.value_or(-1.0);
  r.gain_db = mode.gain_db.value_or(-1.0);
  r.packet_size = mode.packet_size;
  self->state = state.release();
  return TRUE;
}

static gboolean gst_sift_cam_src_stop(GstBaseSrc* src) {
  GstSiftCamSrc* self = GST_SIFT_CAM_SRC(src);
  GstSiftCamSrcState* state = nullptr;
  {
    const starsift::gst::ObjectLock lock(self);
    state = std::exchange(self->state, nullptr);
    self->report.lent = 0;
  }
  gst_sift_cam_src_release_state(state);
  return TRUE;
}

// Before start: every size and rate the template allows. After: the camera's own, fixed.
static GstCaps* gst_sift_cam_src_get_caps(GstBaseSrc* src, GstCaps* filter) {
  GstSiftCamSrc* self = GST_SIFT_CAM_SRC(src);
  GstCaps* caps = nullptr;
  {
    const starsift::gst::ObjectLock lock(self);
    if (self->state != nullptr && self->state->caps != nullptr) {
      caps = gst_caps_ref(self->state->caps);
    }
  }
  if (caps == nullptr) caps = gst_pad_get_pad_template_caps(GST_BASE_SRC_PAD(src));
  if (filter != nullptr) {
    GstCaps* both = gst_caps_intersect_full(filter, caps, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref(caps);
    caps = both;
  }
  return caps;
}

// Takes downstream's pool when it offers one (the starsift elements' page-locked frame
// memory), sized for the camera's payload and grown by the buffers lent to the camera;
// otherwise a pool of frame memory of its own. Rows the camera packs tighter than GStreamer's
// default stride need downstream to read GstVideoMeta.
static gboolean gst_sift_cam_src_decide_allocation(GstBaseSrc* src, GstQuery* query) {
  GstSiftCamSrc* self = GST_SIFT_CAM_SRC(src);
  GstSiftCamSrcState* state = self->state;
  GstCaps* caps = nullptr;
  gst_query_parse_allocation(query, &caps, nullptr);
  GstVideoInfo info;
  if (state == nullptr || caps == nullptr || !gst_video_info_from_caps(&info, caps)) return FALSE;
  const CameraMode& mode = state->mode;

  state->row_meta =
      mode.row_bytes != static_cast<std::size_t>(GST_VIDEO_INFO_PLANE_STRIDE(&info, 0));
  if (state->row_meta && !gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr)) {
    GST_ELEMENT_ERROR(
        self, CORE, NEGOTIATION,
        ("camera '%s' sends rows of %d pixels packed in %zu bytes, GStreamer's %s rows of that "
         "width take %d, and the element downstream does not read GstVideoMeta to learn the "
         "camera's",
         mode.id.c_str(), mode.width, mode.row_bytes, GST_VIDEO_INFO_NAME(&info),
         GST_VIDEO_INFO_PLANE_STRIDE(&info, 0)),
        ("a camera Width that is a multiple of %d, or an element that reads GstVideoMeta "
         "(videoconvert, the starsift filters) right after siftcamsrc",
         mode.pixel.format == starsift::PixelFormat::Gray8 ? 4 : 2));
    return FALSE;
  }

  const guint size = static_cast<guint>(MAX(mode.payload, GST_VIDEO_INFO_SIZE(&info)));
  const guint lent = static_cast<guint>(state->settings.buffers);
  GstBufferPool* pool = nullptr;
  guint min = 0;
  guint max = 0;
  const bool offered = gst_query_get_n_allocation_pools(query) > 0;
  if (offered) gst_query_parse_nth_allocation_pool(query, 0, &pool, nullptr, &min, &max);
  // Downstream keeps `min` buffers; the camera's stream holds `lent` more; one is on its way.
  const guint wanted = min + lent + 1;
  bool downstream = false;
  if (pool != nullptr) {
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, size, wanted, 0);
    downstream = gst_buffer_pool_set_config(pool, config);
    if (!downstream) {
      GST_INFO_OBJECT(self, "downstream's pool does not take %u buffers of %u bytes: own pool",
                      wanted, size);
      gst_object_unref(pool);
      pool = nullptr;
    }
  }
  if (pool == nullptr) {
    pool = gst_buffer_pool_new();
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, size, wanted, 0);
    GstAllocator* allocator = starsift::gst::frame_allocator();
    GstAllocationParams params;
    gst_allocation_params_init(&params);
    gst_buffer_pool_config_set_allocator(config, allocator, &params);
    gst_object_unref(allocator);
    if (!gst_buffer_pool_set_config(pool, config)) {
      gst_object_unref(pool);
      GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS,
                        ("cannot configure a pool of %u buffers of %u bytes", wanted, size),
                        (nullptr));
      return FALSE;
    }
  }
  if (offered) {
    gst_query_set_nth_allocation_pool(query, 0, pool, size, wanted, 0);
  } else {
    gst_query_add_allocation_pool(query, pool, size, wanted, 0);
  }
  gst_object_unref(pool);
  GST_DEBUG_OBJECT(self, "%s pool: %u buffers of %u bytes at least, row meta %d",
                   downstream ? "downstream's" : "own", wanted, size, state->row_meta);
  const starsift::gst::ObjectLock lock(self);
  self->report.downstream_pool = downstream;
  return TRUE;
}

// Live, one frame of latency: a frame is pushed once it has arrived whole; up to the buffers
// lent to the camera can be queued.
static gboolean gst_sift_cam_src_query(GstBaseSrc* src, GstQuery* query) {
  GstSiftCamSrc* self = GST_SIFT_CAM_SRC(src);
  if (GST_QUERY_TYPE(query) == GST_QUERY_LATENCY) {
    gint fps_n = 0, fps_d = 1, buffers = 0;
    {
      const starsift::gst::ObjectLock lock(self);
      if (self->state != nullptr) {
        fps_n = self->state->fps_n;
        fps_d = self->state->fps_d;
        buffers = self->state->settings.buffers;
      }
    }
    if (fps_n <= 0) return FALSE;
    const GstClockTime frame = gst_util_uint64_scale_int(GST_SECOND, fps_d, fps_n);
    gst_query_set_latency(query, TRUE, frame, frame * static_cast<guint64>(buffers));
    return TRUE;
  }
  return GST_BASE_SRC_CLASS(parent_class)->query(src, query);
}

static gboolean gst_sift_cam_src_unlock(GstBaseSrc* src) {
  GST_SIFT_CAM_SRC(src)->unlocking = true;
  return TRUE;
}

static gboolean gst_sift_cam_src_unlock_stop(GstBaseSrc* src) {
  GST_SIFT_CAM_SRC(src)->unlocking = false;
  return TRUE;
}

/* GstPushSrc vfuncs */

// Waits for the next whole frame in slices, looking at a flush and a lost camera in between.
// Acquisition starts with the first call, once the pool is known and lent to the stream.
static GstFlowReturn gst_sift_cam_src_create(GstPushSrc* push_src, GstBuffer** out) {
  GstSiftCamSrc* self = GST_SIFT_CAM_SRC(push_src);
  GstSiftCamSrcState* state = self->state;
  if (state == nullptr) return GST_FLOW_FLUSHING;
  const char* camera = state->mode.id.c_str();
  // The pool negotiated last: a renegotiation (downstream reconfigured) replaces it, and the
  // buffers lent from the old one finish their frames and go back to it.
  GstBufferPool* pool = gst_base_src_get_buffer_pool(GST_BASE_SRC(self));
  if (pool != state->pool) {
    if (state->pool != nullptr) gst_object_unref(state->pool);
    state->pool = pool;
  } else if (pool != nullptr) {
    gst_object_unref(pool);
  }
  if (!state->acquiring) {
    if (state->pool == nullptr) {
      GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, (nullptr),
                        ("no buffer pool before the first frame"));
      return GST_FLOW_NOT_NEGOTIATED;
    }
    if (!gst_sift_cam_src_top_up(*state)) goto unusable_pool;
    try {
      state->control->start_acquisition();
    } catch (...) {
      STARSIFT_POST_CURRENT_EXCEPTION(self, "starting acquisition");
      return GST_FLOW_ERROR;
    }
    state->acquiring = true;
  }
  for (;;) {
    if (self->unlocking) return GST_FLOW_FLUSHING;
    if (state->control->lost()) goto camera_lost;
    if (!gst_sift_cam_src_top_up(*state)) goto unusable_pool;
    GST_LOG_OBJECT(self, "waiting for a frame, %d buffers lent", state->stream->lent());
    const std::optional<CameraFrame> frame = state->stream->pop(kPopSliceUs);
    if (frame) return gst_sift_cam_src_finish_frame(self, *state, *frame, out);
    gst_sift_cam_src_update_counters(self, *state);
    gst_sift_cam_src_report_drops(self, *state);
  }

  /* ERRORS */
camera_lost : {
  guint64 frames = 0;
  {
    const starsift::gst::ObjectLock lock(self);
    frames = self->report.frames;
  }
  GST_ELEMENT_ERROR(self, RESOURCE, READ,
                    ("camera '%s' stopped answering: aravis lost control of it (unplugged, "
                     "powered off, or the network to it is down)",
                     camera),
                    ("%s; %" G_GUINT64_FORMAT " frames received before",
                     state->mode.description.c_str(), frames));
  return GST_FLOW_ERROR;
}
unusable_pool:
  GST_ELEMENT_ERROR(
      self, RESOURCE, SETTINGS,
      ("the negotiated buffer pool's buffers cannot take a frame of camera '%s'", camera),
      ("each must be one block of at least %zu bytes that can be written", state->mode.payload));
  return GST_FLOW_ERROR;
}

/* GObject vfuncs */

static void gst_sift_cam_src_set_property(GObject* object, guint prop_id, const GValue* value,
                                          GParamSpec* pspec) {
  GstSiftCamSrc* self = GST_SIFT_CAM_SRC(object);
  if (prop_id == PROP_PIXEL_FORMAT) {
    const gchar* name = g_value_get_string(value);
    if (name != nullptr && *name != '\0' &&
        starsift::camera::find_camera_pixel_format(name) == nullptr) {
      std::string why = starsift::shown_value(name);
      why.insert(0, 1, '\'');
      why += "' is not one of " + starsift::camera::camera_pixel_format_names() +
             " (or empty: the camera's own)";
      starsift::gst::warn_refused_value(object, GST_CAT_DEFAULT, pspec, why.c_str());
      return;
    }
  }
  if (prop_id == PROP_PACKET_SIZE) {
    const gint size = g_value_get_int(value);
    if (size != 0 && size < CameraSettings::kMinPacketSize) {
      const std::string why = std::to_string(size) + " is not 0 (negotiated) or " +
                              std::to_string(CameraSettings::kMinPacketSize) + ".." +
                              std::to_string(CameraSettings::kMaxPacketSize);
      starsift::gst::warn_refused_value(object, GST_CAT_DEFAULT, pspec, why.c_str());
      return;
    }
  }
  try {
    const starsift::gst::ObjectLock lock(self);
    CameraSettings& s = self->settings;
    switch (prop_id) {
      case PROP_CAMERA: {
        const gchar* id = g_value_get_string(value);
        s.camera = id != nullptr ? id : "";
        break;
      }
      case PROP_EXPOSURE_US: {
        const gdouble us = g_value_get_double(value);
        s.exposure_us = us < 0.0 ? std::nullopt : std::optional<double>(us);
        break;
      }
      case PROP_GAIN_DB: {
        const gdouble db = g_value_get_double(value);
        s.gain_db = db < 0.0 ? std::nullopt : std::optional<double>(db);
        break;
      }
      case PROP_FPS:
        s.fps_n = gst_value_get_fraction_numerator(value);
        s.fps_d = gst_value_get_fraction_denominator(value);
        break;
      case PROP_PIXEL_FORMAT: {
        const gchar* name = g_value_get_string(value);
        s.pixel_format = name != nullptr ? name : "";
        break;
      }
      case PROP_PACKET_SIZE:
        s.packet_size = g_value_get_int(value);
        break;
      case PROP_CAMERA_BUFFERS:
        s.buffers = g_value_get_int(value);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        break;
    }
  } catch (const std::bad_alloc&) {
    GST_ERROR_OBJECT(self, "out of memory setting %s", pspec->name);
  }
}

static void gst_sift_cam_src_get_property(GObject* object, guint prop_id, GValue* value,
                                          GParamSpec* pspec) {
  GstSiftCamSrc* self = GST_SIFT_CAM_SRC(object);
  const starsift::gst::ObjectLock lock(self);
  const CameraSettings& s = self->settings;
  switch (prop_id) {
    case PROP_CAMERA:
      g_value_set_string(value, s.camera.c_str());
      break;
    case PROP_EXPOSURE_US:
      g_value_set_double(value, s.exposure_us.value_or(-1.0));
      break;
    case PROP_GAIN_DB:
      g_value_set_double(value, s.gain_db.value_or(-1.0));
      break;
    case PROP_FPS:
      gst_value_set_fraction(value, s.fps_n, s.fps_d);
      break;
    case PROP_PIXEL_FORMAT:
      g_value_set_string(value, s.pixel_format.c_str());
      break;
    case PROP_PACKET_SIZE:
      g_value_set_int(value, s.packet_size);
      break;
    case PROP_CAMERA_BUFFERS:
      g_value_set_int(value, s.buffers);
      break;
    case PROP_STATS:
      g_value_take_boxed(value,
                         gst_sift_cam_src_report_structure(self->report, "siftcamsrc-stats"));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
}

static void gst_sift_cam_src_finalize(GObject* object) {
  GstSiftCamSrc* self = GST_SIFT_CAM_SRC(object);
  gst_sift_cam_src_release_state(std::exchange(self->state, nullptr));
  self->settings.~CameraSettings();
  self->report.~GstSiftCamSrcReport();
  self->unlocking.~atomic();
  G_OBJECT_CLASS(parent_class)->finalize(object);
}

static void gst_sift_cam_src_class_init(GstSiftCamSrcClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstBaseSrcClass* base_class = GST_BASE_SRC_CLASS(klass);
  GstPushSrcClass* push_class = GST_PUSH_SRC_CLASS(klass);

  GST_DEBUG_CATEGORY_INIT(gst_sift_cam_src_debug, "siftcamsrc", 0,
                          "starsift GigE Vision / USB3 Vision camera source");

  gobject_class->set_property = gst_sift_cam_src_set_property;
  gobject_class->get_property = gst_sift_cam_src_get_property;
  gobject_class->finalize = gst_sift_cam_src_finalize;

  // Read at start: a change while running applies at the next start.
  const auto flags = static_cast<GParamFlags>(G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY |
                                              G_PARAM_STATIC_STRINGS);
  properties[PROP_CAMERA] = g_param_spec_string(
      "camera", "Camera",
      "The camera's id as aravis lists it (arv-tool-0.8; \"Vendor-Serial\" for GigE Vision, or "
      "its IP address); empty: the first camera found",
      DEFAULT_PROP_CAMERA, flags);
  properties[PROP_EXPOSURE_US] = g_param_spec_double(
      "exposure-us", "Exposure",
      "Exposure time in microseconds, within the camera's own bounds (auto exposure is turned "
      "off); -1: the camera's own setting",
      -1.0, CameraSettings::kMaxExposureUs, DEFAULT_PROP_EXPOSURE_US, flags);
  properties[PROP_GAIN_DB] = g_param_spec_double(
      "gain-db", "Gain",
      "Gain in dB, within the camera's own bounds (auto gain is turned off); -1: the camera's "
      "own setting",
      -1.0, CameraSettings::kMaxGainDb, DEFAULT_PROP_GAIN_DB, flags);
  properties[PROP_FPS] = gst_param_spec_fraction(
      "fps", "Frame rate",
      "Frames per second the camera runs at (AcquisitionFrameRate), within its own bounds, and "
      "the caps' framerate; 0/1: the camera's own setting",
      0, 1, CameraSettings::kMaxFps, 1, DEFAULT_PROP_FPS_N, DEFAULT_PROP_FPS_D, flags);
  properties[PROP_PIXEL_FORMAT] = g_param_spec_string(
      "pixel-format", "Pixel format",
      "The camera's pixel format: Mono8 (GRAY8), Mono10, Mono12 or Mono16 (GRAY16_LE, the real "
      "bits in the caps' bit-depth field); empty: the camera's own, which must be one of these",
      DEFAULT_PROP_PIXEL_FORMAT, flags);
  properties[PROP_PACKET_SIZE] = g_param_spec_int(
      "packet-size", "Packet size",
      "GigE Vision stream packet size in bytes, 576..9000 within the camera's bounds (above "
      "1500 the network needs jumbo frames); 0: the largest the path carries, found by trying",
      0, CameraSettings::kMaxPacketSize, DEFAULT_PROP_PACKET_SIZE, flags);
  properties[PROP_CAMERA_BUFFERS] = g_param_spec_int(
      "camera-buffers", "Camera buffers",
      "Frames lent to the camera's stream at a time, from the negotiated pool; a frame that "
      "comes while all are full is dropped (and counted)",
      CameraSettings::kMinBuffers, CameraSettings::kMaxBuffers, DEFAULT_PROP_CAMERA_BUFFERS, flags);
  properties[PROP_STATS] = g_param_spec_boxed(
      "stats", "Statistics",
      "siftcamsrc-stats: camera, model, pixel-format (strings), width, height, packet-size "
      "(ints), fps, exposure-us, gain-db (doubles: read back from the camera at start; -1 when "
      "it has no such feature), frames (guint64: pushed), dropped (guint64: frames the camera "
      "numbered that never arrived whole), incomplete, underruns, failures, timeouts, "
      "missing-packets, resent-packets, restarts (guint64: the stream's own counts), lent (int: "
      "buffers lent to the camera now), downstream-pool (boolean: frames are written into the "
      "pool downstream proposed). Reset at start, kept after stop",
      GST_TYPE_STRUCTURE, static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_properties(gobject_class, N_PROPERTIES, properties);

  gst_element_class_set_static_metadata(
      element_class, "GigE Vision / USB3 Vision camera", "Source/Video/Hardware",
      "Frames of a GigE Vision or USB3 Vision camera through aravis, written straight into "
      "the pool downstream proposes (page-locked frame memory for the starsift filters)",
      "starsift");
  gst_element_class_add_static_pad_template(element_class, &src_template);

  base_class->start = GST_DEBUG_FUNCPTR(gst_sift_cam_src_start);
  base_class->stop = GST_DEBUG_FUNCPTR(gst_sift_cam_src_stop);
  base_class->get_caps = GST_DEBUG_FUNCPTR(gst_sift_cam_src_get_caps);
  base_class->decide_allocation = GST_DEBUG_FUNCPTR(gst_sift_cam_src_decide_allocation);
  base_class->query = GST_DEBUG_FUNCPTR(gst_sift_cam_src_query);
  base_class->unlock = GST_DEBUG_FUNCPTR(gst_sift_cam_src_unlock);
  base_class->unlock_stop = GST_DEBUG_FUNCPTR(gst_sift_cam_src_unlock_stop);
  push_class->create = GST_DEBUG_FUNCPTR(gst_sift_cam_src_create);
}

static void gst_sift_cam_src_init(GstSiftCamSrc* self) {
  new (&self->settings) CameraSettings();
  new (&self->report) GstSiftCamSrcReport();
  new (&self->unlocking) std::atomic<bool>(false);
  self->state = nullptr;
  gst_base_src_set_format(GST_BASE_SRC(self), GST_FORMAT_TIME);
  gst_base_src_set_live(GST_BASE_SRC(self), TRUE);
}
