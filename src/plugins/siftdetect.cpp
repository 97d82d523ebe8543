// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * SECTION:element-siftdetect
 * @title: siftdetect
 *
 * Finds the objects in each frame and follows the ones that move. Each pixel's background and
 * noise come from a mesh of sigma-clipped tiles (#GstSiftDetect:background); the frame above
 * the background, filtered (#GstSiftDetect:filter), is thresholded at #GstSiftDetect:threshold
 * sigmas (with #GstSiftDetect:line-length, also where a line through the pixel sums to
 * #GstSiftDetect:line-threshold: faint streaks); the pixels above join into objects
 * (#GstSiftDetect:connectivity), and each object of
 * at least #GstSiftDetect:min-area pixels gets a record: pixel count, bounding box, flux and
 * its error, peak, flux-weighted centroid and its error, second moments, ellipse, and for
 * streaks length and end points along the major axis (docs/detect.md). Up to
 * #GstSiftDetect:max-objects records per frame; the rest are counted as overflow. With
 * #GstSiftDetect:merge-streaks (on by default) the pieces of one streak or meteor trail that
 * detection found apart (elongated, on one line, a small gap between them) become one record,
 * flagged 16 (docs/detect.md, "Streak merge"), before anything below sees the catalogue.
 *
 * Across frames the objects are linked into tracks of constant velocity (#GstSiftDetect:gate,
 * #GstSiftDetect:confirm, #GstSiftDetect:coast): a record's `track` is the mover it belongs to,
 * -1 when none.
 *
 * Every output buffer carries the catalogue as a GstSiftResultMeta of kind "catalogue"
 * (DetectedObject records; plugins/common/result_meta.hpp), the frame's movers as one of kind
 * "tracks" (Track records), and, with #GstSiftDetect:roi-metas, a
 * GstVideoRegionOfInterestMeta per object (type "object", its id, a "starsift-object" param
 * with flux, peak and track). With #GstSiftDetect:json-file each frame is a JSON line there;
 * with #GstSiftDetect:post-messages a "siftdetect" element message (at most one per
 * #GstSiftDetect:message-interval ms).
 *
 * The frame itself passes unchanged by default; #GstSiftDetect:output can replace it by the
 * labels (GRAY16; renumbered like the catalogue when a streak was merged) or, for a person
 * watching, an overlay (GRAY8): the significance with each object's box, its ellipse at 3 a,
 * 3 b, and each mover's tail (its last 16 positions) with a cross where it is expected next,
 * drawn on the host after tracking, the same on both backends (docs/detect.md).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 siftskysrc movers=5 ! siftwhiten ! \
 *     siftdetect json-file=detections-%Y%m%d.jsonl ! fakesink
 * ]| Whitens a synthetic sky and writes what it finds, a file per night (UTC).
 */

#include "plugins/siftdetect.hpp"

#include <gst/video/video.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <variant>
#include <vector>

#include "pipeline/chain/chain_config.hpp"
#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/detections_json.hpp"
#include "pipeline/error.hpp"
#include "plugins/common/enums.hpp"
#include "plugins/common/linked_detections.hpp"
#include "plugins/common/result_meta.hpp"
#include "plugins/common/video.hpp"

GST_DEBUG_CATEGORY_STATIC(gst_sift_detect_debug);
#define GST_CAT_DEFAULT gst_sift_detect_debug

using starsift::DetectParams;
using starsift::TrackerParams;

enum {
  PROP_0,
  PROP_BACKGROUND,
  PROP_MESH,
  PROP_FILTER,
  PROP_FWHM,
  PROP_THRESHOLD_MODE,
  PROP_THRESHOLD,
  PROP_LINE_LENGTH,
  PROP_LINE_THRESHOLD,
  PROP_CONNECTIVITY,
  PROP_MIN_AREA,
  PROP_MAX_OBJECTS,
  PROP_OUTPUT,
  PROP_MERGE_STREAKS,
  PROP_GATE,
  PROP_CONFIRM,
  PROP_COAST,
  PROP_MIN_SPEED,
  PROP_MAX_SPEED,
  PROP_JSON_FILE,
  PROP_JSON_MAX_BYTES,
  PROP_POST_MESSAGES,
  PROP_MESSAGE_INTERVAL,
  PROP_ROI_METAS,
  PROP_STATS,
  N_PROPERTIES
};

static GParamSpec* properties[N_PROPERTIES];

// The message name and the ROI type.
#define SIFT_DETECT_MESSAGE "siftdetect"
#define SIFT_DETECT_ROI_TYPE "object"

struct GstSiftDetectState {
  explicit GstSiftDetectState(const DetectParams& params) : linked(params) {}
  starsift::gst::LinkedDetections linked;  // the merge and the tracker, and their buffers
  std::string json_file;                   // the json-file and json-max-bytes properties at start
  guint64 json_max_bytes = 0;
  std::unique_ptr<starsift::DetectionsWriter> writer;
  gint64 last_message_us = 0;
  bool posted = false;         // a message was posted since start: the interval counts from it
  bool writer_failed = false;  // the failure was reported; the next success reports again
};

#define gst_sift_detect_parent_class parent_class
G_DEFINE_TYPE(GstSiftDetect, gst_sift_detect, GST_TYPE_SIFT_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE(siftdetect, "siftdetect", GST_RANK_NONE, GST_TYPE_SIFT_DETECT);

/* helpers */

static GstSiftDetectSettings gst_sift_detect_copy_settings(GstSiftDetect* self) {
  const starsift::gst::ObjectLock lock(self);
  return self->settings;
}

// When the frame whose PTS is `pts` was taken, in microseconds of UTC: the wall clock now
// minus the frame's age on the pipeline clock (the wall clock alone without a clock).
static gint64 gst_sift_detect_utc(GstSiftDetect* self, GstClockTime pts) {
  const gint64 now = g_get_real_time();
  GstBaseTransform* trans = GST_BASE_TRANSFORM(self);
  if (!GST_CLOCK_TIME_IS_VALID(pts)) return now;
  GstClock* clock = gst_element_get_clock(GST_ELEMENT(self));
  if (clock == nullptr) return now;
  const GstClockTime clock_now = gst_clock_get_time(clock);
  gst_object_unref(clock);
  const GstClockTime base = gst_element_get_base_time(GST_ELEMENT(self));
  const GstClockTime running = gst_segment_to_running_time(&trans->segment, GST_FORMAT_TIME, pts);
  if (!GST_CLOCK_TIME_IS_VALID(running) || clock_now < base) return now;
  const gint64 age_ns = static_cast<gint64>(clock_now - base) - static_cast<gint64>(running);
  return now - age_ns / 1000;
}

static GstStructure* gst_sift_detect_message(guint64 frame, GstClockTime pts,
                                             std::span<const starsift::DetectedObject> objects,
                                             guint32 overflow,
                                             std::span<const starsift::Track> tracks) {
  GstStructure* s = gst_structure_new(
      SIFT_DETECT_MESSAGE, "frame", G_TYPE_UINT64, frame, "timestamp", G_TYPE_UINT64, pts,
      "objects", G_TYPE_UINT, static_cast<guint>(objects.size()), "overflow", G_TYPE_UINT, overflow,
      "movers", G_TYPE_UINT, static_cast<guint>(tracks.size()), nullptr);
  // The movers: id, position and velocity, the part a user acts on.
  GValue list = G_VALUE_INIT;
  gst_value_list_init(&list, tracks.size());
  for (const starsift::Track& t : tracks) {
    GValue item = G_VALUE_INIT;
    g_value_init(&item, GST_TYPE_STRUCTURE);
    GstStructure* mover = gst_structure_new(
        "mover", "id", G_TYPE_INT, t.id, "x", G_TYPE_DOUBLE, static_cast<double>(t.x), "y",
        G_TYPE_DOUBLE, static_cast<double>(t.y), "vx", G_TYPE_DOUBLE, static_cast<double>(t.vx),
        "vy", G_TYPE_DOUBLE, static_cast<double>(t.vy), "detections", G_TYPE_UINT, t.detections,
        "missed", G_TYPE_UINT, t.missed, nullptr);
    g_value_take_boxed(&item, mover);
    gst_value_list_append_and_take_value(&list, &item);
  }
  gst_structure_take_value(s, "tracks", &list);
  return s;
}

// The output mode the running chain gave this frame: a change of `output` builds a new engine
// only after the frames in flight have left, so the running chain is the frame's own.
static std::optional<starsift::DetectOutput> gst_sift_detect_frame_output(GstSiftDetect* self) {
  const std::shared_ptr<const starsift::ChainConfig> chain =
      starsift::gst::running_chain(GST_SIFT_TRANSFORM(self));
  if (!chain || chain->stages.empty()) return std::nullopt;
  const auto* params = std::get_if<DetectParams>(&chain->stages.front().params);
  if (params == nullptr) return std::nullopt;
  return params->output;
}

/* GstSiftTransform hooks */

// A one-stage chain: detection with the properties' parameters.
static std::shared_ptr<const starsift::ChainConfig> gst_sift_detect_describe_chain(
    GstSiftTransform* trans, gboolean) {
  return starsift::gst::one_stage_chain(trans, "detect", GST_SIFT_DETECT(trans)->settings.params,
                                        "siftdetect properties");
}

// Every frame as it leaves: its catalogue linked into tracks, then published on the buffer
// (the catalogue meta's track fields, a tracks meta, ROI metas), as a JSON line and a message.
static void gst_sift_detect_frame_out(GstSiftTransform* trans, GstBuffer* buffer,
                                      const starsift::FinishedFrame& frame) {
  GstSiftDetect* self = GST_SIFT_DETECT(trans);
  GstSiftDetectState* state = self->state;
  if (state == nullptr) return;
  const starsift::FrameResult* catalogue = starsift::gst::frame_catalogue(frame);
  if (catalogue == nullptr) return;
  // What this frame needs of the settings, without copying the strings (no allocation per
  // frame); the JSON file's path and size limit were taken at start.
  bool roi_metas = false, post_messages = false;
  starsift::DetectLinkParams link;
  guint message_interval_ms = 0;
  {
    const starsift::gst::ObjectLock lock(self);
    link = self->settings.params.link;
    roi_metas = self->settings.roi_metas;
    post_messages = self->settings.post_messages;
    message_interval_ms = self->settings.message_interval_ms;
  }
  const guint32 overflow = catalogue->header().overflow;
  const GstClockTime pts = GST_BUFFER_PTS(buffer);
  const std::int64_t pts_ns = GST_CLOCK_TIME_IS_VALID(pts) ? static_cast<std::int64_t>(pts) : -1;
  // Merged and tracked here, on the host and for both backends alike, so that the metas, the
  // message, the JSON line and the tracker all see one record per streak.
  state->linked.publish(GST_ELEMENT(self), buffer, frame, *catalogue, link,
                        gst_sift_detect_frame_output(self));
  const starsift::DetectionLinker& linker = state->linked.linker;
  const guint64 number = linker.frame();
  const std::span<const starsift::DetectedObject> records = linker.records();
  const auto count = static_cast<guint32>(records.size());
  const std::span<const starsift::Track> tracks = linker.tracks();
  if (roi_metas) {
    for (const starsift::DetectedObject& o : records) {
      GstVideoRegionOfInterestMeta* roi = gst_buffer_add_video_region_of_interest_meta(
          buffer, SIFT_DETECT_ROI_TYPE, static_cast<guint>(o.xmin), static_cast<guint>(o.ymin),
          static_cast<guint>(o.xmax - o.xmin + 1), static_cast<guint>(o.ymax - o.ymin + 1));
      roi->id = static_cast<gint>(o.id);
      gst_video_region_of_interest_meta_add_param(
          roi,
          gst_structure_new("starsift-object", "flux", G_TYPE_DOUBLE, static_cast<double>(o.flux),
                            "peak", G_TYPE_DOUBLE, static_cast<double>(o.peak), "track", G_TYPE_INT,
                            o.track, nullptr));
    }
  }

  bool wrote = false, write_failed = false;
  if (!state->json_file.empty()) {
    try {
      if (!state->writer) {
        state->writer =
            std::make_unique<starsift::DetectionsWriter>(state->json_file, state->json_max_bytes);
      }
      state->writer->write(
          {number, pts_ns, gst_sift_detect_utc(self, pts), records, overflow, tracks});
      wrote = true;
      state->writer_failed = false;
    } catch (const std::exception& e) {
      write_failed = true;
      if (!state->writer_failed) {
        GST_ELEMENT_WARNING(self, RESOURCE, WRITE, ("%s", e.what()),
                            ("the frames go on; their detections are missing from the file"));
      }
      state->writer_failed = true;
    }
  }

  GstStructure* message = nullptr;
  if (post_messages) {
    const gint64 now = g_get_monotonic_time();
    if (message_interval_ms == 0 || !state->posted ||
        now - state->last_message_us >= static_cast<gint64>(message_interval_ms) * 1000) {
      state->last_message_us = now;
      state->posted = true;
      message = gst_sift_detect_message(number, pts, records, overflow, tracks);
    }
  }
  {
    const starsift::gst::ObjectLock lock(self);
    GstSiftDetectStats& s = self->stats;
    ++s.frames;
    s.objects = count;
    s.objects_total += count;
    s.overflow_total += overflow;
    s.movers = static_cast<guint>(tracks.size());
    s.json_lines += wrote ? 1 : 0;
    s.json_failures += write_failed ? 1 : 0;
    s.messages += message != nullptr ? 1 : 0;
    s.tracker = linker.tracker().counters();
  }
  if (message != nullptr) {
    gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), message));
  }
}

/* GstBaseTransform vfuncs */

// A new tracker and writer, the stats start over, then GstSiftTransform starts.
static gboolean gst_sift_detect_start(GstBaseTransform* trans) {
  GstSiftDetect* self = GST_SIFT_DETECT(trans);
  const GstSiftDetectSettings settings = gst_sift_detect_copy_settings(self);
  try {
    delete self->state;
    self->state = nullptr;
    self->state = new GstSiftDetectState(settings.params);
    self->state->json_file = settings.json_file;
    self->state->json_max_bytes = settings.json_max_bytes;
  } catch (...) {
    STARSIFT_POST_CURRENT_EXCEPTION(self, "starting");
    return FALSE;
  }
  {
    const starsift::gst::ObjectLock lock(self);
    self->stats = GstSiftDetectStats{};
  }
  return GST_BASE_TRANSFORM_CLASS(parent_class)->start(trans);
}

static gboolean gst_sift_detect_stop(GstBaseTransform* trans) {
  GstSiftDetect* self = GST_SIFT_DETECT(trans);
  const gboolean stopped = GST_BASE_TRANSFORM_CLASS(parent_class)->stop(trans);
  delete self->state;  // closes the JSON file
  self->state = nullptr;
  return stopped;
}

// A flush (a seek) breaks the frames' continuity: tracks start over.
static gboolean gst_sift_detect_sink_event(GstBaseTransform* trans, GstEvent* event) {
  GstSiftDetect* self = GST_SIFT_DETECT(trans);
  if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP && self->state != nullptr) {
    self->state->linked.linker.reset();
  }
  return GST_BASE_TRANSFORM_CLASS(parent_class)->sink_event(trans, event);
}

/* GObject vfuncs */

static void gst_sift_detect_set_property(GObject* object, guint prop_id, const GValue* value,
                                         GParamSpec* pspec);
static void gst_sift_detect_get_property(GObject* object, guint prop_id, GValue* value,
                                         GParamSpec* pspec);

static void gst_sift_detect_finalize(GObject* object) {
  GstSiftDetect* self = GST_SIFT_DETECT(object);
  delete self->state;
  self->settings.~GstSiftDetectSettings();
  self->stats.~GstSiftDetectStats();
  G_OBJECT_CLASS(parent_class)->finalize(object);
}

static void gst_sift_detect_class_init(GstSiftDetectClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass* trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  GstSiftTransformClass* sift_class = GST_SIFT_TRANSFORM_CLASS(klass);
  using P = DetectParams;
  using T = TrackerParams;

  GST_DEBUG_CATEGORY_INIT(gst_sift_detect_debug, "siftdetect", 0, "starsift detection");

  gobject_class->set_property = gst_sift_detect_set_property;
  gobject_class->get_property = gst_sift_detect_get_property;
  gobject_class->finalize = gst_sift_detect_finalize;

  const auto live = static_cast<GParamFlags>(G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
                                             GST_PARAM_CONTROLLABLE | G_PARAM_STATIC_STRINGS);
  const auto playing = static_cast<GParamFlags>(G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
                                                G_PARAM_STATIC_STRINGS);
  const auto ready = static_cast<GParamFlags>(G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY |
                                              G_PARAM_STATIC_STRINGS);
  properties[PROP_BACKGROUND] = g_param_spec_enum(
      "background", "Background",
      "Where each pixel's background and noise come from: a mesh of sigma-clipped tiles, one "
      "for the frame, or none (the input is a significance image)",
      GST_TYPE_SIFT_DETECT_BACKGROUND, static_cast<gint>(P::kDefaultBackground), live);
  properties[PROP_MESH] = g_param_spec_int("mesh", "Mesh", "Side of the background tiles, px",
                                           P::kMinMesh, P::kMaxMesh, P::kDefaultMesh, live);
  properties[PROP_FILTER] = g_param_spec_enum(
      "filter", "Filter",
      "What each pixel is compared with: itself, Source Extractor's 3x3 default kernel, or a "
      "Gaussian PSF of fwhm px",
      GST_TYPE_SIFT_DETECT_FILTER, static_cast<gint>(P::kDefaultFilter), live);
  properties[PROP_FWHM] =
      g_param_spec_double("fwhm", "FWHM", "FWHM of the Gaussian filter, px (filter=gaussian)", 0.5,
                          P::kMaxFilterRadius / 1.5, P::kDefaultFwhm, live);
  properties[PROP_THRESHOLD_MODE] = g_param_spec_enum(
      "threshold-mode", "Threshold mode",
      "threshold in sigmas of the filtered noise, or absolute above the background",
      GST_TYPE_SIFT_DETECT_THRESHOLD, static_cast<gint>(P::kDefaultThresholdMode), live);
  properties[PROP_THRESHOLD] = g_param_spec_double(
      "threshold", "Threshold", "Detection threshold (see threshold-mode); more than 0", 0.0,
      G_MAXDOUBLE, P::kDefaultThreshold, live);
  properties[PROP_LINE_LENGTH] = g_param_spec_int(
      "line-length", "Line length",
      "The line channel for faint streaks: a pixel is also found where the significance summed "
      "along the best line of this many px through it exceeds line-threshold. 0 (off) or odd "
      "5..63 (docs/detect.md, \"The line channel\")",
      0, P::kMaxLineLength, 0, live);
  properties[PROP_LINE_THRESHOLD] = g_param_spec_double(
      "line-threshold", "Line threshold",
      "Threshold of the line channel, sigmas of a line's sum (line-length); more than 0", 0.0,
      G_MAXDOUBLE, P::kDefaultLineThreshold, live);
  properties[PROP_CONNECTIVITY] = g_param_spec_int(
      "connectivity", "Connectivity",
      "Pixels join their 4 edge neighbours or all 8 (4 or 8; other values are refused)", 4, 8,
      static_cast<int>(P::kDefaultConnectivity), live);
  properties[PROP_MIN_AREA] =
      g_param_spec_int("min-area", "Min area", "Objects of fewer pixels are dropped", 1, 1 << 20,
                       P::kDefaultMinArea, live);
  properties[PROP_MAX_OBJECTS] = g_param_spec_int(
      "max-objects", "Max objects",
      "Records per frame at most; the objects beyond are counted (overflow), never a failure. "
      "A change builds a new stage after the frames in flight",
      1, P::kMaxMaxObjects, P::kDefaultMaxObjects, playing);
  properties[PROP_OUTPUT] = g_param_spec_enum(
      "output", "Output",
      "The frame written: the input unchanged, the labels (GRAY16, numbered like the catalogue "
      "after a streak merge) or an overlay for a person watching (GRAY8: the significance with "
      "the objects' boxes, their ellipses at 3 a, 3 b and the movers' tails of 16 frames). A "
      "change renegotiates the caps",
      GST_TYPE_SIFT_DETECT_OUTPUT, static_cast<gint>(P::kDefaultOutput), playing);
  properties[PROP_MERGE_STREAKS] = g_param_spec_boolean(
      "merge-streaks", "Merge streaks",
      "Merge the pieces of one streak (elongated objects on one line with a small gap between "
      "them) into one record, flagged 16, before the metas, messages, JSON lines and tracks "
      "see the catalogue",
      TRUE, playing);
  properties[PROP_GATE] = g_param_spec_double(
      "gate", "Gate", "How far (px) a detection may lie from a track's predicted position", 0.0,
      T::kMaxGate, T::kDefaultGate, ready);
  properties[PROP_CONFIRM] =
      g_param_spec_int("confirm", "Confirm", "Detections before a track is confirmed", 1,
                       T::kMaxConfirm, T::kDefaultConfirm, ready);
  properties[PROP_COAST] =
      g_param_spec_int("coast", "Coast", "Frames without a detection a confirmed track survives", 0,
                       T::kMaxCoast, T::kDefaultCoast, ready);
  properties[PROP_MIN_SPEED] = g_param_spec_double(
      "min-speed", "Min speed",
      "Tracks slower than this (px/frame) are not reported as movers (0: every confirmed track)",
      0.0, T::kMaxMaxSpeed, T::kDefaultMinSpeed, ready);
  properties[PROP_MAX_SPEED] = g_param_spec_double(
      "max-speed", "Max speed", "The fastest motion (px/frame) a new track may show", 0.0,
      T::kMaxMaxSpeed, T::kDefaultMaxSpeed, ready);
  properties[PROP_JSON_FILE] = g_param_spec_string(
      "json-file", "JSON file",
      "Where each frame's detections go as a JSON line (docs/detect.md); a strftime pattern in "
      "UTC starts a new file when its expansion changes (detections-%Y%m%d.jsonl: a file per "
      "night). Empty: no file. Read at start",
      nullptr, ready);
  properties[PROP_JSON_MAX_BYTES] = g_param_spec_uint64(
      "json-max-bytes", "JSON max bytes",
      "A file that would grow beyond this continues in <name>.1, <name>.2, ... (0: no limit)", 0,
      G_MAXUINT64, 0, ready);
  properties[PROP_POST_MESSAGES] = g_param_spec_boolean(
      "post-messages", "Post messages",
      "Post a \"siftdetect\" element message per frame: frame, timestamp, objects, overflow, "
      "movers and the movers' tracks",
      FALSE, playing);
  properties[PROP_MESSAGE_INTERVAL] = g_param_spec_uint(
      "message-interval", "Message interval",
      "At most one message per this many milliseconds (0: every frame)", 0, G_MAXUINT, 0, playing);
  properties[PROP_ROI_METAS] = g_param_spec_boolean(
      "roi-metas", "ROI metas",
      "Add a GstVideoRegionOfInterestMeta per object (type \"object\") to each buffer", TRUE,
      playing);
  properties[PROP_STATS] = g_param_spec_boxed(
      "stats", "Statistics",
      "siftdetect-stats: frames, objects (last frame), objects-total, overflow-total, movers "
      "(last frame), tracks-confirmed, tentative-dropped, confirmed-ended, movers-reported, "
      "json-lines, json-failures, messages. Reset at start, kept after stop",
      GST_TYPE_STRUCTURE, static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_properties(gobject_class, N_PROPERTIES, properties);

  gst_element_class_set_static_metadata(
      element_class, "Object detection", "Filter/Analyzer/Video",
      "Finds the objects in each frame, links the moving ones into tracks, and publishes the "
      "catalogue as metas, messages and JSON lines",
      "starsift");

  sift_class->describe_chain = GST_DEBUG_FUNCPTR(gst_sift_detect_describe_chain);
  sift_class->frame_out = GST_DEBUG_FUNCPTR(gst_sift_detect_frame_out);
  trans_class->start = GST_DEBUG_FUNCPTR(gst_sift_detect_start);
  trans_class->stop = GST_DEBUG_FUNCPTR(gst_sift_detect_stop);
  trans_class->sink_event = GST_DEBUG_FUNCPTR(gst_sift_detect_sink_event);
}

static void gst_sift_detect_init(GstSiftDetect* self) {
  new (&self->settings) GstSiftDetectSettings();
  new (&self->stats) GstSiftDetectStats();
  self->state = nullptr;
}

// Stores a parameter when the params accept it (for the negotiated frames once caps are set);
// otherwise throws starsift::Error and the property keeps its value.
template <class T>
static void gst_sift_detect_store(GstSiftDetect* self, T DetectParams::*field, T value) {
  starsift::gst::store_checked(GST_SIFT_TRANSFORM(self), self->settings.params,
                               [&](DetectParams& p) { p.*field = value; });
  starsift::gst::chain_changed(GST_SIFT_TRANSFORM(self));
}

template <class T>
static void gst_sift_detect_store_tracker(GstSiftDetect* self, T TrackerParams::*field, T value) {
  TrackerParams candidate = gst_sift_detect_copy_settings(self).params.link.tracker;
  candidate.*field = value;
  candidate.validate();
  const starsift::gst::ObjectLock lock(self);
  self->settings.params.link.tracker.*field = value;
}

template <class Enum>
static Enum gst_sift_detect_enum(const GValue* value) {
  return static_cast<Enum>(g_value_get_enum(value));
}

static void gst_sift_detect_set_property(GObject* object, guint prop_id, const GValue* value,
                                         GParamSpec* pspec) {
  GstSiftDetect* self = GST_SIFT_DETECT(object);
  using P = DetectParams;
  using T = TrackerParams;
  try {
    switch (prop_id) {
      case PROP_BACKGROUND:
        gst_sift_detect_store(self, &P::background,
                              gst_sift_detect_enum<starsift::DetectBackground>(value));
        break;
      case PROP_MESH:
        gst_sift_detect_store(self, &P::mesh, g_value_get_int(value));
        break;
      case PROP_FILTER:
        gst_sift_detect_store(self, &P::filter,
                              gst_sift_detect_enum<starsift::DetectFilter>(value));
        break;
      case PROP_FWHM:
        gst_sift_detect_store(self, &P::fwhm, g_value_get_double(value));
        break;
      case PROP_THRESHOLD_MODE:
        gst_sift_detect_store(self, &P::threshold_mode,
                              gst_sift_detect_enum<starsift::DetectThreshold>(value));
        break;
      case PROP_THRESHOLD:
        gst_sift_detect_store(self, &P::threshold, g_value_get_double(value));
        break;
      case PROP_LINE_LENGTH:
        gst_sift_detect_store(self, &P::line_length, g_value_get_int(value));
        break;
      case PROP_LINE_THRESHOLD:
        gst_sift_detect_store(self, &P::line_threshold, g_value_get_double(value));
        break;
      case PROP_CONNECTIVITY: {
        const int c = g_value_get_int(value);
        if (c != 4 && c != 8) {
          throw starsift::Error("connectivity " + std::to_string(c) + " is not allowed", "4, 8");
        }
        gst_sift_detect_store(self, &P::connectivity, static_cast<starsift::Connectivity>(c));
        break;
      }
      case PROP_MIN_AREA:
        gst_sift_detect_store(self, &P::min_area, g_value_get_int(value));
        break;
      case PROP_MAX_OBJECTS:
        gst_sift_detect_store(self, &P::max_objects, g_value_get_int(value));
        break;
      case PROP_OUTPUT:
        gst_sift_detect_store(self, &P::output,
                              gst_sift_detect_enum<starsift::DetectOutput>(value));
        break;
      case PROP_MERGE_STREAKS: {
        const starsift::gst::ObjectLock lock(self);
        self->settings.params.link.merge_streaks = g_value_get_boolean(value) != FALSE;
        break;
      }
      case PROP_GATE:
        gst_sift_detect_store_tracker(self, &T::gate, g_value_get_double(value));
        break;
      case PROP_CONFIRM:
        gst_sift_detect_store_tracker(self, &T::confirm, g_value_get_int(value));
        break;
      case PROP_COAST:
        gst_sift_detect_store_tracker(self, &T::coast, g_value_get_int(value));
        break;
      case PROP_MIN_SPEED:
        gst_sift_detect_store_tracker(self, &T::min_speed, g_value_get_double(value));
        break;
      case PROP_MAX_SPEED:
        gst_sift_detect_store_tracker(self, &T::max_speed, g_value_get_double(value));
        break;
      case PROP_JSON_FILE: {
        const gchar* path = g_value_get_string(value);
        const starsift::gst::ObjectLock lock(self);
        self->settings.json_file = path != nullptr ? path : "";
        break;
      }
      case PROP_JSON_MAX_BYTES: {
        const starsift::gst::ObjectLock lock(self);
        self->settings.json_max_bytes = g_value_get_uint64(value);
        break;
      }
      case PROP_POST_MESSAGES: {
        const starsift::gst::ObjectLock lock(self);
        self->settings.post_messages = g_value_get_boolean(value) != FALSE;
        break;
      }
      case PROP_MESSAGE_INTERVAL: {
        const starsift::gst::ObjectLock lock(self);
        self->settings.message_interval_ms = g_value_get_uint(value);
        break;
      }
      case PROP_ROI_METAS: {
        const starsift::gst::ObjectLock lock(self);
        self->settings.roi_metas = g_value_get_boolean(value) != FALSE;
        break;
      }
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        break;
    }
  } catch (const std::exception& e) {
    starsift::gst::warn_refused_value(object, GST_CAT_DEFAULT, pspec, e.what());
  }
}

static GstStructure* gst_sift_detect_stats_structure(const GstSiftDetectStats& s) {
  return gst_structure_new(
      "siftdetect-stats", "frames", G_TYPE_UINT64, s.frames, "objects", G_TYPE_UINT, s.objects,
      "objects-total", G_TYPE_UINT64, s.objects_total, "overflow-total", G_TYPE_UINT64,
      s.overflow_total, "movers", G_TYPE_UINT, s.movers, "tracks-confirmed", G_TYPE_UINT64,
      static_cast<guint64>(s.tracker.tracks_confirmed), "tentative-dropped", G_TYPE_UINT64,
      static_cast<guint64>(s.tracker.tentative_dropped), "confirmed-ended", G_TYPE_UINT64,
      static_cast<guint64>(s.tracker.confirmed_ended), "movers-reported", G_TYPE_UINT64,
      static_cast<guint64>(s.tracker.movers_reported), "json-lines", G_TYPE_UINT64, s.json_lines,
      "json-failures", G_TYPE_UINT64, s.json_failures, "messages", G_TYPE_UINT64, s.messages,
      nullptr);
}

static void gst_sift_detect_get_property(GObject* object, guint prop_id, GValue* value,
                                         GParamSpec* pspec) {
  GstSiftDetect* self = GST_SIFT_DETECT(object);
  const starsift::gst::ObjectLock lock(self);
  const DetectParams& p = self->settings.params;
  const TrackerParams& t = self->settings.params.link.tracker;
  switch (prop_id) {
    case PROP_BACKGROUND:
      g_value_set_enum(value, static_cast<gint>(p.background));
      break;
    case PROP_MESH:
      g_value_set_int(value, p.mesh);
      break;
    case PROP_FILTER:
      g_value_set_enum(value, static_cast<gint>(p.filter));
      break;
    case PROP_FWHM:
      g_value_set_double(value, p.fwhm);
      break;
    case PROP_THRESHOLD_MODE:
      g_value_set_enum(value, static_cast<gint>(p.threshold_mode));
      break;
    case PROP_THRESHOLD:
      g_value_set_double(value, p.threshold);
      break;
    case PROP_LINE_LENGTH:
      g_value_set_int(value, p.line_length);
      break;
    case PROP_LINE_THRESHOLD:
      g_value_set_double(value, p.line_threshold);
      break;
    case PROP_CONNECTIVITY:
      g_value_set_int(value, static_cast<int>(p.connectivity));
      break;
    case PROP_MIN_AREA:
      g_value_set_int(value, p.min_area);
      break;
    case PROP_MAX_OBJECTS:
      g_value_set_int(value, p.max_objects);
      break;
    case PROP_OUTPUT:
      g_value_set_enum(value, static_cast<gint>(p.output));
      break;
    case PROP_MERGE_STREAKS:
      g_value_set_boolean(value, self->settings.params.link.merge_streaks);
      break;
    case PROP_GATE:
      g_value_set_double(value, t.gate);
      break;
    case PROP_CONFIRM:
      g_value_set_int(value, t.confirm);
      break;
    case PROP_COAST:
      g_value_set_int(value, t.coast);
      break;
    case PROP_MIN_SPEED:
      g_value_set_double(value, t.min_speed);
      break;
    case PROP_MAX_SPEED:
      g_value_set_double(value, t.max_speed);
      break;
    case PROP_JSON_FILE:
      g_value_set_string(
          value, self->settings.json_file.empty() ? nullptr : self->settings.json_file.c_str());
      break;
    case PROP_JSON_MAX_BYTES:
      g_value_set_uint64(value, self->settings.json_max_bytes);
      break;
    case PROP_POST_MESSAGES:
      g_value_set_boolean(value, self->settings.post_messages);
      break;
    case PROP_MESSAGE_INTERVAL:
      g_value_set_uint(value, self->settings.message_interval_ms);
      break;
    case PROP_ROI_METAS:
      g_value_set_boolean(value, self->settings.roi_metas);
      break;
    case PROP_STATS:
      g_value_take_boxed(value, gst_sift_detect_stats_structure(self->stats));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
}
