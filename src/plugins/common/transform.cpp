// SPDX-License-Identifier: LGPL-2.1-or-later
#include "plugins/common/transform.hpp"

#include <gst/video/video.h>

#include <algorithm>
#include <atomic>
#include <new>
#include <string>
#include <vector>

#include "pipeline/chain/chain_stages.hpp"
#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/error.hpp"
#include "plugins/common/enums.hpp"
#include "plugins/common/frame_allocator.hpp"
#include "plugins/common/video.hpp"

GST_DEBUG_CATEGORY_STATIC(gst_sift_transform_debug);
#define GST_CAT_DEFAULT gst_sift_transform_debug

#define DEFAULT_PROP_BACKEND starsift::gst::kDefaultBackend
#define DEFAULT_PROP_DEVICE_ID starsift::gst::kDefaultDeviceId
#define DEFAULT_PROP_DEPTH 1
#define DEFAULT_PROP_BIT_DEPTH 0

enum {
  PROP_0,
  PROP_BACKEND,
  PROP_DEVICE_ID,
  PROP_ACTIVE_BACKEND,
  PROP_DEPTH,
  PROP_BIT_DEPTH,
  N_PROPERTIES
};

static GParamSpec* properties[N_PROPERTIES];

static GstStaticPadTemplate gst_sift_transform_src_template = GST_STATIC_PAD_TEMPLATE(
    "src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(STARSIFT_VIDEO_CAPS));

static GstStaticPadTemplate gst_sift_transform_sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(STARSIFT_VIDEO_CAPS));

struct GstSiftTransformPrivate {
  /* properties and what other threads read (object lock) */
  starsift::Backend backend;
  int device_id;
  gchar* active_backend;     // "cpu", "cuda:0", or NULL when stopped
  int depth;                 // `depth`, read at start
  int bit_depth;             // `bit-depth`: 0 = from the caps (or the format's own)
  int started_depth;         // the depth it started with
  guint64 chain_generation;  // bumped by chain_changed()
  std::shared_ptr<const starsift::ChainConfig> caps_chain;     // what transform_caps() maps by
  std::optional<starsift::FrameShape> negotiated;              // the input shape, once caps are set
  std::optional<starsift::gst::StreamSnapshot> last_snapshot;  // the stream's, at stop
  std::atomic<guint64> qos_dropped;

  /* streaming */
  starsift::Backend applied_backend;  // the properties `choice` was resolved from
  int applied_device_id;
  starsift::BackendChoice choice;
  std::shared_ptr<const starsift::ChainConfig> chain;  // what the engine runs
  guint64 applied_generation;  // chain_generation when `chain` was described
  starsift::FrameShape shape;  // negotiated input (valid when negotiated is set)
  std::unique_ptr<starsift::gst::ElementStream> stream;  // from start to stop
  GstFlowReturn rebuild_flow;                            // the drain before the last new engine
};

#define gst_sift_transform_parent_class parent_class
G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE(GstSiftTransform, gst_sift_transform, GST_TYPE_BASE_TRANSFORM);

/* helpers */

static GstSiftTransformPrivate* gst_sift_transform_priv(GstSiftTransform* self) {
  return static_cast<GstSiftTransformPrivate*>(gst_sift_transform_get_instance_private(self));
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

// The formats a GStreamer video buffer of these elements can carry.
static const std::vector<starsift::PixelFormat>& gst_sift_transform_formats() {
  static const std::vector<starsift::PixelFormat> formats = [] {
    std::vector<starsift::PixelFormat> all;
    for (const GstVideoFormat f :
         {GST_VIDEO_FORMAT_GRAY8, GST_VIDEO_FORMAT_GRAY16_LE, GST_VIDEO_FORMAT_RGBA,
          GST_VIDEO_FORMAT_BGRA, GST_VIDEO_FORMAT_RGBx, GST_VIDEO_FORMAT_BGRx}) {
      all.push_back(*starsift::gst::pixel_format_from_gst(f));
    }
    return all;
  }();
  return formats;
}

// What the chain writes for frames of `format`, when it reads them and GStreamer can carry
// the result.
static std::optional<starsift::PixelFormat> gst_sift_transform_output_format(
    const starsift::ChainConfig& chain, starsift::PixelFormat format) {
  const std::optional<starsift::PixelFormat> out = starsift::chain_output_format(chain, format);
  if (!out || !starsift::gst::gst_format_of(*out)) return std::nullopt;
  return out;
}

// Refuses a chain whose output no GStreamer buffer can carry, whatever the input: the
// element could never run it. Names the stage that writes the format. Throws starsift::Error.
static void gst_sift_transform_check_output(const starsift::ChainConfig& chain) {
  std::optional<starsift::PixelFormat> accepted;
  for (const starsift::PixelFormat f : gst_sift_transform_formats()) {
    if (gst_sift_transform_output_format(chain, f)) return;
    if (!accepted && starsift::chain_output_format(chain, f)) accepted = f;
  }
  if (!accepted) {
    throw starsift::Error("the chain reads none of the formats the element takes",
                          STARSIFT_VIDEO_FORMATS);
  }
  const auto shapes =
      starsift::chain_shapes(chain, {64, 64, *accepted, starsift::default_bit_depth(*accepted)});
  std::size_t last = shapes.size() - 1;  // the stage that set the final format
  while (last > 1 && shapes[last - 1].format == shapes.back().format) --last;
  const starsift::StageConfig& stage = chain.stages[last - 1];
  throw starsift::Error(
      "stage " + std::to_string(last) + " (" + stage.filter + ") writes " +
          std::string(starsift::to_string(shapes.back().format)) +
          " frames, which a GStreamer video buffer cannot carry",
      "a chain whose last stage writes GRAY8, GRAY16_LE, RGBA, BGRA, RGBx or BGRx (inside a "
      "chain, float frames between stages are fine; whiten: output: residual writes the "
      "input's format)");
}

// A new engine for `chain` on the current backend replaces the running one (whose frames
// are pushed downstream first; that flow is kept in rebuild_flow). Throws starsift::Error,
// leaving the running engine.
static void gst_sift_transform_build_engine(GstSiftTransform* self,
                                            std::shared_ptr<const starsift::ChainConfig> chain) {
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  gst_sift_transform_check_output(*chain);
  if (priv->negotiated) starsift::chain_shapes(*chain, priv->shape);
  auto engine = starsift::make_streaming_chain(starsift::build_chain_stages(*chain, priv->choice),
                                               priv->choice, priv->stream->depth());
  priv->rebuild_flow = priv->stream->replace_engine(std::move(engine));
  priv->chain = chain;
  {
    const starsift::gst::ObjectLock lock(self);
    priv->caps_chain = std::move(chain);
  }
  GST_INFO_OBJECT(self, "engine built on %s, depth %d, %zu stages", priv->choice.reason.c_str(),
                  priv->stream->depth(), priv->chain->stages.size());
}

// Resolves the backend the properties ask for, when they changed since the last time (or
// `force`), and builds the engine on it. Throws starsift::Error.
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
  const starsift::BackendChoice previous = priv->choice;
  priv->choice = choice;
  try {
    gst_sift_transform_build_engine(self, priv->chain);
  } catch (...) {
    priv->choice = previous;
    throw;
  }
  gst_sift_transform_publish_backend(self, name.c_str());
  priv->applied_backend = backend;
  priv->applied_device_id = device_id;
}

// Before a frame: a chain the properties changed is taken in. Stage by stage, new parameters
// go to the running stages from the next frame on (live, or restarting a stage's state) and
// a stage of another filter replaces its predecessor, all without a drain; a chain of another
// length, another output or a stage that does not fit gets a new engine (after the frames in
// flight) and, when its output format changed, new caps. A chain that cannot run here (a
// value that does not fit the format) is refused with a warning; the running one goes on.
// Throws starsift::Error when building fails.
static void gst_sift_transform_sync_chain(GstSiftTransform* self) {
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  GST_OBJECT_LOCK(self);
  const guint64 generation = priv->chain_generation;
  GST_OBJECT_UNLOCK(self);
  if (generation == priv->applied_generation) return;
  priv->applied_generation = generation;

  std::shared_ptr<const starsift::ChainConfig> next;
  std::vector<starsift::FrameShape> shapes;
  try {
    next = GST_SIFT_TRANSFORM_GET_CLASS(self)->describe_chain(self, FALSE);
    gst_sift_transform_check_output(*next);
    if (priv->negotiated) shapes = starsift::chain_shapes(*next, priv->shape);
  } catch (const std::exception& e) {
    GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS, ("%s", e.what()), ("the running chain is kept"));
    return;
  }
  starsift::StreamingChain& engine = *priv->stream->engine();
  const auto plan = starsift::plan_chain_update(*priv->chain, *next);
  bool rebuild = !plan.has_value();
  if (!rebuild && priv->negotiated) rebuild = shapes.back() != engine.output_shape();
  if (!rebuild) {
    try {
      for (std::size_t i = 0; i < plan->size(); ++i) {
        const starsift::StageParams& params = next->stages[i].params;
        switch ((*plan)[i]) {
          case starsift::StageChange::Same:
            break;
          case starsift::StageChange::Live:
          case starsift::StageChange::Restart:
            engine.update_stage(i, [params](starsift::FilterStage& stage) {
              starsift::apply_stage_params(stage, params);
            });
            break;
          case starsift::StageChange::Replace:
            engine.replace_stage(i, starsift::build_stage(params, priv->choice));
            break;
        }
        GST_DEBUG_OBJECT(self, "stage %zu: %s", i,
                         std::string(starsift::to_string((*plan)[i])).c_str());
      }
    } catch (const starsift::Error& e) {
      // Stages before this one took their change already: a new engine makes it whole.
      GST_INFO_OBJECT(self, "a stage could not change in place (%s): new engine", e.what());
      rebuild = true;
    }
  }
  if (!rebuild) {
    priv->chain = next;
    const starsift::gst::ObjectLock lock(self);
    priv->caps_chain = std::move(next);
    return;
  }
  const starsift::FrameShape before = engine.output_shape();
  gst_sift_transform_build_engine(self, std::move(next));
  if (priv->negotiated && priv->stream->engine()->output_shape() != before) {
    // The caps must follow: renegotiated before the next buffer goes in.
    gst_base_transform_reconfigure_src(GST_BASE_TRANSFORM(self));
  }
}

// ElementStream's exit: the element's own report of the frame.
static void gst_sift_transform_frame_out(GstBaseTransform* trans, GstBuffer* buffer,
                                         const starsift::FinishedFrame& frame) {
  GstSiftTransformClass* klass = GST_SIFT_TRANSFORM_GET_CLASS(trans);
  if (klass->frame_out != nullptr) klass->frame_out(GST_SIFT_TRANSFORM(trans), buffer, frame);
}

// The formats of a caps structure's "format" field (every format when it has none).
static std::vector<starsift::PixelFormat> gst_sift_transform_structure_formats(
    const GstStructure* structure) {
  const GValue* value = gst_structure_get_value(structure, "format");
  if (value == nullptr) return gst_sift_transform_formats();
  std::vector<starsift::PixelFormat> formats;
  auto add = [&](const GValue* v) {
    if (!G_VALUE_HOLDS_STRING(v)) return;
    const auto f =
        starsift::gst::pixel_format_from_gst(gst_video_format_from_string(g_value_get_string(v)));
    if (f) formats.push_back(*f);
  };
  if (GST_VALUE_HOLDS_LIST(value)) {
    for (guint i = 0; i < gst_value_list_get_size(value); ++i) {
      add(gst_value_list_get_value(value, i));
    }
  } else {
    add(value);
  }
  return formats;
}

// Sets a structure's "format" field to `formats` (one value or a list).
static void gst_sift_transform_set_formats(GstStructure* structure,
                                           const std::vector<starsift::PixelFormat>& formats) {
  if (formats.size() == 1) {
    gst_structure_set(structure, "format", G_TYPE_STRING,
                      gst_video_format_to_string(*starsift::gst::gst_format_of(formats[0])),
                      nullptr);
    return;
  }
  GValue list = G_VALUE_INIT;
  gst_value_list_init(&list, formats.size());
  for (const starsift::PixelFormat f : formats) {
    GValue item = G_VALUE_INIT;
    g_value_init(&item, G_TYPE_STRING);
    g_value_set_string(&item, gst_video_format_to_string(*starsift::gst::gst_format_of(f)));
    gst_value_list_append_and_take_value(&list, &item);
  }
  gst_structure_take_value(structure, "format", &list);
}
/* GstBaseTransform vfuncs */

// The chain is described and checked, the backend chosen and the engine built: a chain that
// cannot run fails the start, with the reason, instead of the first frame.
static gboolean gst_sift_transform_start(GstBaseTransform* trans) {
  GstSiftTransform* self = GST_SIFT_TRANSFORM(trans);
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  GST_OBJECT_LOCK(self);
  priv->started_depth = priv->depth;
  priv->negotiated.reset();
  const guint64 generation = priv->chain_generation;
  GST_OBJECT_UNLOCK(self);
  priv->qos_dropped = 0;
  priv->rebuild_flow = GST_FLOW_OK;
  try {
    std::shared_ptr<const starsift::ChainConfig> chain =
        GST_SIFT_TRANSFORM_GET_CLASS(self)->describe_chain(self, TRUE);
    gst_sift_transform_check_output(*chain);
    priv->chain = std::move(chain);
    priv->applied_generation = generation;
  } catch (...) {
    STARSIFT_POST_CURRENT_CONFIG_EXCEPTION(self, "starting");
    return FALSE;
  }
  auto stream = std::make_unique<starsift::gst::ElementStream>(
      trans, priv->started_depth, GST_BASE_TRANSFORM_CLASS(parent_class)->prepare_output_buffer,
      gst_sift_transform_frame_out);
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
  {
    const starsift::gst::ObjectLock lock(self);
    priv->negotiated.reset();
    priv->caps_chain.reset();
  }
  priv->chain.reset();
  gst_sift_transform_publish_backend(self, nullptr);
  return TRUE;
}

// The significance scale of what `chain` writes for input caps `structure` (one format): the
// input's own scale as the chain passes it on, or the one a stage sets (whitening's output:
// significance); absent when the chain cannot tell (a size the chain refuses).
// The samples' real bit depth for caps `structure`: the bit-depth property, else the caps'
// "bit-depth" field; 0 when neither says.
static int gst_sift_transform_bit_depth(GstSiftTransform* self, const GstStructure* structure) {
  GST_OBJECT_LOCK(self);
  int bits = gst_sift_transform_priv(self)->bit_depth;
  GST_OBJECT_UNLOCK(self);
  if (bits == 0) gst_structure_get_int(structure, "bit-depth", &bits);
  return bits;
}

static starsift::SignificanceScale gst_sift_transform_output_significance(
    GstSiftTransform* self, const starsift::ChainConfig& chain, const GstStructure* structure) {
  const std::vector<starsift::PixelFormat> formats =
      gst_sift_transform_structure_formats(structure);
  if (formats.size() != 1) return {};
  starsift::FrameShape shape{1024, 1024, formats[0], starsift::default_bit_depth(formats[0])};
  int width = 0, height = 0;
  if (gst_structure_get_int(structure, "width", &width)) shape.width = width;
  if (gst_structure_get_int(structure, "height", &height)) shape.height = height;
  const int bits = gst_sift_transform_bit_depth(self, structure);
  if (bits != 0 && shape.format == starsift::PixelFormat::Gray16) shape.bit_depth = bits;
  shape.significance = starsift::gst::significance_from_structure(structure);
  try {
    return starsift::chain_shapes(chain, shape).back().significance;
  } catch (const std::exception&) {
    return {};
  }
}

// Caps follow the chain: an input format maps to what the chain writes for it; formats the
// chain does not read, or whose output GStreamer cannot carry, are not offered. Size, rate and
// the other fields pass through (no stage changes the frame size).
static GstCaps* gst_sift_transform_transform_caps(GstBaseTransform* trans,
                                                  GstPadDirection direction, GstCaps* caps,
                                                  GstCaps* filter) {
  GstSiftTransform* self = GST_SIFT_TRANSFORM(trans);
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  std::shared_ptr<const starsift::ChainConfig> chain;
  {
    const starsift::gst::ObjectLock lock(self);
    chain = priv->caps_chain;
  }
  if (!chain) {  // not started: what the properties describe, if anything
    try {
      chain = GST_SIFT_TRANSFORM_GET_CLASS(self)->describe_chain(self, FALSE);
      // A chain that can never run here links like any other: start() then refuses it with
      // the reason, where empty caps would only say "not negotiated".
      gst_sift_transform_check_output(*chain);
    } catch (...) {
      chain.reset();
    }
  }

  GstCaps* result = gst_caps_new_empty();
  for (guint i = 0; i < gst_caps_get_size(caps); ++i) {
    const GstStructure* structure = gst_caps_get_structure(caps, i);
    std::vector<starsift::PixelFormat> mapped;
    for (const starsift::PixelFormat given : gst_sift_transform_structure_formats(structure)) {
      if (!chain) {
        mapped.push_back(given);
        continue;
      }
      if (direction == GST_PAD_SINK) {
        if (const auto out = gst_sift_transform_output_format(*chain, given)) {
          mapped.push_back(*out);
        }
        continue;
      }
      for (const starsift::PixelFormat in : gst_sift_transform_formats()) {
        if (gst_sift_transform_output_format(*chain, in) == given) mapped.push_back(in);
      }
    }
    std::vector<starsift::PixelFormat> unique;
    for (const starsift::PixelFormat f : mapped) {
      if (std::find(unique.begin(), unique.end(), f) == unique.end()) unique.push_back(f);
    }
    if (unique.empty()) continue;
    GstStructure* out = gst_structure_copy(structure);
    gst_sift_transform_set_formats(out, unique);
    // A significance scale is the chain's to say: upstream of it nothing is asked of the
    // fields; downstream they say what the chain writes.
    starsift::SignificanceScale scale;
    if (chain && direction == GST_PAD_SINK && unique.size() == 1) {
      scale = gst_sift_transform_output_significance(self, *chain, structure);
    }
    starsift::gst::set_significance_fields(out, scale);
    gst_caps_append_structure_full(result, out,
                                   gst_caps_features_copy(gst_caps_get_features(caps, i)));
  }
  if (filter != nullptr) {
    GstCaps* filtered = gst_caps_intersect_full(filter, result, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref(result);
    result = filtered;
  }
  GST_LOG_OBJECT(self, "%s %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
                 direction == GST_PAD_SINK ? "sink" : "src", caps, result);
  return result;
}

// Output buffers come from the decided pool; without one, a frame of the output caps.
static gboolean gst_sift_transform_transform_size(GstBaseTransform*, GstPadDirection, GstCaps*,
                                                  gsize, GstCaps* othercaps, gsize* othersize) {
  GstVideoInfo info;
  if (!gst_video_info_from_caps(&info, othercaps)) return FALSE;
  *othersize = GST_VIDEO_INFO_SIZE(&info);
  return TRUE;
}

// The input's shape, bit depth included: `bit-depth` when set, else the caps' "bit-depth"
// field (siftskysrc writes it), else the format's own. Throws starsift::Error.
static starsift::FrameShape gst_sift_transform_input_shape(GstSiftTransform* self,
                                                           const GstVideoInfo& info,
                                                           GstCaps* caps) {
  starsift::FrameShape shape = starsift::gst::frame_shape_from_info(info);
  const GstStructure* structure = gst_caps_get_structure(caps, 0);
  const int bits = gst_sift_transform_bit_depth(self, structure);
  shape.significance = starsift::gst::significance_from_structure(structure);
  if (bits != 0 && shape.format == starsift::PixelFormat::Gray16) {
    shape.bit_depth = bits;
  } else if (bits != 0 && bits != shape.bit_depth) {
    throw starsift::Error("bit-depth " + std::to_string(bits) + " does not fit " +
                              std::string(starsift::to_string(shape.format)) + " frames",
                          "0 (from the caps) or " + std::to_string(shape.bit_depth));
  }
  shape.validate();
  return shape;
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
  try {
    const starsift::FrameShape shape = gst_sift_transform_input_shape(self, in_info, incaps);
    const std::vector<starsift::FrameShape> shapes = starsift::chain_shapes(*priv->chain, shape);
    const starsift::FrameShape out = starsift::gst::frame_shape_from_info(out_info);
    if (out.format != shapes.back().format || out.width != shape.width ||
        out.height != shape.height) {
      throw starsift::Error(
          "output caps " + std::string(gst_video_format_to_string(out_info.finfo->format)) +
              " do not match what the chain writes",
          std::string(starsift::to_string(shapes.back().format)) + " of the input's size");
    }
    {
      const starsift::gst::ObjectLock lock(self);
      priv->negotiated.reset();
    }
    // The frames of the previous caps were pushed when the caps event came (sink_event).
    priv->stream->configure(shape, in_info, out_info);
    priv->shape = shape;
    const starsift::gst::ObjectLock lock(self);
    priv->negotiated = shape;
  } catch (...) {
    STARSIFT_POST_CURRENT_EXCEPTION(self, "setting caps");
    return FALSE;
  }
  GST_DEBUG_OBJECT(self, "configured for %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, incaps, outcaps);
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

// Controlled properties take their values for the buffer's time.
static void gst_sift_transform_sync_values(GstBaseTransform* trans, GstBuffer* buffer) {
  const GstClockTime timestamp = GST_BUFFER_TIMESTAMP(buffer);
  const GstClockTime stream_time =
      gst_segment_to_stream_time(&trans->segment, GST_FORMAT_TIME, timestamp);
  if (GST_CLOCK_TIME_IS_VALID(stream_time)) {
    gst_object_sync_values(GST_OBJECT(trans), stream_time);
  }
}

// Every frame goes into the engine. Property, backend and chain changes are taken in first,
// so that a change of output format renegotiates (in the base class's submit) before the
// frame; QoS drops are counted.
static GstFlowReturn gst_sift_transform_submit_input_buffer(GstBaseTransform* trans,
                                                            gboolean is_discont, GstBuffer* inbuf) {
  GstSiftTransform* self = GST_SIFT_TRANSFORM(trans);
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  gst_sift_transform_sync_values(trans, inbuf);
  priv->rebuild_flow = GST_FLOW_OK;
  try {
    gst_sift_transform_update_backend(self, false);
    gst_sift_transform_sync_chain(self);
  } catch (...) {
    gst_buffer_unref(inbuf);
    priv->stream->post_failure("applying new parameters");
    return GST_FLOW_ERROR;
  }
  if (priv->rebuild_flow != GST_FLOW_OK) {
    gst_buffer_unref(inbuf);
    return priv->rebuild_flow;
  }
  // Renegotiation, QoS and the negotiated check; the buffer is left in queued_buf, unless QoS
  // dropped it as too late.
  const GstFlowReturn ret =
      GST_BASE_TRANSFORM_CLASS(parent_class)->submit_input_buffer(trans, is_discont, inbuf);
  if (ret != GST_FLOW_OK) return ret;
  if (trans->queued_buf == nullptr) {
    ++priv->qos_dropped;
    return GST_FLOW_OK;
  }
  GstBuffer* buffer = trans->queued_buf;
  trans->queued_buf = nullptr;
  if (!priv->stream->configured()) {
    gst_buffer_unref(buffer);
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, (nullptr), ("no caps negotiated before a buffer"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  return priv->stream->submit(buffer);
}

// Never called: frames go through submit_input_buffer/generate_output. GstBaseTransform
// treats an element without a transform function as passthrough (and then hands upstream's
// allocation query downstream instead of proposing our frame-memory pool), so it must exist.
static GstFlowReturn gst_sift_transform_transform(GstBaseTransform* trans, GstBuffer*, GstBuffer*) {
  GST_ELEMENT_ERROR(trans, CORE, FAILED, (nullptr), ("a frame outside the streaming engine"));
  return GST_FLOW_ERROR;
}

// The oldest frame once `depth` are in flight (at depth 1: the frame just submitted).
static GstFlowReturn gst_sift_transform_generate_output(GstBaseTransform* trans,
                                                        GstBuffer** outbuf) {
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(GST_SIFT_TRANSFORM(trans));
  if (!priv->stream) return GST_FLOW_FLUSHING;
  return priv->stream->generate(outbuf);
}

// A serialized event (EOS, CAPS, SEGMENT, GAP, tags, ...) first pushes the frames in flight
// downstream, so that it stays behind them; FLUSH_STOP drops them (counted), stages with
// history start a new one, and failures are reported again.
static gboolean gst_sift_transform_sink_event(GstBaseTransform* trans, GstEvent* event) {
  GstSiftTransformPrivate* priv = gst_sift_transform_priv(GST_SIFT_TRANSFORM(trans));
  if (priv->stream) {
    if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP) {
      priv->stream->discard();
      priv->stream->recover();
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
    case PROP_BIT_DEPTH:
      priv->bit_depth = g_value_get_int(value);
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
    case PROP_BIT_DEPTH:
      g_value_set_int(value, priv->bit_depth);
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
  properties[PROP_BIT_DEPTH] = g_param_spec_int(
      "bit-depth", "Bit depth",
      "Real bits of a GRAY16_LE sample (10, 12, 14 for most sensors; in the low bits), which "
      "GStreamer caps cannot say: rules that depend on it (whitening's saturation, the offset "
      "of its output) follow it. 0 takes it from the caps' bit-depth field when upstream writes "
      "one (siftskysrc does), else 16; GRAY8 and colour formats have 8. Read at caps",
      0, 16, DEFAULT_PROP_BIT_DEPTH,
      static_cast<GParamFlags>(G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY |
                               G_PARAM_STATIC_STRINGS));
  g_object_class_install_properties(gobject_class, N_PROPERTIES, properties);

  // Inherited by every element.
  gst_element_class_add_static_pad_template(element_class, &gst_sift_transform_sink_template);
  gst_element_class_add_static_pad_template(element_class, &gst_sift_transform_src_template);

  trans_class->start = GST_DEBUG_FUNCPTR(gst_sift_transform_start);
  trans_class->stop = GST_DEBUG_FUNCPTR(gst_sift_transform_stop);
  trans_class->transform_caps = GST_DEBUG_FUNCPTR(gst_sift_transform_transform_caps);
  trans_class->transform_size = GST_DEBUG_FUNCPTR(gst_sift_transform_transform_size);
  trans_class->set_caps = GST_DEBUG_FUNCPTR(gst_sift_transform_set_caps);
  trans_class->propose_allocation = GST_DEBUG_FUNCPTR(gst_sift_transform_propose_allocation);
  trans_class->decide_allocation = GST_DEBUG_FUNCPTR(gst_sift_transform_decide_allocation);
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
  priv->bit_depth = DEFAULT_PROP_BIT_DEPTH;
  priv->started_depth = 1;
  priv->chain_generation = 0;
  priv->applied_generation = 0;
  priv->qos_dropped = 0;
  priv->rebuild_flow = GST_FLOW_OK;

  // The output is a new frame: never in place, never passthrough (no element has a neutral
  // setting that would leave every frame as it is).
  gst_base_transform_set_in_place(GST_BASE_TRANSFORM(self), FALSE);
  gst_base_transform_set_passthrough(GST_BASE_TRANSFORM(self), FALSE);
  gst_base_transform_set_qos_enabled(GST_BASE_TRANSFORM(self), TRUE);
}

namespace starsift::gst {

void chain_changed(GstSiftTransform* self) {
  const ObjectLock lock(self);
  ++gst_sift_transform_priv(self)->chain_generation;
}

std::optional<FrameShape> negotiated_input(GstSiftTransform* self) {
  const ObjectLock lock(self);
  return gst_sift_transform_priv(self)->negotiated;
}

std::shared_ptr<const ChainConfig> running_chain(GstSiftTransform* self) {
  const ObjectLock lock(self);
  return gst_sift_transform_priv(self)->caps_chain;
}

int streaming_depth(GstSiftTransform* self) {
  const GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  const ObjectLock lock(self);
  return priv->stream ? priv->started_depth : priv->depth;
}

std::optional<StreamSnapshot> stream_snapshot(GstSiftTransform* self) {
  const GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  const ObjectLock lock(self);
  if (priv->stream) return priv->stream->snapshot();
  return priv->last_snapshot;
}

std::string active_backend(GstSiftTransform* self) {
  const GstSiftTransformPrivate* priv = gst_sift_transform_priv(self);
  const ObjectLock lock(self);
  return priv->active_backend != nullptr ? priv->active_backend : "";
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
