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
 * valid. A new chain set while playing takes effect at the next frame (a change that leaves
 * both or neither set keeps the running chain and posts a warning); new caps reconfigure the
 * chain. The schema of a chain is described in config/README.md.
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

#include "pipeline/chain/chain_runner.hpp"
#include "pipeline/chain/chain_stages.hpp"
#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/error.hpp"
#include "plugins/common/enums.hpp"
#include "plugins/common/frame_allocator.hpp"
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

struct GstSiftChainState {
  guint64 generation = 0;                              // settings generation last looked at
  std::shared_ptr<const starsift::ChainConfig> chain;  // what runs
  // depth 1: the synchronous runner, built per backend and configured on caps. At depth >= 2
  // GstSiftTransform runs the chain's stages through the streaming engine.
  std::unique_ptr<starsift::ChainRunner> runner;
  guint64 frames = 0;  // depth 1: filtered since start
};

static void gst_sift_chain_set_property(GObject* object, guint prop_id, const GValue* value,
                                        GParamSpec* pspec);
static void gst_sift_chain_get_property(GObject* object, guint prop_id, GValue* value,
                                        GParamSpec* pspec);

#define gst_sift_chain_parent_class parent_class
G_DEFINE_TYPE(GstSiftChain, gst_sift_chain, GST_TYPE_SIFT_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE(siftchain, "siftchain", GST_RANK_NONE, GST_TYPE_SIFT_CHAIN);

/* helpers */

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
static std::string gst_sift_chain_stage_names(const starsift::ChainRunner& runner) {
  std::string names;
  for (std::size_t i = 0; i < runner.size(); ++i) {
    if (i > 0) names += ',';
    names += runner.stage(i).name();
  }
  return names;
}

// "median,median", from stages not yet handed to an engine.
static std::string gst_sift_chain_stage_names(
    const std::vector<std::unique_ptr<starsift::FilterStage>>& stages) {
  std::string names;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    if (i > 0) names += ',';
    names += stages[i]->name();
  }
  return names;
}

// Records what runs now (backend, stage names) in `stats`.
static void gst_sift_chain_publish_chain(GstSiftChain* self, const starsift::BackendChoice& choice,
                                         const std::string& stages, std::size_t stage_count) {
  const std::string backend = starsift::gst::active_backend_name(choice);
  GST_INFO_OBJECT(self, "chain %s on %s", stages.c_str(), backend.c_str());
  const starsift::gst::ObjectLock lock(self);
  self->stats.backend = backend;
  self->stats.stages = stages;
  self->stats.stage_ms.assign(stage_count, 0.0);
}

// depth 1: builds the runner for `chain` on `choice` and, once caps are known, configures it;
// the state takes both only when that succeeded. Throws starsift::Error.
static void gst_sift_chain_build_runner(GstSiftChain* self,
                                        std::shared_ptr<const starsift::ChainConfig> chain,
                                        const starsift::BackendChoice& choice) {
  GstSiftChainState& state = *self->state;
  const starsift::FrameShape* shape = starsift::gst::negotiated_shape(GST_SIFT_TRANSFORM(self));
  auto runner = starsift::make_chain_runner(*chain, choice);
  if (shape != nullptr) runner->configure(*shape);
  gst_sift_chain_publish_chain(self, choice, gst_sift_chain_stage_names(*runner), runner->size());
  state.runner = std::move(runner);
  state.chain = std::move(chain);
}

// The chain the settings name now, when it changed since the last look: exactly one of
// config/chain must be set, otherwise the running chain is kept, with a warning. Null when
// nothing new is to run.
static std::shared_ptr<const starsift::ChainConfig> gst_sift_chain_take_new_chain(
    GstSiftChain* self) {
  GstSiftChainState& state = *self->state;
  GstSiftChainSettings settings;
  {
    const starsift::gst::ObjectLock lock(self);
    if (self->settings.generation == state.generation) return nullptr;
    settings = self->settings;
  }
  state.generation = settings.generation;
  std::string problem;
  auto chain = gst_sift_chain_pick(settings, problem);
  if (!chain) {
    GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS, ("%s", problem.c_str()),
                        ("the running chain is kept"));
  }
  return chain;
}

// Before a frame: a new chain (exactly one of config/chain set) replaces the running one. A
// change that leaves both or neither set keeps the running chain, with a warning. Throws
// starsift::Error.
static void gst_sift_chain_update_chain(GstSiftChain* self) {
  if (auto chain = gst_sift_chain_take_new_chain(self)) {
    gst_sift_chain_build_runner(self, std::move(chain),
                                starsift::gst::backend_choice(GST_SIFT_TRANSFORM(self)));
  }
}

// Checks that exactly one of config/chain is set and reads the config file again, into a new
// state. Posts the problem as an element error and returns false otherwise.
static bool gst_sift_chain_load(GstSiftChain* self) {
  GstSiftChainSettings settings;
  {
    const starsift::gst::ObjectLock lock(self);
    settings = self->settings;
    self->stats = GstSiftChainStats{};
  }

  std::string problem;
  std::shared_ptr<const starsift::ChainConfig> chain = gst_sift_chain_pick(settings, problem);
  if (!chain) {
    GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS, ("%s", problem.c_str()), (nullptr));
    return false;
  }
  if (!settings.config.empty()) {
    // The file may have changed since it was set: what runs is what it says now.
    try {
      chain =
          std::make_shared<const starsift::ChainConfig>(starsift::load_chain_file(settings.config));
    } catch (...) {
      gchar* context = g_strdup_printf("loading config=%s", settings.config.c_str());
      STARSIFT_POST_CURRENT_CONFIG_EXCEPTION(self, context);
      g_free(context);
      return false;
    }
  }
  delete self->state;
  self->state = new GstSiftChainState();
  self->state->generation = settings.generation;
  self->state->chain = std::move(chain);
  return true;
}

/* GstBaseTransform vfuncs */

// Loads the chain, then lets GstSiftTransform choose the backend (which builds the runner).
static gboolean gst_sift_chain_start(GstBaseTransform* trans) {
  GstSiftChain* self = GST_SIFT_CHAIN(trans);
  try {
    if (!gst_sift_chain_load(self)) return FALSE;
  } catch (...) {
    STARSIFT_POST_CURRENT_EXCEPTION(self, "starting");
    return FALSE;
  }
  if (!GST_BASE_TRANSFORM_CLASS(parent_class)->start(trans)) {
    delete self->state;
    self->state = nullptr;
    return FALSE;
  }
  return TRUE;
}

/* GstSiftTransform hooks */

// depth 1: a runner for the new backend (at depth >= 2 build_stages() serves the engine).
static void gst_sift_chain_set_backend(GstSiftTransform* trans,
                                       const starsift::BackendChoice& choice) {
  GstSiftChain* self = GST_SIFT_CHAIN(trans);
  if (starsift::gst::streaming_depth(trans) > 1) return;
  gst_sift_chain_build_runner(self, self->state->chain, choice);
}

static void gst_sift_chain_configure(GstSiftTransform* trans, const starsift::FrameShape& shape) {
  GST_SIFT_CHAIN(trans)->state->runner->configure(shape);
}

static void gst_sift_chain_filter(GstSiftTransform* trans, starsift::ConstImageView in,
                                  starsift::ImageView out) {
  GstSiftChain* self = GST_SIFT_CHAIN(trans);
  gst_sift_chain_update_chain(self);
  GstSiftChainState& state = *self->state;
  state.runner->process(in, out);
  ++state.frames;

  const starsift::ChainStats& stats = state.runner->stats();
  GST_OBJECT_LOCK(self);
  self->stats.frames = state.frames;
  self->stats.stage_ms = stats.stage_ms_last;  // same length: no allocation
  self->stats.upload_ms = stats.upload_ms_last;
  self->stats.download_ms = stats.download_ms_last;
  GST_OBJECT_UNLOCK(self);
}

// depth >= 2: the stages of the chain the settings name now (a new valid chain replaces the
// running one; otherwise the running one is kept, with a warning).
static std::vector<std::unique_ptr<starsift::FilterStage>> gst_sift_chain_build_stages(
    GstSiftTransform* trans, const starsift::BackendChoice& choice) {
  GstSiftChain* self = GST_SIFT_CHAIN(trans);
  GstSiftChainState& state = *self->state;
  if (auto chain = gst_sift_chain_take_new_chain(self)) state.chain = std::move(chain);
  auto stages = starsift::build_chain_stages(*state.chain, choice);
  gst_sift_chain_publish_chain(self, choice, gst_sift_chain_stage_names(stages), stages.size());
  return stages;
}

static guint64 gst_sift_chain_stages_generation(GstSiftTransform* trans) {
  GstSiftChain* self = GST_SIFT_CHAIN(trans);
  const starsift::gst::ObjectLock lock(self);
  return self->settings.generation;
}

static void gst_sift_chain_reset(GstSiftTransform* trans) {
  GstSiftChain* self = GST_SIFT_CHAIN(trans);
  delete self->state;
  self->state = nullptr;
}

/* GObject vfuncs */

static void gst_sift_chain_finalize(GObject* object) {
  GstSiftChain* self = GST_SIFT_CHAIN(object);
  gst_sift_chain_reset(GST_SIFT_TRANSFORM(self));
  self->settings.~GstSiftChainSettings();
  self->stats.~GstSiftChainStats();
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
      "the GPU, 0 on the CPU), depth (int), in-flight (int: frames "
      "taken in, not yet pushed out), dropped (guint64: frames in flight that a flush, stop or "
      "failed push discarded), zero-copy and copied (guint64: inputs the engine took without "
      "a copy or copied once; depth >= 2), direct-out (guint64: results the engine wrote straight "
      "into the output buffer, page-locked, without a copy; depth >= 2), qos-dropped (guint64: "
      "inputs dropped by QoS as too late). Reset at start, kept after stop",
      GST_TYPE_STRUCTURE, static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_properties(gobject_class, N_PROPERTIES, properties);

  gst_element_class_set_static_metadata(element_class, "Filter chain", "Filter/Effect/Video",
                                        "A YAML chain of starsift filters in one pass (CUDA: one "
                                        "upload, one download; or the CPU)",
                                        "starsift");

  sift_class->set_backend = GST_DEBUG_FUNCPTR(gst_sift_chain_set_backend);
  sift_class->configure = GST_DEBUG_FUNCPTR(gst_sift_chain_configure);
  sift_class->filter = GST_DEBUG_FUNCPTR(gst_sift_chain_filter);
  sift_class->reset = GST_DEBUG_FUNCPTR(gst_sift_chain_reset);
  sift_class->build_stages = GST_DEBUG_FUNCPTR(gst_sift_chain_build_stages);
  sift_class->stages_generation = GST_DEBUG_FUNCPTR(gst_sift_chain_stages_generation);
  // Checks the config/chain properties, then chains up to GstSiftTransform's start.
  trans_class->start = GST_DEBUG_FUNCPTR(gst_sift_chain_start);
}

static void gst_sift_chain_init(GstSiftChain* self) {
  new (&self->stats) GstSiftChainStats();
  new (&self->settings) GstSiftChainSettings();
  self->state = nullptr;
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
      }
    } catch (const std::exception& e) {
      starsift::gst::warn_refused_value(G_OBJECT(self), GST_CAT_DEFAULT, pspec, e.what());
      refused = std::string(pspec->name) + "=" + text + " was refused: " + e.what();
    }

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

// The stats property's structure: what the chain reports itself (depth 1) or what the
// streaming engine reports (depth >= 2). GLib allocations only: safe under the object lock.
static GstStructure* gst_sift_chain_stats_structure(
    const GstSiftChainStats& stats, const std::optional<starsift::gst::StreamSnapshot>& stream,
    guint64 qos_dropped) {
  const starsift::StreamingCounters none;
  const starsift::StreamingCounters& c = stream ? stream->counters : none;
  const std::vector<double>& stage_ms =
      stream && c.stage_ms_last.size() == stats.stage_ms.size() ? c.stage_ms_last : stats.stage_ms;
  GstStructure* structure = gst_structure_new(
      "siftchain-stats", "frames", G_TYPE_UINT64, stream ? stream->frames_out : stats.frames,
      "backend", G_TYPE_STRING, stats.backend.c_str(), "stages", G_TYPE_STRING,
      stats.stages.c_str(), "upload-ms", G_TYPE_DOUBLE, stream ? c.upload_ms_last : stats.upload_ms,
      "download-ms", G_TYPE_DOUBLE, stream ? c.download_ms_last : stats.download_ms, "depth",
      G_TYPE_INT, stream ? stream->depth : 1, "in-flight", G_TYPE_INT,
      stream ? stream->in_flight : 0, "dropped", G_TYPE_UINT64, static_cast<guint64>(c.dropped),
      "zero-copy", G_TYPE_UINT64, static_cast<guint64>(c.zero_copy), "copied", G_TYPE_UINT64,
      static_cast<guint64>(c.copied), "direct-out", G_TYPE_UINT64,
      static_cast<guint64>(c.held_outputs), "qos-dropped", G_TYPE_UINT64, qos_dropped, nullptr);
  GValue stage_ms_array = G_VALUE_INIT;
  g_value_init(&stage_ms_array, GST_TYPE_ARRAY);
  for (const double ms : stage_ms) {
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
      g_value_take_boxed(value, gst_sift_chain_stats_structure(self->stats, stream, qos_dropped));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK(self);
}
