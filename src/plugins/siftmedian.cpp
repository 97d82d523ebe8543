/**
 * SECTION:element-siftmedian
 * @title: siftmedian
 *
 * Replaces every pixel by the median of the size x size window around it, per colour
 * channel (alpha and padding bytes pass through untouched). Pixels outside the frame are
 * read according to #GstSiftMedian:border. The filter runs on a CUDA GPU when one is usable,
 * otherwise on the CPU; #GstSiftMedian:backend chooses, and #GstSiftMedian:active-backend
 * says which one runs.
 *
 * Both backends give bit-identical results. Property changes take effect at the next frame.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc pattern=snow ! \
 *     video/x-raw,format=GRAY16_LE,width=512,height=512 ! \
 *     siftmedian size=5 border=reflect-101 ! videoconvert ! autovideosink
 * ]| Removes salt-and-pepper noise with a 5x5 median window.
 */

#include "plugins/siftmedian.hpp"

#include <gst/video/video.h>

#include <cmath>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>

#include "pipeline/error.hpp"
#include "pipeline/median/median_stage.hpp"
#include "plugins/common/enums.hpp"
#include "plugins/common/video.hpp"

GST_DEBUG_CATEGORY_STATIC(gst_sift_median_debug);
#define GST_CAT_DEFAULT gst_sift_median_debug

#define DEFAULT_PROP_SIZE starsift::MedianParams::kDefaultSize
#define DEFAULT_PROP_BORDER starsift::MedianParams::kDefaultBorder
#define DEFAULT_PROP_BORDER_VALUE starsift::MedianParams::kDefaultBorderValue
#define DEFAULT_PROP_BACKEND starsift::gst::kDefaultBackend
#define DEFAULT_PROP_DEVICE_ID starsift::gst::kDefaultDeviceId

// The largest border value any GStreamer format of the element can hold (GRAY16_LE).
#define MAX_PROP_BORDER_VALUE 65535.0

enum {
  PROP_0,
  PROP_SIZE,
  PROP_BORDER,
  PROP_BORDER_VALUE,
  PROP_BACKEND,
  PROP_DEVICE_ID,
  PROP_ACTIVE_BACKEND,
  N_PROPERTIES
};

static GParamSpec* properties[N_PROPERTIES];

static GstStaticPadTemplate gst_sift_median_src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(STARSIFT_VIDEO_CAPS));

static GstStaticPadTemplate gst_sift_median_sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(STARSIFT_VIDEO_CAPS));

// init() placement-constructs the settings in GObject's zeroed instance memory; nothing
// needs destroying in finalize().
static_assert(std::is_trivially_destructible_v<GstSiftMedianSettings>);

struct GstSiftMedianState {
  starsift::BackendChoice choice;                // resolved from applied.backend/device_id
  GstSiftMedianSettings applied;                 // what the stage currently runs with
  GstVideoInfo info{};                           // negotiated caps (same in and out)
  starsift::FrameShape shape;                    // from info
  std::unique_ptr<starsift::MedianStage> stage;  // built once caps are known
};

static void gst_sift_median_set_property(GObject* object, guint prop_id, const GValue* value,
                                         GParamSpec* pspec);
static void gst_sift_median_get_property(GObject* object, guint prop_id, GValue* value,
                                         GParamSpec* pspec);

#define gst_sift_median_parent_class parent_class
G_DEFINE_TYPE(GstSiftMedian, gst_sift_median, GST_TYPE_BASE_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE(siftmedian, "siftmedian", GST_RANK_NONE, GST_TYPE_SIFT_MEDIAN);

/* helpers */

static GstSiftMedianSettings gst_sift_median_copy_settings(GstSiftMedian* self) {
  GST_OBJECT_LOCK(self);
  const GstSiftMedianSettings settings = self->settings;
  GST_OBJECT_UNLOCK(self);
  return settings;
}

// Sets active-backend ("cpu", "cuda:0", or NULL) and notifies.
static void gst_sift_median_publish_backend(GstSiftMedian* self, const char* name) {
  GST_OBJECT_LOCK(self);
  g_free(self->active_backend);
  self->active_backend = g_strdup(name);
  GST_OBJECT_UNLOCK(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_ACTIVE_BACKEND]);
}

static void gst_sift_median_resolve_backend(GstSiftMedian* self, GstSiftMedianState& state,
                                            const GstSiftMedianSettings& settings) {
  state.choice = starsift::resolve_backend(settings.backend, settings.device_id);
  state.applied.backend = settings.backend;
  state.applied.device_id = settings.device_id;
  const std::string name = starsift::gst::active_backend_name(state.choice);
  GST_INFO_OBJECT(self, "backend=%s runs on %s: %s",
                  std::string(starsift::to_string(settings.backend)).c_str(), name.c_str(),
                  state.choice.reason.c_str());
  gst_sift_median_publish_backend(self, name.c_str());
}

// Brings the stage in line with `settings` for the negotiated shape: a new backend or device
// rebuilds it, new parameters go through set_params(), and `reconfigure` (new caps)
// re-runs configure(). Throws starsift::Error.
static void gst_sift_median_update_stage(GstSiftMedian* self, GstSiftMedianState& state,
                                         const GstSiftMedianSettings& settings, bool reconfigure) {
  if (settings.backend != state.applied.backend || settings.device_id != state.applied.device_id) {
    state.stage.reset();
    gst_sift_median_resolve_backend(self, state, settings);
  }
  if (!state.stage) {
    auto stage = starsift::make_median_stage(settings.params, state.choice);
    stage->configure(state.shape);
    state.stage = std::move(stage);
    GST_DEBUG_OBJECT(self, "built the %s stage for %dx%d %s",
                     std::string(starsift::to_string(state.choice.backend)).c_str(),
                     state.shape.width, state.shape.height,
                     std::string(starsift::to_string(state.shape.format)).c_str());
  } else if (reconfigure) {
    state.stage->set_params(settings.params);
    state.stage->configure(state.shape);
  } else if (settings.params != state.applied.params) {
    settings.params.validate_for(state.shape.format);
    state.stage->set_params(settings.params);
    GST_DEBUG_OBJECT(self, "parameters now size=%d border=%s border-value=%g", settings.params.size,
                     std::string(starsift::to_string(settings.params.border)).c_str(),
                     settings.params.border_value);
  }
  state.applied.params = settings.params;
}

/* GstBaseTransform vfuncs */

static gboolean gst_sift_median_start(GstBaseTransform* trans) {
  GstSiftMedian* self = GST_SIFT_MEDIAN(trans);
  const GstSiftMedianSettings settings = gst_sift_median_copy_settings(self);
  try {
    auto state = std::make_unique<GstSiftMedianState>();
    state->applied = settings;
    gst_sift_median_resolve_backend(self, *state, settings);
    delete self->state;
    self->state = state.release();
  } catch (...) {
    STARSIFT_POST_CURRENT_EXCEPTION(self, "starting");
    return FALSE;
  }
  return TRUE;
}

static gboolean gst_sift_median_stop(GstBaseTransform* trans) {
  GstSiftMedian* self = GST_SIFT_MEDIAN(trans);
  delete self->state;
  self->state = nullptr;
  gst_sift_median_publish_backend(self, nullptr);
  return TRUE;
}

static gboolean gst_sift_median_set_caps(GstBaseTransform* trans, GstCaps* incaps,
                                         GstCaps* outcaps) {
  GstSiftMedian* self = GST_SIFT_MEDIAN(trans);
  GstVideoInfo in_info;
  GstVideoInfo out_info;

  if (!gst_video_info_from_caps(&in_info, incaps) ||
      !gst_video_info_from_caps(&out_info, outcaps)) {
    GST_ERROR_OBJECT(self, "invalid caps: %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, incaps,
                     outcaps);
    return FALSE;
  }
  if (GST_VIDEO_INFO_FORMAT(&in_info) != GST_VIDEO_INFO_FORMAT(&out_info) ||
      GST_VIDEO_INFO_WIDTH(&in_info) != GST_VIDEO_INFO_WIDTH(&out_info) ||
      GST_VIDEO_INFO_HEIGHT(&in_info) != GST_VIDEO_INFO_HEIGHT(&out_info)) {
    GST_ERROR_OBJECT(self, "input and output caps differ: %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
                     incaps, outcaps);
    return FALSE;
  }
  if (self->state == nullptr) {
    GST_ERROR_OBJECT(self, "caps set before start");
    return FALSE;
  }

  GstSiftMedianState& state = *self->state;
  try {
    state.shape = starsift::gst::frame_shape_from_info(in_info);
    state.info = in_info;
    gst_sift_median_update_stage(self, state, gst_sift_median_copy_settings(self), true);
  } catch (...) {
    state.stage.reset();
    STARSIFT_POST_CURRENT_EXCEPTION(self, "setting caps");
    return FALSE;
  }
  GST_DEBUG_OBJECT(self, "configured for %" GST_PTR_FORMAT, incaps);
  return TRUE;
}

static gboolean gst_sift_median_propose_allocation(GstBaseTransform* trans, GstQuery* decide_query,
                                                   GstQuery* query) {
  if (!GST_BASE_TRANSFORM_CLASS(parent_class)->propose_allocation(trans, decide_query, query)) {
    return FALSE;
  }
  // decide_query is NULL in passthrough, where upstream talks to downstream directly.
  if (decide_query == nullptr) return TRUE;
  // Any stride is fine: frames are mapped with their GstVideoMeta.
  gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);
  return TRUE;
}

static void gst_sift_median_before_transform(GstBaseTransform* trans, GstBuffer* buffer) {
  const GstClockTime timestamp = GST_BUFFER_TIMESTAMP(buffer);
  const GstClockTime stream_time =
      gst_segment_to_stream_time(&trans->segment, GST_FORMAT_TIME, timestamp);
  GST_LOG_OBJECT(trans, "sync to %" GST_TIME_FORMAT, GST_TIME_ARGS(timestamp));
  if (GST_CLOCK_TIME_IS_VALID(stream_time)) {
    gst_object_sync_values(GST_OBJECT(trans), stream_time);
  }
}

static GstFlowReturn gst_sift_median_transform(GstBaseTransform* trans, GstBuffer* inbuf,
                                               GstBuffer* outbuf) {
  GstSiftMedian* self = GST_SIFT_MEDIAN(trans);
  if (self->state == nullptr ||
      GST_VIDEO_INFO_FORMAT(&self->state->info) == GST_VIDEO_FORMAT_UNKNOWN) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, (nullptr), ("no caps negotiated before a buffer"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  GstSiftMedianState& state = *self->state;

  try {
    gst_sift_median_update_stage(self, state, gst_sift_median_copy_settings(self), false);

    starsift::gst::MappedFrame in(state.info, inbuf, GST_MAP_READ);
    starsift::gst::MappedFrame out(state.info, outbuf, GST_MAP_WRITE);
    if (!in.ok() || !out.ok()) {
      GST_ELEMENT_ERROR(
          self, STREAM, FAILED,
          ("could not map the %s buffer as a video frame", in.ok() ? "output" : "input"),
          (nullptr));
      return GST_FLOW_ERROR;
    }
    state.stage->process(in.const_view(state.shape.format), out.view(state.shape.format));
  } catch (...) {
    STARSIFT_POST_CURRENT_EXCEPTION(self, "filtering a frame");
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

/* GObject vfuncs */

static void gst_sift_median_finalize(GObject* object) {
  GstSiftMedian* self = GST_SIFT_MEDIAN(object);
  delete self->state;
  self->state = nullptr;
  g_free(self->active_backend);
  self->active_backend = nullptr;
  G_OBJECT_CLASS(parent_class)->finalize(object);
}

static void gst_sift_median_class_init(GstSiftMedianClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass* trans_class = GST_BASE_TRANSFORM_CLASS(klass);

  GST_DEBUG_CATEGORY_INIT(gst_sift_median_debug, "siftmedian", 0, "starsift median filter");

  gobject_class->set_property = gst_sift_median_set_property;
  gobject_class->get_property = gst_sift_median_get_property;
  gobject_class->finalize = gst_sift_median_finalize;

  const auto controllable =
      static_cast<GParamFlags>(G_PARAM_READWRITE | GST_PARAM_CONTROLLABLE |
                               GST_PARAM_MUTABLE_PLAYING | G_PARAM_STATIC_STRINGS);
  properties[PROP_SIZE] = g_param_spec_int(
      "size", "Size",
      "Side of the square median window in pixels; odd values only (even values are refused)",
      starsift::MedianParams::kMinSize, starsift::MedianParams::kMaxSize, DEFAULT_PROP_SIZE,
      controllable);
  properties[PROP_BORDER] = starsift::gst::border_param_spec(
      DEFAULT_PROP_BORDER, "How pixels outside the frame are read");
  properties[PROP_BORDER_VALUE] = g_param_spec_double(
      "border-value", "Border value",
      "Value of the pixels outside the frame when border=constant, in the format's units: whole "
      "numbers 0..255 for 8-bit formats, 0..65535 for GRAY16_LE (checked against the "
      "negotiated format)",
      0.0, MAX_PROP_BORDER_VALUE, DEFAULT_PROP_BORDER_VALUE, controllable);
  properties[PROP_BACKEND] = starsift::gst::backend_param_spec();
  properties[PROP_DEVICE_ID] = starsift::gst::device_id_param_spec();
  properties[PROP_ACTIVE_BACKEND] = starsift::gst::active_backend_param_spec();
  g_object_class_install_properties(gobject_class, N_PROPERTIES, properties);

  gst_element_class_set_static_metadata(
      element_class, "Median filter", "Filter/Effect/Video",
      "Median of each pixel's size x size window per colour channel, on a CUDA GPU or the CPU",
      "starsift");
  gst_element_class_add_static_pad_template(element_class, &gst_sift_median_sink_template);
  gst_element_class_add_static_pad_template(element_class, &gst_sift_median_src_template);

  trans_class->start = GST_DEBUG_FUNCPTR(gst_sift_median_start);
  trans_class->stop = GST_DEBUG_FUNCPTR(gst_sift_median_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR(gst_sift_median_set_caps);
  trans_class->propose_allocation = GST_DEBUG_FUNCPTR(gst_sift_median_propose_allocation);
  trans_class->before_transform = GST_DEBUG_FUNCPTR(gst_sift_median_before_transform);
  trans_class->transform = GST_DEBUG_FUNCPTR(gst_sift_median_transform);
  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_ip_on_passthrough = FALSE;

  starsift::gst::mark_enums_as_plugin_api();
}

static void gst_sift_median_init(GstSiftMedian* self) {
  new (&self->settings) GstSiftMedianSettings();
  self->settings.params.size = DEFAULT_PROP_SIZE;
  self->settings.params.border = DEFAULT_PROP_BORDER;
  self->settings.params.border_value = DEFAULT_PROP_BORDER_VALUE;
  self->settings.backend = DEFAULT_PROP_BACKEND;
  self->settings.device_id = DEFAULT_PROP_DEVICE_ID;
  self->active_backend = nullptr;
  self->state = nullptr;

  // The output is a new frame: never in place, never passthrough (no size is neutral).
  gst_base_transform_set_in_place(GST_BASE_TRANSFORM(self), FALSE);
  gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), FALSE);
  gst_base_transform_set_qos_enabled(GST_BASE_TRANSFORM(self), TRUE);
}

static void gst_sift_median_set_property(GObject* object, guint prop_id, const GValue* value,
                                         GParamSpec* pspec) {
  GstSiftMedian* self = GST_SIFT_MEDIAN(object);

  // GObject enforces the ranges of the param specs; what they cannot say (odd sizes, whole
  // border values) is checked here, and a refused value leaves the property unchanged.
  try {
    switch (prop_id) {
      case PROP_SIZE: {
        starsift::MedianParams candidate;
        candidate.size = g_value_get_int(value);
        candidate.validate();
        GST_OBJECT_LOCK(self);
        self->settings.params.size = candidate.size;
        GST_OBJECT_UNLOCK(self);
        break;
      }
      case PROP_BORDER:
        GST_OBJECT_LOCK(self);
        self->settings.params.border = static_cast<starsift::BorderMode>(g_value_get_enum(value));
        GST_OBJECT_UNLOCK(self);
        break;
      case PROP_BORDER_VALUE: {
        const double border_value = g_value_get_double(value);
        if (border_value != std::floor(border_value)) {
          throw starsift::Error("border-value " + std::to_string(border_value) + " is not whole",
                                "whole numbers 0..255 for 8-bit formats, 0..65535 for GRAY16_LE");
        }
        GST_OBJECT_LOCK(self);
        self->settings.params.border_value = border_value;
        GST_OBJECT_UNLOCK(self);
        break;
      }
      case PROP_BACKEND:
        GST_OBJECT_LOCK(self);
        self->settings.backend = static_cast<starsift::Backend>(g_value_get_enum(value));
        GST_OBJECT_UNLOCK(self);
        break;
      case PROP_DEVICE_ID:
        GST_OBJECT_LOCK(self);
        self->settings.device_id = g_value_get_int(value);
        GST_OBJECT_UNLOCK(self);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        break;
    }
  } catch (const std::exception& e) {
    GST_WARNING_OBJECT(self, "refusing the new %s: %s", pspec->name, e.what());
    g_warning("%s: refusing the new %s, keeping the previous value: %s", GST_OBJECT_NAME(self),
              pspec->name, e.what());
  }
}

static void gst_sift_median_get_property(GObject* object, guint prop_id, GValue* value,
                                         GParamSpec* pspec) {
  GstSiftMedian* self = GST_SIFT_MEDIAN(object);

  GST_OBJECT_LOCK(self);
  switch (prop_id) {
    case PROP_SIZE:
      g_value_set_int(value, self->settings.params.size);
      break;
    case PROP_BORDER:
      g_value_set_enum(value, static_cast<gint>(self->settings.params.border));
      break;
    case PROP_BORDER_VALUE:
      g_value_set_double(value, self->settings.params.border_value);
      break;
    case PROP_BACKEND:
      g_value_set_enum(value, static_cast<gint>(self->settings.backend));
      break;
    case PROP_DEVICE_ID:
      g_value_set_int(value, self->settings.device_id);
      break;
    case PROP_ACTIVE_BACKEND:
      g_value_set_string(value, self->active_backend);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK(self);
}
