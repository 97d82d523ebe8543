// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * SECTION:element-siftchain
 * @title: siftchain
 *
 * Runs a whole chain of starsift filters, written in YAML, over every frame in one pass. On
 * CUDA the frame is uploaded once, every stage reads and writes device memory, and the result
 * is downloaded once; on the CPU the stages run one after the other through two scratch frames.
 * Both backends give bit-identical results.
 *
 * The chain comes from exactly one of #GstSiftChain:config (a YAML file, read again at every
 * start) or #GstSiftChain:chain (the YAML itself, usually in flow style). Either is parsed and
 * validated when it is set: a value with a mistake is refused with a warning that names the
 * place (file:line:column), the key and what is allowed, and the property keeps its previous
 * value. The element does not start unless exactly one of the two is set and the chain is
 * valid. A new chain set while playing takes effect at the next frame, compared stage by stage
 * with the running one: new parameters of a stage apply live (a median's size, whitening's
 * gamma) or restart that stage's state (whitening's history), a stage of another filter
 * replaces its predecessor, all without waiting for the frames in flight; a chain of another
 * length or output format is built anew after them (and renegotiates the caps). A change that
 * leaves both or neither set, or a chain that does not fit the negotiated format, keeps the
 * running chain and posts a warning. The schema of a chain is described in config/README.md.
 *
 * Caps follow the chain: the element offers the formats its first stage reads whose output a
 * GStreamer buffer can carry, and writes what the chain writes for them. A chain whose output
 * is GRAY32F (whiten: output: snr) is refused at start with the stage that writes it; inside
 * the chain, float frames between stages are fine. Each stage that hands back a per-frame
 * result (whiten's stats) adds it to the output buffer as a GstSiftResultMeta. A chain whose
 * last detecting stage is `detect` is followed by siftdetect's host steps: the pieces of each
 * streak merged into one record and the records linked into tracks (the stage's
 * `merge-streaks`, `gate`, `confirm`, `coast`, `min-speed`, `max-speed`), so its catalogue meta
 * carries the merged records with their track ids and a "tracks" meta follows it; detect's
 * labels are renumbered to match and its overlay shows the movers' tails, as siftdetect's do.
 *
 * #GstSiftChain:stats reports the frames filtered and each stage's time on the last frame.
 *
 * With #GstSiftChain:depth D >= 2, D frames are in flight at once through the streaming engine
 * (on CUDA one frame's upload, the previous one's kernels and the one before's download
 * overlap): the output lags D - 1 frames behind the input, which the LATENCY query reports,
 * and keeps the input's order and timestamps. EOS, new caps and every other serialized event
 * first push the frames in flight downstream; a flush drops them, counted in the stats.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=GRAY16_LE,width=1024,height=1024 ! \
 *     siftchain chain="[{median: {size: 3}}, {median: {size: 5}}]" ! fakesink
 * ]| A 3x3 median, then a 5x5 median.
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=GRAY16_LE,width=1024,height=1024 ! \
 *     siftchain config=/etc/starsift/chain.yaml ! fakesink
 * ]| The chain written in /etc/starsift/chain.yaml.
 */

#include "plugins/siftchain.hpp"

#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "pipeline/chain/chain_config.hpp"
#include "pipeline/chain/chain_stages.hpp"
#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/error.hpp"
#include "plugins/common/enums.hpp"
#include "plugins/common/frame_allocator.hpp"
#include "plugins/common/linked_detections.hpp"
#include "plugins/common/video.hpp"

GST_DEBUG_CATEGORY_STATIC(gst_sift_chain_debug);
#define GST_CAT_DEFAULT gst_sift_chain_debug

#define DEFAULT_PROP_CONFIG nullptr
#define DEFAULT_PROP_CHAIN nullptr

// How the `chain` property's text is named in parser messages.
#define CHAIN_PROPERTY_ORIGIN "chain property"

// backend, device-id and active-backend: GstSiftTransform's.
enum { PROP_0, PROP_CONFIG, PROP_CHAIN, PROP_STATS, N_PROPERTIES };

static GParamSpec* properties[N_PROPERTIES];

static void gst_sift_chain_set_property(GObject* object, guint prop_id, const GValue* value,
                                        GParamSpec* pspec);
static void gst_sift_chain_get_property(GObject* object, guint prop_id, GValue* value,
                                        GParamSpec* pspec);

#define gst_sift_chain_parent_class parent_class
G_DEFINE_TYPE(GstSiftChain, gst_sift_chain, GST_TYPE_SIFT_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE(siftchain, "siftchain", GST_RANK_NONE, GST_TYPE_SIFT_CHAIN);

/* helpers */

// Merges and tracks the frame's catalogue (from the chain's detect stage) and puts the result
// on the buffer: the catalogue meta's records and track ids, a tracks meta, and on a frame
// detection wrote (the last stage) the labels renumbered or the overlay's tails drawn.
// Returns the movers of the frame.
static guint gst_sift_chain_link(GstSiftChain* self, GstBuffer* buffer,
                                 const starsift::FinishedFrame& frame,
                                 const starsift::ChainConfig& chain) {
  const starsift::FrameResult* catalogue = starsift::gst::frame_catalogue(frame);
  if (catalogue == nullptr || catalogue->stage >= chain.stages.size()) return 0;
  const auto* params = std::get_if<starsift::DetectParams>(&chain.stages[catalogue->stage].params);
  if (params == nullptr) return 0;
  starsift::gst::LinkedDetections* linked = self->linked;
  // A new linker only when its tracker or the capacity change; the merge's switch and rule
  // apply live, as in siftdetect.
  if (linked == nullptr || !linked->fits(*params)) {
    delete self->linked;
    self->linked = nullptr;
    try {
      self->linked = linked = new starsift::gst::LinkedDetections(*params);
    } catch (const std::exception& e) {
      GST_WARNING_OBJECT(self, "linking the catalogue: %s", e.what());
      return 0;
    }
  }
  // The frame is detection's own when detect is the chain's last stage.
  const bool last_stage = catalogue->stage + 1 == chain.stages.size();
  linked->publish(GST_ELEMENT(self), buffer, frame, *catalogue, params->link,
                  last_stage ? std::optional(params->output) : std::nullopt);
  return static_cast<guint>(linked->linker.tracks().size());
}

// The chain the settings name when exactly one of config/chain is set; otherwise null, with
// the problem in `problem`.
static std::shared_ptr<const starsift::ChainConfig> gst_sift_chain_pick(
    const GstSiftChainSettings& settings, std::string& problem) {
  const bool have_config = !settings.config.empty();
  const bool have_chain = !settings.chain.empty();
  if (have_config && have_chain) {
    problem = "both config (" + settings.config +
              ") and chain are set; set exactly one of them (the other to an empty string)";
    return nullptr;
  }
  if (!have_config && !have_chain) {
    problem =
        "neither config nor chain is set; set exactly one of them: config=<YAML file> or "
        "chain=<inline YAML>";
    if (!settings.refused.empty()) problem += " (" + settings.refused + ")";
    return nullptr;
  }
  return have_config ? settings.config_parsed : settings.chain_parsed;
}

// "median,median"
static std::string gst_sift_chain_stage_names(const starsift::ChainConfig& chain) {
  std::string names;
  for (std::size_t i = 0; i < chain.stages.size(); ++i) {
    if (i > 0) names += ',';
    names += chain.stages[i].filter;
  }
  return names;
}

/* GstSiftTransform hooks */

// The chain the settings name: exactly one of config/chain must be set. Throws
// starsift::Error.
static std::shared_ptr<const starsift::ChainConfig> gst_sift_chain_describe_chain(
    GstSiftTransform* trans, gboolean) {
  GstSiftChain* self = GST_SIFT_CHAIN(trans);
  GstSiftChainSettings settings;
  {
    const starsift::gst::ObjectLock lock(self);
    settings = self->settings;
  }
  std::string problem;
  std::shared_ptr<const starsift::ChainConfig> chain = gst_sift_chain_pick(settings, problem);
  if (!chain) throw starsift::Error(problem);
  return chain;
}

// A chain ending in detect: the catalogue merged and tracked. Then records what ran the frame
// (backend, stage names) for the stats, when it changed.
static void gst_sift_chain_frame_out(GstSiftTransform* trans, GstBuffer* buffer,
                                     const starsift::FinishedFrame& frame) {
  GstSiftChain* self = GST_SIFT_CHAIN(trans);
  const auto chain = starsift::gst::running_chain(trans);
  if (!chain) return;
  const guint movers = gst_sift_chain_link(self, buffer, frame, *chain);
  const std::string backend = starsift::gst::active_backend(trans);
  const starsift::gst::ObjectLock lock(self);
  self->movers = movers;
  if (self->last_backend != backend) self->last_backend = backend;
  if (chain != self->last_chain) {
    self->last_stages = gst_sift_chain_stage_names(*chain);
    self->last_chain = chain;
  }
}

/* GstBaseTransform vfuncs */

// The stats start over and a config file is read again (what runs is what it says now), then
// GstSiftTransform starts.
static gboolean gst_sift_chain_start(GstBaseTransform* trans) {
  GstSiftChain* self = GST_SIFT_CHAIN(trans);
  std::string path;
  {
    const starsift::gst::ObjectLock lock(self);
    path = self->settings.config;
  }
  if (!path.empty()) {
    try {
      auto chain = std::make_shared<const starsift::ChainConfig>(starsift::load_chain_file(path));
      const starsift::gst::ObjectLock lock(self);
      if (self->settings.config == path) self->settings.config_parsed = std::move(chain);
    } catch (...) {
      gchar* context = g_strdup_printf(
          "loading config=%s", starsift::shown_value(path, starsift::kMaxShownPathBytes).c_str());
      STARSIFT_POST_CURRENT_CONFIG_EXCEPTION(self, context);
      g_free(context);
      return FALSE;
    }
  }
  {
    const starsift::gst::ObjectLock lock(self);
    self->last_backend.clear();
    self->last_stages.clear();
    self->last_chain.reset();
    self->movers = 0;
  }
  delete self->linked;  // tracks start over with every start
  self->linked = nullptr;
  return GST_BASE_TRANSFORM_CLASS(parent_class)->start(trans);
}

// A flush (a seek) breaks the frames' continuity: tracks start over.
static gboolean gst_sift_chain_sink_event(GstBaseTransform* trans, GstEvent* event) {
  GstSiftChain* self = GST_SIFT_CHAIN(trans);
  if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP && self->linked != nullptr) {
    self->linked->linker.reset();
  }
  return GST_BASE_TRANSFORM_CLASS(parent_class)->sink_event(trans, event);
}

/* GObject vfuncs */

static void gst_sift_chain_finalize(GObject* object) {
  GstSiftChain* self = GST_SIFT_CHAIN(object);
  delete self->linked;
  self->settings.~GstSiftChainSettings();
  self->last_backend.~basic_string<char>();
  self->last_stages.~basic_string<char>();
  self->last_chain.~shared_ptr();
  G_OBJECT_CLASS(parent_class)->finalize(object);
}

static void gst_sift_chain_class_init(GstSiftChainClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass* trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  GstSiftTransformClass* sift_class = GST_SIFT_TRANSFORM_CLASS(klass);

  GST_DEBUG_CATEGORY_INIT(gst_sift_chain_debug, "siftchain", 0, "starsift filter chain");

  gobject_class->set_property = gst_sift_chain_set_property;
  gobject_class->get_property = gst_sift_chain_get_property;
  gobject_class->finalize = gst_sift_chain_finalize;

  const auto mutable_playing = static_cast<GParamFlags>(
      G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING | G_PARAM_STATIC_STRINGS);
  properties[PROP_CONFIG] = g_param_spec_string(
      "config", "Config file",
      "Path of a YAML chain file (schema: config/README.md), parsed when set and read again at "
      "every start; a file that does not parse is refused. Set this or chain, not both. A "
      "change takes effect at the next frame",
      DEFAULT_PROP_CONFIG, mutable_playing);
  properties[PROP_CHAIN] = g_param_spec_string(
      "chain", "Chain",
      "The chain as inline YAML, e.g. \"[{median: {size: 3}}, {median: {size: 5}}]\", parsed "
      "when set; a chain that does not parse is refused. Set this or config, not both. A "
      "change takes effect at the next frame",
      DEFAULT_PROP_CHAIN, mutable_playing);
  properties[PROP_STATS] = g_param_spec_boxed(
      "stats", "Statistics",
      "siftchain-stats: frames (guint64, filtered since start), backend (string), stages "
      "(string, comma-separated names), stage-ms (array of doubles: each stage's time on the "
      "last frame), upload-ms and download-ms (doubles: the last frame's copies to and from "
      "the GPU, 0 on the CPU; timed on one frame in 16), depth (int), in-flight (int: frames "
      "taken in, not yet pushed out), dropped (guint64: frames in flight that a flush, stop or "
      "failed push discarded), zero-copy and copied (guint64: inputs the engine took without "
      "a copy or copied once), direct-out (guint64: results the engine wrote straight into the "
      "output buffer, page-locked, without a copy), qos-dropped (guint64: inputs dropped by QoS "
      "as too late), live-updates and stages-replaced (guint64: parameter changes and new "
      "stages taken in between two frames, without a drain), movers (guint: tracks reported in the "
      "last frame by a chain ending in detect). Reset at start, kept after stop",
      GST_TYPE_STRUCTURE, static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_properties(gobject_class, N_PROPERTIES, properties);

  gst_element_class_set_static_metadata(element_class, "Filter chain", "Filter/Effect/Video",
                                        "A YAML chain of starsift filters in one pass (CUDA: one "
                                        "upload, one download; or the CPU)",
                                        "starsift");

  sift_class->describe_chain = GST_DEBUG_FUNCPTR(gst_sift_chain_describe_chain);
  sift_class->frame_out = GST_DEBUG_FUNCPTR(gst_sift_chain_frame_out);
  trans_class->start = GST_DEBUG_FUNCPTR(gst_sift_chain_start);
  trans_class->sink_event = GST_DEBUG_FUNCPTR(gst_sift_chain_sink_event);
}

static void gst_sift_chain_init(GstSiftChain* self) {
  new (&self->settings) GstSiftChainSettings();
  new (&self->last_backend) std::string();
  new (&self->last_stages) std::string();
  new (&self->last_chain) std::shared_ptr<const starsift::ChainConfig>();
}

// Parses a new config (a file path) or chain (inline YAML) value and stores it with what it
// parsed to; an empty or NULL value unsets the property. A value that does not parse is
// refused with a warning carrying the parser's message, leaves the settings unchanged and is
// remembered for start()'s message. Never throws.
static void gst_sift_chain_set_source(GstSiftChain* self, GParamSpec* pspec,
                                      const gchar* value) noexcept {
  const bool is_config = pspec == properties[PROP_CONFIG];
  try {
    std::string text = value != nullptr ? value : "";
    std::shared_ptr<const starsift::ChainConfig> parsed;
    std::string refused;
    try {
      if (!text.empty()) {
        parsed = std::make_shared<const starsift::ChainConfig>(
            is_config ? starsift::load_chain_file(text)
                      : starsift::parse_chain_yaml(text, CHAIN_PROPERTY_ORIGIN));
        // While playing, the chain must also fit the frames that flow (a border value the
        // format holds, a format every stage reads).
        if (const auto shape = starsift::gst::negotiated_input(GST_SIFT_TRANSFORM(self))) {
          starsift::chain_shapes(*parsed, *shape);
        }
      }
    } catch (const std::exception& e) {
      starsift::gst::warn_refused_value(G_OBJECT(self), GST_CAT_DEFAULT, pspec, e.what());
      refused = std::string(pspec->name) + "=" + starsift::shown_value(text) +
                " was refused: " + e.what();
    }

    {
      const starsift::gst::ObjectLock lock(self);
      if (!refused.empty()) {
        self->settings.refused = std::move(refused);
        return;
      }
      GST_DEBUG_OBJECT(self, "%s=%s: %zu stages", pspec->name, text.c_str(),
                       parsed ? parsed->stages.size() : std::size_t{0});
      (is_config ? self->settings.config : self->settings.chain) = std::move(text);
      (is_config ? self->settings.config_parsed : self->settings.chain_parsed) = std::move(parsed);
      self->settings.refused.clear();
      ++self->settings.generation;
    }
    starsift::gst::chain_changed(GST_SIFT_TRANSFORM(self));
  } catch (const std::exception& e) {  // out of memory copying the value
    starsift::gst::warn_refused_value(G_OBJECT(self), GST_CAT_DEFAULT, pspec, e.what());
  }
}

static void gst_sift_chain_set_property(GObject* object, guint prop_id, const GValue* value,
                                        GParamSpec* pspec) {
  GstSiftChain* self = GST_SIFT_CHAIN(object);

  switch (prop_id) {
    case PROP_CONFIG:
    case PROP_CHAIN:
      gst_sift_chain_set_source(self, pspec, g_value_get_string(value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
}

// The stats property's structure, from the engine's counters and what ran last. GLib
// allocations only: safe under the object lock.
static GstStructure* gst_sift_chain_stats_structure(
    const GstSiftChain* self, const std::optional<starsift::gst::StreamSnapshot>& stream,
    guint64 qos_dropped) {
  const starsift::StreamingCounters none;
  const starsift::StreamingCounters& c = stream ? stream->counters : none;
  GstStructure* structure = gst_structure_new(
      "siftchain-stats", "frames", G_TYPE_UINT64, stream ? stream->frames_out : guint64{0},
      "backend", G_TYPE_STRING, self->last_backend.c_str(), "stages", G_TYPE_STRING,
      self->last_stages.c_str(), "upload-ms", G_TYPE_DOUBLE, c.upload_ms_last, "download-ms",
      G_TYPE_DOUBLE, c.download_ms_last, "depth", G_TYPE_INT, stream ? stream->depth : 1,
      "in-flight", G_TYPE_INT, stream ? stream->in_flight : 0, "dropped", G_TYPE_UINT64,
      static_cast<guint64>(c.dropped), "zero-copy", G_TYPE_UINT64,
      static_cast<guint64>(c.zero_copy), "copied", G_TYPE_UINT64, static_cast<guint64>(c.copied),
      "direct-out", G_TYPE_UINT64, static_cast<guint64>(c.held_outputs), "qos-dropped",
      G_TYPE_UINT64, qos_dropped, "live-updates", G_TYPE_UINT64,
      static_cast<guint64>(c.live_updates), "stages-replaced", G_TYPE_UINT64,
      static_cast<guint64>(c.stage_replaced), "movers", G_TYPE_UINT, self->movers, nullptr);
  GValue stage_ms_array = G_VALUE_INIT;
  g_value_init(&stage_ms_array, GST_TYPE_ARRAY);
  for (const double ms : c.stage_ms_last) {
    GValue item = G_VALUE_INIT;
    g_value_init(&item, G_TYPE_DOUBLE);
    g_value_set_double(&item, ms);
    gst_value_array_append_and_take_value(&stage_ms_array, &item);
  }
  gst_structure_take_value(structure, "stage-ms", &stage_ms_array);
  return structure;
}

static void gst_sift_chain_get_property(GObject* object, guint prop_id, GValue* value,
                                        GParamSpec* pspec) {
  GstSiftChain* self = GST_SIFT_CHAIN(object);
  // The engine's side of the stats is read first: it takes the object lock itself.
  std::optional<starsift::gst::StreamSnapshot> stream;
  guint64 qos_dropped = 0;
  if (prop_id == PROP_STATS) {
    stream = starsift::gst::stream_snapshot(GST_SIFT_TRANSFORM(self));
    qos_dropped = starsift::gst::qos_dropped(GST_SIFT_TRANSFORM(self));
  }

  GST_OBJECT_LOCK(self);
  switch (prop_id) {
    case PROP_CONFIG:
      g_value_set_string(value,
                         self->settings.config.empty() ? nullptr : self->settings.config.c_str());
      break;
    case PROP_CHAIN:
      g_value_set_string(value,
                         self->settings.chain.empty() ? nullptr : self->settings.chain.c_str());
      break;
    case PROP_STATS:
      g_value_take_boxed(value, gst_sift_chain_stats_structure(self, stream, qos_dropped));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK(self);
}
