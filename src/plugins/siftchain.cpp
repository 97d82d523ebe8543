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

#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "pipeline/chain/chain_runner.hpp"
#include "pipeline/chain/chain_stages.hpp"
#include "pipeline/error.hpp"
#include "plugins/common/enums.hpp"
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
  std::shared_ptr<const starsift::ChainConfig> chain;  // what `runner` runs
  std::unique_ptr<starsift::ChainRunner> runner;       // built per backend, configured on caps
  guint64 frames = 0;                                  // filtered since start
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

// Builds the runner for `chain` on `choice` and, once caps are known, configures it; the state
// takes both only when that succeeded. Throws starsift::Error.
static void gst_sift_chain_build_runner(GstSiftChain* self,
                                        std::shared_ptr<const starsift::ChainConfig> chain,
                                        const starsift::BackendChoice& choice) {
  auto runner = starsift::make_chain_runner(*chain, choice);
  if (const starsift::FrameShape* shape =
          starsift::gst::negotiated_shape(GST_SIFT_TRANSFORM(self))) {
    runner->configure(*shape);
  }
  const std::string stages = gst_sift_chain_stage_names(*runner);
  const std::string backend = starsift::gst::active_backend_name(choice);
  GST_INFO_OBJECT(self, "chain %s on %s", stages.c_str(), backend.c_str());

  GstSiftChainState& state = *self->state;
  state.runner = std::move(runner);
  state.chain = std::move(chain);
  const starsift::gst::ObjectLock lock(self);
  self->stats.backend = backend;
  self->stats.stages = stages;
  self->stats.stage_ms.assign(state.runner->size(), 0.0);
}

// Before a frame: a new chain (exactly one of config/chain set) replaces the running one. A
// change that leaves both or neither set keeps the running chain, with a warning. Throws
// starsift::Error.
static void gst_sift_chain_update_chain(GstSiftChain* self) {
  GstSiftChainState& state = *self->state;
  GstSiftChainSettings settings;
  {
    const starsift::gst::ObjectLock lock(self);
    if (self->settings.generation == state.generation) return;
    settings = self->settings;
  }

  std::string problem;
  if (auto chain = gst_sift_chain_pick(settings, problem)) {
    gst_sift_chain_build_runner(self, std::move(chain),
                                starsift::gst::backend_choice(GST_SIFT_TRANSFORM(self)));
  } else {
    GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS, ("%s", problem.c_str()),
                        ("the running chain is kept"));
  }
  state.generation = settings.generation;
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
  self->state = new GstSiftChainState{settings.generation, std::move(chain), nullptr, 0};
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

static void gst_sift_chain_set_backend(GstSiftTransform* trans,
                                       const starsift::BackendChoice& choice) {
  GstSiftChain* self = GST_SIFT_CHAIN(trans);
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
      "the GPU, 0 on the CPU). Reset at start, kept after stop",
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

// The stats property's structure (GLib allocations only: safe under the object lock).
static GstStructure* gst_sift_chain_stats_structure(const GstSiftChainStats& stats) {
  GstStructure* structure = gst_structure_new(
      "siftchain-stats", "frames", G_TYPE_UINT64, stats.frames, "backend", G_TYPE_STRING,
      stats.backend.c_str(), "stages", G_TYPE_STRING, stats.stages.c_str(), "upload-ms",
      G_TYPE_DOUBLE, stats.upload_ms, "download-ms", G_TYPE_DOUBLE, stats.download_ms, nullptr);
  GValue stage_ms = G_VALUE_INIT;
  g_value_init(&stage_ms, GST_TYPE_ARRAY);
  for (const double ms : stats.stage_ms) {
    GValue item = G_VALUE_INIT;
    g_value_init(&item, G_TYPE_DOUBLE);
    g_value_set_double(&item, ms);
    gst_value_array_append_and_take_value(&stage_ms, &item);
  }
  gst_structure_take_value(structure, "stage-ms", &stage_ms);
  return structure;
}

static void gst_sift_chain_get_property(GObject* object, guint prop_id, GValue* value,
                                        GParamSpec* pspec) {
  GstSiftChain* self = GST_SIFT_CHAIN(object);

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
      g_value_take_boxed(value, gst_sift_chain_stats_structure(self->stats));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK(self);
}
