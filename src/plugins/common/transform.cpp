#include "plugins/common/transform.hpp"

#include <gst/video/video.h>

#include <atomic>
#include <new>
#include <string>

#include "pipeline/engine/streaming_chain.hpp"

#include "plugins/common/enums.hpp"
#include "plugins/common/frame_allocator.hpp"
#include "plugins/common/video.hpp"

GST_DEBUG_CATEGORY_STATIC(gst_sift_transform_debug);
#define GST_CAT_DEFAULT gst_sift_transform_debug

#define DEFAULT_PROP_BACKEND starsift::gst::kDefaultBackend
#define DEFAULT_PROP_DEVICE_ID starsift::gst::kDefaultDeviceId
#define DEFAULT_PROP_DEPTH 1

enum { PROP_0, PROP_BACKEND, PROP_DEVICE_ID, PROP_ACTIVE_BACKEND, PROP_DEPTH, N_PROPERTIES };

static GParamSpec* properties[N_PROPERTIES];

static GstStaticPadTemplate gst_sift_transform_src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(STARSIFT_VIDEO_CAPS));

static GstStaticPadTemplate gst_sift_transform_sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(STARSIFT_VIDEO_CAPS));

struct GstSiftTransformPrivate {
  /* properties (object lock) */
  starsift::Backend backend;
  int device_id;
  gchar* active_backend;  // "cpu", "cuda:0", or NULL when stopped
  int depth;              // `depth`, read at start
  int started_depth;      // the depth it started with
  std::atomic<guint64> qos_dropped;

  /* streaming */
  starsift::Backend applied_backend;  // the properties `choice` was resolved from
  int applied_device_id;
  starsift::BackendChoice choice;
  GstVideoInfo info;           // negotiated caps (same in and out), or gst_video_info_init()'s
  starsift::FrameShape shape;  // from info
  // depth >= 2 (and an element with build_stages): the frames in flight through the engine.
  std::unique_ptr<starsift::gst::ElementStream> stream;
  std::optional<starsift::gst::StreamSnapshot> last_snapshot;  // the stream's, at stop
  guint64 built_generation;    // stages_generation() when the engine's stages were built
  GstFlowReturn rebuild_flow;  // the drain before the last rebuild
};

#define gst_sift_transform_parent_class parent_class
G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE(GstSiftTransform, gst_sift_transform, GST_TYPE_BASE_TRANSFORM);

/* helpers */

static GstSiftTransformPrivate* gst_sift_transform_priv(GstSiftTransform* self) {
  return static_cast<GstSiftTransformPrivate*>(gst_sift_transform_get_instance_private(self));
}

static bool gst_sift_transform_negotiated(const GstSiftTransformPrivate& priv) {
  return priv.info.finfo != nullptr &&
         GST_VIDEO_INFO_FORMAT(&priv.info) != GST_VIDEO_FORMAT_UNKNOWN;
}

// Sets active-backend ("cpu", "cuda:0", or NULL) and notifies.
static void gst_sift_transform_publish_backend(GstSiftTransform* self, const char* name) {
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  GST_OBJECT_LOCK(self);
  g_free(priv->active_backend);
  priv->active_backend = g_strdup(name);
  GST_OBJECT_UNLOCK(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_ACTIVE_BACKEND]);
}

// Builds the element's stages for the current backend into a new engine, which replaces the
// running one once it is configured (the old one's frames are pushed downstream first; the
// flow of that is kept in rebuild_flow). Throws starsift::Error.
static void gst_sift_transform_rebuild_stream(GstSiftTransform* self) {
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  GstSiftTransformClass* klass = GST_SIFT_TRANSFORM_GET_CLASS(self);
  const guint64 generation = klass->stages_generation ? klass->stages_generation(self) : 0;
  auto engine = starsift::make_streaming_chain(klass->build_stages(self, priv->choice),
                                               priv->choice, priv->stream->depth());
  const starsift::FrameShape* shape = gst_sift_transform_negotiated(*priv) ? &priv->shape : nullptr;
  priv->rebuild_flow = priv->stream->replace_engine(std::move(engine), shape);
  priv->built_generation = generation;
  GST_INFO_OBJECT(self, "stages rebuilt on %s, depth %d", priv->choice.reason.c_str(),
                  priv->stream->depth());
}

// Resolves the backend the properties ask for and hands it to the element, when they changed
// since the last time (or `force`). Throws starsift::Error.
static void gst_sift_transform_update_backend(GstSiftTransform* self, bool force) {
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  GST_OBJECT_LOCK(self);
  const starsift::Backend backend = priv->backend;
  const int device_id = priv->device_id;
  GST_OBJECT_UNLOCK(self);
  if (!force && backend == priv->applied_backend && device_id == priv->applied_device_id) return;

  const starsift::BackendChoice choice = starsift::resolve_backend(backend, device_id);
  const std::string name = starsift::gst::active_backend_name(choice);
  GST_INFO_OBJECT(self, "backend=%s runs on %s: %s",
                  std::string(starsift::to_string(backend)).c_str(), name.c_str(),
                  choice.reason.c_str());
  gst_sift_transform_publish_backend(self, name.c_str());
  priv->choice = choice;
  GST_SIFT_TRANSFORM_GET_CLASS(self)->set_backend(self, choice);
  if (priv->stream) gst_sift_transform_rebuild_stream(self);
  priv->applied_backend = backend;
  priv->applied_device_id = device_id;
}

// Before a frame at depth >= 2: stages with new parameters replace the running ones (the
// frames in flight are pushed first). Throws starsift::Error.
static void gst_sift_transform_update_stages(GstSiftTransform* self) {
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  GstSiftTransformClass* klass = GST_SIFT_TRANSFORM_GET_CLASS(self);
  if (klass->stages_generation == nullptr) return;
  const guint64 generation = klass->stages_generation(self);
  if (generation == priv->built_generation) return;
  if (klass->update_stages != nullptr) {
    priv->rebuild_flow = priv->stream->drain();
    if (priv->rebuild_flow != GST_FLOW_OK) return;
    if (klass->update_stages(self)) {
      priv->built_generation = generation;
      GST_DEBUG_OBJECT(self, "stages updated in place");
      return;
    }
  }
  gst_sift_transform_rebuild_stream(self);
}

/* GstBaseTransform vfuncs */

static gboolean gst_sift_transform_start(GstBaseTransform* trans) {
  GstSiftTransform* self = GST_SIFT_TRANSFORM(trans);
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  gst_video_info_init(&priv->info);
  GST_OBJECT_LOCK(self);
  priv->started_depth = priv->depth;
  GST_OBJECT_UNLOCK(self);
  priv->qos_dropped = 0;
  std::unique_ptr<starsift::gst::ElementStream> stream;
  if (priv->started_depth > 1 && GST_SIFT_TRANSFORM_GET_CLASS(self)->build_stages != nullptr) {
    stream = std::make_unique<starsift::gst::ElementStream>(
        trans, priv->started_depth, GST_BASE_TRANSFORM_CLASS(parent_class)->prepare_output_buffer);
  }
  {
    const starsift::gst::ObjectLock lock(self);
    priv->stream = std::move(stream);
    priv->last_snapshot.reset();
  }
  try {
    gst_sift_transform_update_backend(self, true);
  } catch (...) {
    STARSIFT_POST_CURRENT_EXCEPTION(self, "starting");
    return FALSE;
  }
  return TRUE;
}

static gboolean gst_sift_transform_stop(GstBaseTransform* trans) {
  GstSiftTransform* self = GST_SIFT_TRANSFORM(trans);
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  std::unique_ptr<starsift::gst::ElementStream> stream;
  if (priv->stream) {
    priv->stream->discard();  // frames in flight at stop: dropped, counted
    const starsift::gst::ObjectLock lock(self);
    priv->last_snapshot = priv->stream->snapshot();  // kept for the stats after stop
    stream = std::move(priv->stream);
  }
  stream.reset();  // the engine and its memory go, outside the lock
  GST_SIFT_TRANSFORM_GET_CLASS(self)->reset(self);
  gst_video_info_init(&priv->info);
  gst_sift_transform_publish_backend(self, nullptr);
  return TRUE;
}

static gboolean gst_sift_transform_set_caps(GstBaseTransform* trans, GstCaps* incaps,
                                            GstCaps* outcaps) {
  GstSiftTransform* self = GST_SIFT_TRANSFORM(trans);
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
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

  try {
    priv->shape = starsift::gst::frame_shape_from_info(in_info);
    priv->info = in_info;
    if (priv->stream) {
      // The frames of the previous caps were pushed when the caps event came (sink_event).
      priv->stream->configure(priv->shape);
    } else {
      GST_SIFT_TRANSFORM_GET_CLASS(self)->configure(self, priv->shape);
    }
  } catch (...) {
    gst_video_info_init(&priv->info);  // not negotiated: no frame reaches the element
    STARSIFT_POST_CURRENT_EXCEPTION(self, "setting caps");
    return FALSE;
  }
  GST_DEBUG_OBJECT(self, "configured for %" GST_PTR_FORMAT, incaps);
  return TRUE;
}

// Puts a pool of starsift frame memory for `caps` (at least `min_buffers`, growing as needed)
// first in an ALLOCATION query. Returns false when the pool refused its configuration.
static bool gst_sift_transform_offer_frame_pool(GstQuery* query, GstCaps* caps,
                                                const GstVideoInfo& info, guint min_buffers) {
  GstAllocator* allocator = starsift::gst::frame_allocator();
  GstAllocationParams params;
  gst_allocation_params_init(&params);
  GstBufferPool* pool = gst_video_buffer_pool_new();
  GstStructure* config = gst_buffer_pool_get_config(pool);
  const auto size = static_cast<guint>(info.size);
  gst_buffer_pool_config_set_params(config, caps, size, min_buffers, 0);
  gst_buffer_pool_config_set_allocator(config, allocator, &params);
  gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  const bool configured = gst_buffer_pool_set_config(pool, config);
  if (configured) {
    if (gst_query_get_n_allocation_pools(query) > 0) {
      gst_query_set_nth_allocation_pool(query, 0, pool, size, min_buffers, 0);
    } else {
      gst_query_add_allocation_pool(query, pool, size, min_buffers, 0);
    }
  }
  gst_object_unref(pool);
  gst_object_unref(allocator);
  return configured;
}

// Proposes a pool of starsift frame memory (page-locked where a GPU is usable), so a source
// that takes it hands the engine frames it can DMA in place, and accepts any stride.
static gboolean gst_sift_transform_propose_allocation(GstBaseTransform* trans,
                                                      GstQuery* decide_query, GstQuery* query) {
  if (!GST_BASE_TRANSFORM_CLASS(parent_class)->propose_allocation(trans, decide_query, query)) {
    return FALSE;
  }
  // decide_query is NULL in passthrough, where upstream talks to downstream directly.
  if (decide_query == nullptr) return TRUE;
  // Any stride is fine: frames are mapped with their GstVideoMeta.
  gst_query_add_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr);

  GstCaps* caps = nullptr;
  gboolean need_pool = FALSE;
  gst_query_parse_allocation(query, &caps, &need_pool);
  GstVideoInfo info;
  if (caps == nullptr || !gst_video_info_from_caps(&info, caps)) return TRUE;
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(GST_SIFT_TRANSFORM(trans));
  GST_OBJECT_LOCK(trans);
  const int depth = priv->stream ? priv->started_depth : priv->depth;
  GST_OBJECT_UNLOCK(trans);
  const guint min_buffers = static_cast<guint>(depth) + 2;  // the ring plus two being filled
  GstAllocator* allocator = starsift::gst::frame_allocator();
  GstAllocationParams params;
  gst_allocation_params_init(&params);
  if (gst_query_get_n_allocation_params(query) > 0) {
    gst_query_set_nth_allocation_param(query, 0, allocator, &params);
  } else {
    gst_query_add_allocation_param(query, allocator, &params);
  }
  if (need_pool) gst_sift_transform_offer_frame_pool(query, caps, info, min_buffers);
  gst_object_unref(allocator);
  return TRUE;
}

// The output buffers come from a pool of starsift frame memory (page-locked where a GPU is
// usable) whatever downstream offers: the streaming engine then writes results straight into
// them by DMA. Downstream's minimum number of buffers is kept; the pool grows when frames in
// flight and downstream's queue need more (allocation only while it grows).
static gboolean gst_sift_transform_decide_allocation(GstBaseTransform* trans, GstQuery* query) {
  if (!GST_BASE_TRANSFORM_CLASS(parent_class)->decide_allocation(trans, query)) return FALSE;
  GstCaps* caps = nullptr;
  gst_query_parse_allocation(query, &caps, nullptr);
  GstVideoInfo info;
  if (caps == nullptr || !gst_video_info_from_caps(&info, caps)) return TRUE;

  guint min_buffers = 2;
  if (gst_query_get_n_allocation_pools(query) > 0) {
    guint size = 0;
    guint min = 0;
    guint max = 0;
    gst_query_parse_nth_allocation_pool(query, 0, nullptr, &size, &min, &max);
    min_buffers = MAX(min_buffers, min);
  }
  if (gst_sift_transform_offer_frame_pool(query, caps, info, min_buffers)) {
    GST_DEBUG_OBJECT(trans, "output pool of frame memory, %u buffers at least", min_buffers);
  } else {
    GST_WARNING_OBJECT(trans, "could not configure the frame-memory pool; keeping downstream's");
  }
  return TRUE;
}

static void gst_sift_transform_before_transform(GstBaseTransform* trans, GstBuffer* buffer) {
  const GstClockTime timestamp = GST_BUFFER_TIMESTAMP(buffer);
  const GstClockTime stream_time =
      gst_segment_to_stream_time(&trans->segment, GST_FORMAT_TIME, timestamp);
  GST_LOG_OBJECT(trans, "sync to %" GST_TIME_FORMAT, GST_TIME_ARGS(timestamp));
  if (GST_CLOCK_TIME_IS_VALID(stream_time)) {
    gst_object_sync_values(GST_OBJECT(trans), stream_time);
  }
}

static GstFlowReturn gst_sift_transform_transform(GstBaseTransform* trans, GstBuffer* inbuf,
                                                  GstBuffer* outbuf) {
  GstSiftTransform* self = GST_SIFT_TRANSFORM(trans);
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  if (!gst_sift_transform_negotiated(*priv)) {
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, (nullptr), ("no caps negotiated before a buffer"));
    return GST_FLOW_NOT_NEGOTIATED;
  }

  try {
    gst_sift_transform_update_backend(self, false);

    starsift::gst::MappedFrame in(priv->info, inbuf, GST_MAP_READ);
    starsift::gst::MappedFrame out(priv->info, outbuf, GST_MAP_WRITE);
    if (!in.ok() || !out.ok()) {
      GST_ELEMENT_ERROR(
          self, STREAM, FAILED,
          ("could not map the %s buffer as a video frame", in.ok() ? "output" : "input"),
          (nullptr));
      return GST_FLOW_ERROR;
    }
    GST_SIFT_TRANSFORM_GET_CLASS(self)->filter(self, in.const_view(priv->shape.format),
                                               out.view(priv->shape.format));
  } catch (...) {
    STARSIFT_POST_CURRENT_EXCEPTION(self, "filtering a frame");
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

/* GstBaseTransform vfuncs for the streaming engine (depth >= 2) */

// QoS drops are counted at every depth. At depth >= 2 the frame goes into the engine (after
// backend and parameter changes, which push the frames in flight first); at depth 1 it stays
// in queued_buf for transform().
static GstFlowReturn gst_sift_transform_submit_input_buffer(GstBaseTransform* trans,
                                                            gboolean is_discont, GstBuffer* inbuf) {
  GstSiftTransform* self = GST_SIFT_TRANSFORM(trans);
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  // Renegotiation, QoS and the negotiated check; the buffer is left in queued_buf, unless QoS
  // dropped it as too late.
  const GstFlowReturn ret =
      GST_BASE_TRANSFORM_CLASS(parent_class)->submit_input_buffer(trans, is_discont, inbuf);
  if (ret != GST_FLOW_OK) return ret;
  if (trans->queued_buf == nullptr) {
    ++priv->qos_dropped;
    return GST_FLOW_OK;
  }
  if (!priv->stream) return GST_FLOW_OK;
  GstBuffer* buffer = trans->queued_buf;
  trans->queued_buf = nullptr;
  if (!gst_sift_transform_negotiated(*priv)) {
    gst_buffer_unref(buffer);
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, (nullptr), ("no caps negotiated before a buffer"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  try {
    gst_sift_transform_before_transform(trans, buffer);
    priv->rebuild_flow = GST_FLOW_OK;
    gst_sift_transform_update_backend(self, false);
    gst_sift_transform_update_stages(self);
  } catch (...) {
    gst_buffer_unref(buffer);
    STARSIFT_POST_CURRENT_EXCEPTION(self, "filtering a frame");
    return GST_FLOW_ERROR;
  }
  if (priv->rebuild_flow != GST_FLOW_OK) {
    gst_buffer_unref(buffer);
    return priv->rebuild_flow;
  }
  return priv->stream->submit(buffer, priv->info, priv->shape.format);
}

// depth >= 2: the oldest frame once `depth` are in flight, else nothing yet.
static GstFlowReturn gst_sift_transform_generate_output(GstBaseTransform* trans,
                                                        GstBuffer** outbuf) {
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(GST_SIFT_TRANSFORM(trans));
  if (!priv->stream) return GST_BASE_TRANSFORM_CLASS(parent_class)->generate_output(trans, outbuf);
  return priv->stream->generate(outbuf);
}

// depth >= 2: a serialized event (EOS, CAPS, SEGMENT, GAP, tags, ...) first pushes the frames
// in flight downstream, so that it stays behind them; FLUSH_STOP drops them (counted) and
// stages with history start a new one.
static gboolean gst_sift_transform_sink_event(GstBaseTransform* trans, GstEvent* event) {
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(GST_SIFT_TRANSFORM(trans));
  if (priv->stream) {
    if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP) {
      priv->stream->discard();
    } else if (GST_EVENT_IS_SERIALIZED(event) && priv->stream->in_flight() > 0) {
      const GstFlowReturn ret = priv->stream->drain();
      GST_DEBUG_OBJECT(trans, "drained before %s: %s", GST_EVENT_TYPE_NAME(event),
                       gst_flow_get_name(ret));
    }
  }
  return GST_BASE_TRANSFORM_CLASS(parent_class)->sink_event(trans, event);
}

// LATENCY on the src pad: upstream's, plus (depth - 1) frame durations at the negotiated
// frame rate (nothing when the rate is 0 or unknown).
static gboolean gst_sift_transform_query(GstBaseTransform* trans, GstPadDirection direction,
                                         GstQuery* query) {
  if (!GST_BASE_TRANSFORM_CLASS(parent_class)->query(trans, direction, query)) return FALSE;
  if (direction != GST_PAD_SRC || GST_QUERY_TYPE(query) != GST_QUERY_LATENCY) return TRUE;

  GstSiftTransform* self = GST_SIFT_TRANSFORM(trans);
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  if (GST_SIFT_TRANSFORM_GET_CLASS(self)->build_stages == nullptr) return TRUE;
  GST_OBJECT_LOCK(self);
  const int depth = priv->stream ? priv->started_depth : priv->depth;
  GST_OBJECT_UNLOCK(self);
  if (depth <= 1) return TRUE;
  GstCaps* caps = gst_pad_get_current_caps(GST_BASE_TRANSFORM_SRC_PAD(trans));
  if (caps == nullptr) return TRUE;
  GstVideoInfo info;
  const bool have_info = gst_video_info_from_caps(&info, caps);
  gst_caps_unref(caps);
  if (!have_info || GST_VIDEO_INFO_FPS_N(&info) <= 0 || GST_VIDEO_INFO_FPS_D(&info) <= 0) {
    return TRUE;
  }
  const GstClockTime extra =
      gst_util_uint64_scale_int(static_cast<guint64>(depth - 1) * GST_SECOND,
                                GST_VIDEO_INFO_FPS_D(&info), GST_VIDEO_INFO_FPS_N(&info));
  gboolean live = FALSE;
  GstClockTime min = 0;
  GstClockTime max = GST_CLOCK_TIME_NONE;
  gst_query_parse_latency(query, &live, &min, &max);
  min += extra;
  if (GST_CLOCK_TIME_IS_VALID(max)) max += extra;
  GST_DEBUG_OBJECT(self, "latency %" GST_TIME_FORMAT " more for depth %d", GST_TIME_ARGS(extra),
                   depth);
  gst_query_set_latency(query, live, min, max);
  return TRUE;
}

/* GObject vfuncs */

static void gst_sift_transform_set_property(GObject* object, guint prop_id, const GValue* value,
                                            GParamSpec* pspec) {
  GstSiftTransform* self = GST_SIFT_TRANSFORM(object);
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);

  // GObject enforces the ranges of the param specs; a change reaches the element at the next
  // frame (gst_sift_transform_update_backend).
  GST_OBJECT_LOCK(self);
  switch (prop_id) {
    case PROP_BACKEND:
      priv->backend = static_cast<starsift::Backend>(g_value_get_enum(value));
      break;
    case PROP_DEVICE_ID:
      priv->device_id = g_value_get_int(value);
      break;
    case PROP_DEPTH:
      priv->depth = g_value_get_int(value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_sift_transform_get_property(GObject* object, guint prop_id, GValue* value,
                                            GParamSpec* pspec) {
  GstSiftTransform* self = GST_SIFT_TRANSFORM(object);
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);

  GST_OBJECT_LOCK(self);
  switch (prop_id) {
    case PROP_BACKEND:
      g_value_set_enum(value, static_cast<gint>(priv->backend));
      break;
    case PROP_DEVICE_ID:
      g_value_set_int(value, priv->device_id);
      break;
    case PROP_ACTIVE_BACKEND:
      g_value_set_string(value, priv->active_backend);
      break;
    case PROP_DEPTH:
      g_value_set_int(value, priv->depth);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK(self);
}

static void gst_sift_transform_finalize(GObject* object) {
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(GST_SIFT_TRANSFORM(object));
  g_free(priv->active_backend);
  priv->~GstSiftTransformPrivate();
  G_OBJECT_CLASS(parent_class)->finalize(object);
}

static void gst_sift_transform_class_init(GstSiftTransformClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass* trans_class = GST_BASE_TRANSFORM_CLASS(klass);

  GST_DEBUG_CATEGORY_INIT(gst_sift_transform_debug, "sifttransform", 0,
                          "starsift element base: backend, caps, frames");

  gobject_class->set_property = gst_sift_transform_set_property;
  gobject_class->get_property = gst_sift_transform_get_property;
  gobject_class->finalize = gst_sift_transform_finalize;

  properties[PROP_BACKEND] = starsift::gst::backend_param_spec();
  properties[PROP_DEVICE_ID] = starsift::gst::device_id_param_spec();
  properties[PROP_ACTIVE_BACKEND] = starsift::gst::active_backend_param_spec();
  properties[PROP_DEPTH] = g_param_spec_int(
      "depth", "Depth",
      "Frames in flight at once: 1 filters each frame before the next comes in; with D >= 2 "
      "frames overlap (on CUDA the upload of one, the kernels of the one before and the "
      "download of the one before that) and the output lags D - 1 frames behind the input, "
      "reported in the latency. Output order is input order. Read at start",
      1, starsift::kMaxStreamingDepth, DEFAULT_PROP_DEPTH,
      static_cast<GParamFlags>(G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY |
                               G_PARAM_STATIC_STRINGS));
  g_object_class_install_properties(gobject_class, N_PROPERTIES, properties);

  // Inherited by every element.
  gst_element_class_add_static_pad_template(element_class, &gst_sift_transform_sink_template);
  gst_element_class_add_static_pad_template(element_class, &gst_sift_transform_src_template);

  trans_class->start = GST_DEBUG_FUNCPTR(gst_sift_transform_start);
  trans_class->stop = GST_DEBUG_FUNCPTR(gst_sift_transform_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR(gst_sift_transform_set_caps);
  trans_class->propose_allocation = GST_DEBUG_FUNCPTR(gst_sift_transform_propose_allocation);
  trans_class->decide_allocation = GST_DEBUG_FUNCPTR(gst_sift_transform_decide_allocation);
  trans_class->before_transform = GST_DEBUG_FUNCPTR(gst_sift_transform_before_transform);
  trans_class->transform = GST_DEBUG_FUNCPTR(gst_sift_transform_transform);
  trans_class->submit_input_buffer = GST_DEBUG_FUNCPTR(gst_sift_transform_submit_input_buffer);
  trans_class->generate_output = GST_DEBUG_FUNCPTR(gst_sift_transform_generate_output);
  trans_class->sink_event = GST_DEBUG_FUNCPTR(gst_sift_transform_sink_event);
  trans_class->query = GST_DEBUG_FUNCPTR(gst_sift_transform_query);
  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_ip_on_passthrough = FALSE;

  gst_type_mark_as_plugin_api(GST_TYPE_SIFT_TRANSFORM, static_cast<GstPluginAPIFlags>(0));
  starsift::gst::mark_enums_as_plugin_api();
}

static void gst_sift_transform_init(GstSiftTransform* self) {
  GstSiftTransformPrivate* priv = new (gst_sift_transform_priv(self)) GstSiftTransformPrivate();
  priv->backend = DEFAULT_PROP_BACKEND;
  priv->device_id = DEFAULT_PROP_DEVICE_ID;
  priv->active_backend = nullptr;
  priv->applied_backend = DEFAULT_PROP_BACKEND;
  priv->applied_device_id = DEFAULT_PROP_DEVICE_ID;
  priv->depth = DEFAULT_PROP_DEPTH;
  priv->started_depth = 1;
  priv->qos_dropped = 0;
  priv->built_generation = 0;
  priv->rebuild_flow = GST_FLOW_OK;
  gst_video_info_init(&priv->info);

  // The output is a new frame: never in place, never passthrough (no element has a neutral
  // setting that would leave every frame as it is).
  gst_base_transform_set_in_place(GST_BASE_TRANSFORM(self), FALSE);
  gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), FALSE);
  gst_base_transform_set_qos_enabled(GST_BASE_TRANSFORM(self), TRUE);
}

namespace starsift::gst {

const BackendChoice& backend_choice(GstSiftTransform* self) {
  return gst_sift_transform_priv(self)->choice;
}

const FrameShape* negotiated_shape(GstSiftTransform* self) {
  const GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  return gst_sift_transform_negotiated(*priv) ? &priv->shape : nullptr;
}

const GstVideoInfo* negotiated_info(GstSiftTransform* self) {
  const GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  return gst_sift_transform_negotiated(*priv) ? &priv->info : nullptr;
}

int streaming_depth(GstSiftTransform* self) {
  const GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  const ObjectLock lock(self);
  return priv->stream ? priv->started_depth : 1;
}

std::optional<StreamSnapshot> stream_snapshot(GstSiftTransform* self) {
  const GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  const ObjectLock lock(self);
  if (priv->stream) return priv->stream->snapshot();
  return priv->last_snapshot;
}

guint64 qos_dropped(GstSiftTransform* self) {
  return gst_sift_transform_priv(self)->qos_dropped.load();
}

void warn_refused_value(GObject* object, GstDebugCategory* category, GParamSpec* pspec,
                        const char* why) {
  GST_CAT_WARNING_OBJECT(category, object, "refusing the new %s: %s", pspec->name, why);
  g_warning("%s: refusing the new %s, keeping the previous value: %s", GST_OBJECT_NAME(object),
            pspec->name, why);
}

}  // namespace starsift::gst
