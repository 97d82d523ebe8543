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
#define DEFAULT_PROP_DEPTH 1

// How the `chain` property's text is named in parser messages.
#define CHAIN_PROPERTY_ORIGIN "chain property"

// backend, device-id and active-backend: GstSiftTransform's.
enum { PROP_0, PROP_CONFIG, PROP_CHAIN, PROP_DEPTH, PROP_STATS, N_PROPERTIES };

static GParamSpec* properties[N_PROPERTIES];

// A frame in flight at depth >= 2: its output buffer (from the element's pool, with the input's
// timestamps, flags and metas already copied), mapped while the engine may write into it, and
// the input buffer only when the engine reads it in place.
struct GstSiftChainPending {
  GstBuffer* out = nullptr;
  std::unique_ptr<starsift::gst::MappedFrame> out_map;
  GstBuffer* in = nullptr;  // held for an in-place (page-locked) input, else null
  std::unique_ptr<starsift::gst::MappedFrame> in_map;

  GstSiftChainPending() = default;
  GstSiftChainPending(GstSiftChainPending&& o) noexcept
      : out(std::exchange(o.out, nullptr)),
        out_map(std::move(o.out_map)),
        in(std::exchange(o.in, nullptr)),
        in_map(std::move(o.in_map)) {}
  GstSiftChainPending& operator=(GstSiftChainPending&&) = delete;
  ~GstSiftChainPending() {
    out_map.reset();  // unmap before the unref
    in_map.reset();
    if (out != nullptr) gst_buffer_unref(out);
    if (in != nullptr) gst_buffer_unref(in);
  }
  // Hands the output buffer over (unmapped) and releases the input.
  GstBuffer* take_output() {
    out_map.reset();
    in_map.reset();
    if (in != nullptr) gst_buffer_unref(std::exchange(in, nullptr));
    return std::exchange(out, nullptr);
  }
};

struct GstSiftChainState {
  guint64 generation = 0;                              // settings generation last looked at
  std::shared_ptr<const starsift::ChainConfig> chain;  // what `runner` or `engine` runs
  int depth = 1;                                       // `depth` at start
  // depth 1: the synchronous runner; depth >= 2: the streaming engine. Built per backend,
  // configured on caps.
  std::unique_ptr<starsift::ChainRunner> runner;
  std::unique_ptr<starsift::StreamingChain> engine;
  std::optional<starsift::FrameShape> shape;  // what `engine` is configured for
  // depth >= 2: the frames in flight, oldest first.
  std::deque<GstSiftChainPending> pending;
  starsift::StreamingCounters past;        // counters of the engines already replaced
  GstFlowReturn drain_flow = GST_FLOW_OK;  // the last drain's push, before a new engine
  guint64 frames = 0;                      // filtered since start
  guint64 next_tag = 0;                    // tag of the next submitted frame
  guint64 qos_dropped = 0;                 // inputs QoS dropped as too late, since start

  GstSiftChainState() = default;
  GstSiftChainState(const GstSiftChainState&) = delete;
  GstSiftChainState& operator=(const GstSiftChainState&) = delete;
  ~GstSiftChainState() { clear_pending(); }

  void clear_pending() noexcept { pending.clear(); }
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

// Publishes the frame and engine counters in `stats` (the object lock is taken here).
static void gst_sift_chain_publish_counters(GstSiftChain* self) {
  const GstSiftChainState& state = *self->state;
  starsift::StreamingCounters counters = state.past;
  int in_flight = 0;
  if (state.engine) {
    const starsift::StreamingCounters& now = state.engine->counters();
    counters.dropped += now.dropped;
    counters.zero_copy += now.zero_copy;
    counters.copied += now.copied;
    counters.held_outputs += now.held_outputs;
    in_flight = state.engine->in_flight();
  }
  GST_OBJECT_LOCK(self);
  if (state.engine &&
      self->stats.stage_ms.size() == state.engine->counters().stage_ms_last.size()) {
    // Same length: no allocation under the lock.
    self->stats.stage_ms = state.engine->counters().stage_ms_last;
    self->stats.upload_ms = state.engine->counters().upload_ms_last;
    self->stats.download_ms = state.engine->counters().download_ms_last;
  }
  self->stats.frames = state.frames;
  self->stats.in_flight = in_flight;
  self->stats.dropped = counters.dropped;
  self->stats.zero_copy = counters.zero_copy;
  self->stats.copied = counters.copied;
  self->stats.qos_dropped = state.qos_dropped;
  self->stats.held_outputs = counters.held_outputs;
  GST_OBJECT_UNLOCK(self);
}

// depth >= 2: discards every frame in flight (counted as dropped) with its input buffer.
static void gst_sift_chain_discard(GstSiftChain* self) noexcept {
  GstSiftChainState* state = self->state;
  if (state == nullptr || !state->engine) return;
  const int in_flight = state->engine->in_flight();
  try {
    state->engine->reset();
  } catch (const std::exception& e) {
    GST_WARNING_OBJECT(self, "discarding the frames in flight: %s", e.what());
  }
  state->clear_pending();
  if (in_flight > 0) GST_DEBUG_OBJECT(self, "dropped %d frames in flight", in_flight);
  gst_sift_chain_publish_counters(self);
}

// depth >= 2: waits for the oldest frame in flight and hands out its output buffer. The
// engine wrote the result straight into it when it is page-locked; otherwise the result is
// copied from the engine's slot here.
static GstFlowReturn gst_sift_chain_finish_oldest(GstSiftChain* self, GstBuffer** outbuf) {
  GstSiftChainState& state = *self->state;
  *outbuf = nullptr;
  try {
    const starsift::FinishedFrame done = state.engine->wait_oldest();
    GstSiftChainPending& frame = state.pending.front();
    const starsift::ImageView to = frame.out_map->view(done.output.format);
    if (to.data != done.output.data) {
      for (int y = 0; y < to.height; ++y) {
        std::memcpy(to.row(y), done.output.row(y), done.output.row_bytes());
      }
    }
    state.engine->pop();
    *outbuf = frame.take_output();
    state.pending.pop_front();
    ++state.frames;
    gst_sift_chain_publish_counters(self);
    return GST_FLOW_OK;
  } catch (...) {
    STARSIFT_POST_CURRENT_EXCEPTION(self, "filtering a frame");
    return GST_FLOW_ERROR;
  }
}

// depth >= 2: pushes every frame in flight downstream, oldest first. When a push fails the
// rest are discarded (counted as dropped) and its flow returned.
static GstFlowReturn gst_sift_chain_drain(GstSiftChain* self) {
  GstSiftChainState* state = self->state;
  if (state == nullptr || !state->engine) return GST_FLOW_OK;
  GstFlowReturn ret = GST_FLOW_OK;
  while (state->engine->in_flight() > 0) {
    GstBuffer* outbuf = nullptr;
    ret = gst_sift_chain_finish_oldest(self, &outbuf);
    if (ret != GST_FLOW_OK) break;
    ret = gst_pad_push(GST_BASE_TRANSFORM_SRC_PAD(self), outbuf);
    if (ret != GST_FLOW_OK) break;
  }
  if (ret != GST_FLOW_OK) {
    GST_DEBUG_OBJECT(self, "draining stopped: %s", gst_flow_get_name(ret));
    gst_sift_chain_discard(self);
  }
  gst_sift_chain_publish_counters(self);
  return ret;
}

// Builds the runner (depth 1) or the streaming engine (depth >= 2) for `chain` on `choice`
// and, once caps are known, configures it; the state takes both only when that succeeded. The
// frames in flight in a replaced engine are pushed downstream first. Throws starsift::Error.
static void gst_sift_chain_build_runner(GstSiftChain* self,
                                        std::shared_ptr<const starsift::ChainConfig> chain,
                                        const starsift::BackendChoice& choice) {
  GstSiftChainState& state = *self->state;
  const starsift::FrameShape* shape = starsift::gst::negotiated_shape(GST_SIFT_TRANSFORM(self));
  std::unique_ptr<starsift::ChainRunner> runner;
  std::unique_ptr<starsift::StreamingChain> engine;
  std::string stages;
  std::size_t stage_count = 0;
  if (state.depth > 1) {
    auto built = starsift::build_chain_stages(*chain, choice);
    stages = gst_sift_chain_stage_names(built);
    stage_count = built.size();
    engine = starsift::make_streaming_chain(std::move(built), choice, state.depth);
    if (shape != nullptr) engine->configure(*shape);
  } else {
    runner = starsift::make_chain_runner(*chain, choice);
    if (shape != nullptr) runner->configure(*shape);
    stages = gst_sift_chain_stage_names(*runner);
    stage_count = runner->size();
  }
  const std::string backend = starsift::gst::active_backend_name(choice);
  GST_INFO_OBJECT(self, "chain %s on %s, depth %d", stages.c_str(), backend.c_str(), state.depth);

  if (state.engine) {
    state.drain_flow = gst_sift_chain_drain(self);
    const starsift::StreamingCounters& old = state.engine->counters();
    state.past.dropped += old.dropped;
    state.past.zero_copy += old.zero_copy;
    state.past.copied += old.copied;
    state.past.held_outputs += old.held_outputs;
  }
  state.runner = std::move(runner);
  state.engine = std::move(engine);
  state.shape = state.engine && shape != nullptr ? std::optional(*shape) : std::nullopt;
  state.chain = std::move(chain);
  {
    const starsift::gst::ObjectLock lock(self);
    self->stats.backend = backend;
    self->stats.stages = stages;
    self->stats.stage_ms.assign(stage_count, 0.0);
  }
  gst_sift_chain_publish_counters(self);
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
    self->stats.depth = settings.depth;
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
  self->state->depth = settings.depth;
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

// New caps. At depth >= 2 the frames of the previous caps were pushed downstream when the
// caps event came (see sink_event); a renegotiation to the same shape keeps the frames in
// flight, one to another shape drops them (counted).
static void gst_sift_chain_configure(GstSiftTransform* trans, const starsift::FrameShape& shape) {
  GstSiftChain* self = GST_SIFT_CHAIN(trans);
  GstSiftChainState& state = *self->state;
  if (!state.engine) {
    state.runner->configure(shape);
    return;
  }
  if (state.shape == shape) return;
  state.shape.reset();
  state.engine->configure(shape);
  state.clear_pending();
  state.shape = shape;
  gst_sift_chain_publish_counters(self);
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
  gst_sift_chain_discard(self);  // frames still in flight at stop are counted as dropped
  delete self->state;
  self->state = nullptr;
}

// Proposes a pool of starsift frame memory (page-locked where a GPU is usable) first, so a
// source that takes it hands the engine frames it can DMA in place.
static gboolean gst_sift_chain_propose_allocation(GstBaseTransform* trans, GstQuery* decide_query,
                                                  GstQuery* query) {
  GstSiftChain* self = GST_SIFT_CHAIN(trans);
  if (!GST_BASE_TRANSFORM_CLASS(parent_class)->propose_allocation(trans, decide_query, query)) {
    return FALSE;
  }
  if (decide_query == nullptr) return TRUE;  // passthrough: upstream talks to downstream
  GstCaps* caps = nullptr;
  gboolean need_pool = FALSE;
  gst_query_parse_allocation(query, &caps, &need_pool);
  GstVideoInfo info;
  if (caps == nullptr || !gst_video_info_from_caps(&info, caps)) return TRUE;
  int depth;
  {
    const starsift::gst::ObjectLock lock(self);
    depth = self->settings.depth;
  }
  const guint min_buffers = static_cast<guint>(depth) + 2;  // the ring plus two being filled
  GstAllocator* allocator = starsift::gst::frame_allocator();
  GstAllocationParams params;
  gst_allocation_params_init(&params);
  if (gst_query_get_n_allocation_params(query) > 0) {
    gst_query_set_nth_allocation_param(query, 0, allocator, &params);
  } else {
    gst_query_add_allocation_param(query, allocator, &params);
  }
  if (need_pool) {
    GstBufferPool* pool = gst_video_buffer_pool_new();
    GstStructure* config = gst_buffer_pool_get_config(pool);
    gst_buffer_pool_config_set_params(config, caps, static_cast<guint>(info.size), min_buffers, 0);
    gst_buffer_pool_config_set_allocator(config, allocator, &params);
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (gst_buffer_pool_set_config(pool, config)) {
      if (gst_query_get_n_allocation_pools(query) > 0) {
        gst_query_set_nth_allocation_pool(query, 0, pool, static_cast<guint>(info.size),
                                          min_buffers, 0);
      } else {
        gst_query_add_allocation_pool(query, pool, static_cast<guint>(info.size), min_buffers, 0);
      }
    }
    gst_object_unref(pool);
  }
  gst_object_unref(allocator);
  return TRUE;
}

/* GstBaseTransform vfuncs for depth >= 2 */

// Takes the frame into the engine (which copies it into a slot of its own) and keeps the input
// buffer for its output's metadata. Depth 1 chains up: the base filters through transform().
static GstFlowReturn gst_sift_chain_submit_input_buffer(GstBaseTransform* trans,
                                                        gboolean is_discont, GstBuffer* inbuf) {
  GstSiftChain* self = GST_SIFT_CHAIN(trans);
  GstBaseTransformClass* parent = GST_BASE_TRANSFORM_CLASS(parent_class);
  // Renegotiation, QoS and the negotiated check; the buffer is left in queued_buf, unless QoS
  // dropped it as too late (counted here: no frame is lost uncounted).
  GstFlowReturn ret = parent->submit_input_buffer(trans, is_discont, inbuf);
  if (ret != GST_FLOW_OK) return ret;
  if (trans->queued_buf == nullptr) {
    if (self->state != nullptr) {
      ++self->state->qos_dropped;
      gst_sift_chain_publish_counters(self);
    }
    return GST_FLOW_OK;
  }
  if (self->state == nullptr || self->state->depth == 1) return GST_FLOW_OK;  // transform()
  GstBuffer* buffer = trans->queued_buf;
  trans->queued_buf = nullptr;

  GstSiftTransform* sift = GST_SIFT_TRANSFORM(self);
  const GstVideoInfo* info = starsift::gst::negotiated_info(sift);
  if (info == nullptr) {
    gst_buffer_unref(buffer);
    GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, (nullptr), ("no caps negotiated before a buffer"));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  GstSiftChainState& state = *self->state;
  try {
    if (GST_BASE_TRANSFORM_GET_CLASS(trans)->before_transform != nullptr) {
      GST_BASE_TRANSFORM_GET_CLASS(trans)->before_transform(trans, buffer);
    }
    // A new backend or chain pushes the old engine's frames downstream first.
    state.drain_flow = GST_FLOW_OK;
    starsift::gst::apply_backend_changes(sift);
    gst_sift_chain_update_chain(self);
    if (state.drain_flow != GST_FLOW_OK) {
      gst_buffer_unref(buffer);
      return state.drain_flow;
    }
    if (state.engine->in_flight() == state.engine->depth()) {
      // The oldest frame could not be handed out last time: push it now.
      GstBuffer* outbuf = nullptr;
      ret = gst_sift_chain_finish_oldest(self, &outbuf);
      if (ret == GST_FLOW_OK) ret = gst_pad_push(GST_BASE_TRANSFORM_SRC_PAD(self), outbuf);
      if (ret != GST_FLOW_OK) {
        gst_buffer_unref(buffer);
        return ret;
      }
    }
    GstSiftChainPending frame;
    // The output buffer now, from the element's pool (page-locked memory where a GPU is
    // usable), so that the engine downloads straight into it; the input's metadata is
    // copied over here.
    ret = GST_BASE_TRANSFORM_CLASS(parent_class)->prepare_output_buffer(trans, buffer, &frame.out);
    if (ret != GST_FLOW_OK || frame.out == nullptr) {
      gst_buffer_unref(buffer);
      GST_DEBUG_OBJECT(self, "no output buffer: %s", gst_flow_get_name(ret));
      return ret != GST_FLOW_OK ? ret : GST_FLOW_ERROR;
    }
    const starsift::PixelFormat format = starsift::gst::negotiated_shape(sift)->format;
    frame.out_map = std::make_unique<starsift::gst::MappedFrame>(*info, frame.out, GST_MAP_WRITE);
    frame.in_map = std::make_unique<starsift::gst::MappedFrame>(*info, buffer, GST_MAP_READ);
    if (!frame.in_map->ok() || !frame.out_map->ok()) {
      gst_buffer_unref(buffer);
      GST_ELEMENT_ERROR(
          self, STREAM, FAILED,
          ("could not map the %s buffer as a video frame", frame.in_map->ok() ? "output" : "input"),
          (nullptr));
      return GST_FLOW_ERROR;
    }
    // Frames from the proposed pool are page-locked and stay alive until their output leaves:
    // the engine reads them in place. Any other input is copied into the engine at submit
    // and released at once, so upstream's buffers go back to their pool.
    GstMemory* memory =
        gst_buffer_n_memory(buffer) == 1 ? gst_buffer_peek_memory(buffer, 0) : nullptr;
    const bool in_place = starsift::gst::is_pinned_frame_memory(memory);
    GstMemory* out_memory =
        gst_buffer_n_memory(frame.out) == 1 ? gst_buffer_peek_memory(frame.out, 0) : nullptr;
    const starsift::ImageView held_output = starsift::gst::is_pinned_frame_memory(out_memory)
                                                ? frame.out_map->view(format)
                                                : starsift::ImageView{};
    state.engine->submit(frame.in_map->const_view(format), state.next_tag++,
                         in_place ? starsift::InputMemory::HeldPinned : starsift::InputMemory::Any,
                         held_output);
    if (in_place) {
      frame.in = std::exchange(buffer, nullptr);
    } else {
      frame.in_map.reset();
      gst_buffer_unref(std::exchange(buffer, nullptr));
    }
    state.pending.push_back(std::move(frame));
  } catch (...) {
    if (buffer != nullptr) gst_buffer_unref(buffer);
    STARSIFT_POST_CURRENT_EXCEPTION(self, "filtering a frame");
    return GST_FLOW_ERROR;
  }
  gst_sift_chain_publish_counters(self);
  return GST_FLOW_OK;
}

// Hands out the oldest frame once all `depth` slots are in flight; otherwise nothing.
static GstFlowReturn gst_sift_chain_generate_output(GstBaseTransform* trans, GstBuffer** outbuf) {
  GstSiftChain* self = GST_SIFT_CHAIN(trans);
  if (self->state == nullptr || self->state->depth == 1) {
    return GST_BASE_TRANSFORM_CLASS(parent_class)->generate_output(trans, outbuf);
  }
  *outbuf = nullptr;
  const GstSiftChainState& state = *self->state;
  if (!state.engine || state.engine->in_flight() < state.engine->depth()) return GST_FLOW_OK;
  return gst_sift_chain_finish_oldest(self, outbuf);
}

// depth >= 2: a serialized event (EOS, CAPS, SEGMENT, GAP, tags, ...) first pushes the frames
// in flight downstream, so that it stays behind them; FLUSH_STOP drops them (counted).
static gboolean gst_sift_chain_sink_event(GstBaseTransform* trans, GstEvent* event) {
  GstSiftChain* self = GST_SIFT_CHAIN(trans);
  if (self->state != nullptr && self->state->engine) {
    if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP) {
      gst_sift_chain_discard(self);
    } else if (GST_EVENT_IS_SERIALIZED(event) && self->state->engine->in_flight() > 0) {
      const GstFlowReturn ret = gst_sift_chain_drain(self);
      GST_DEBUG_OBJECT(self, "drained before %s: %s", GST_EVENT_TYPE_NAME(event),
                       gst_flow_get_name(ret));
    }
  }
  return GST_BASE_TRANSFORM_CLASS(parent_class)->sink_event(trans, event);
}

// LATENCY on the src pad: upstream's, plus (depth - 1) frame durations at the negotiated
// frame rate (nothing when the rate is 0 or unknown).
static gboolean gst_sift_chain_query(GstBaseTransform* trans, GstPadDirection direction,
                                     GstQuery* query) {
  if (!GST_BASE_TRANSFORM_CLASS(parent_class)->query(trans, direction, query)) return FALSE;
  if (direction != GST_PAD_SRC || GST_QUERY_TYPE(query) != GST_QUERY_LATENCY) return TRUE;

  GstSiftChain* self = GST_SIFT_CHAIN(trans);
  GST_OBJECT_LOCK(self);
  const int depth = self->state != nullptr ? self->stats.depth : self->settings.depth;
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
  properties[PROP_DEPTH] = g_param_spec_int(
      "depth", "Depth",
      "Frames in flight at once: 1 filters each frame before the next comes in; with D >= 2 "
      "frames overlap (on CUDA the upload of one, the kernels of the one before and the "
      "download of the one before that) and the output lags D - 1 frames behind the input, "
      "reported in the latency. Output order is input order. Read at start",
      1, starsift::kMaxStreamingDepth, DEFAULT_PROP_DEPTH,
      static_cast<GParamFlags>(G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY |
                               G_PARAM_STATIC_STRINGS));
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
  // Checks the config/chain properties, then chains up to GstSiftTransform's start.
  trans_class->start = GST_DEBUG_FUNCPTR(gst_sift_chain_start);
  // depth >= 2: frames in flight through the streaming engine.
  trans_class->propose_allocation = GST_DEBUG_FUNCPTR(gst_sift_chain_propose_allocation);
  trans_class->submit_input_buffer = GST_DEBUG_FUNCPTR(gst_sift_chain_submit_input_buffer);
  trans_class->generate_output = GST_DEBUG_FUNCPTR(gst_sift_chain_generate_output);
  trans_class->sink_event = GST_DEBUG_FUNCPTR(gst_sift_chain_sink_event);
  trans_class->query = GST_DEBUG_FUNCPTR(gst_sift_chain_query);
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
    case PROP_DEPTH:
      GST_OBJECT_LOCK(self);
      self->settings.depth = g_value_get_int(value);
      GST_OBJECT_UNLOCK(self);
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
      G_TYPE_DOUBLE, stats.upload_ms, "download-ms", G_TYPE_DOUBLE, stats.download_ms, "depth",
      G_TYPE_INT, stats.depth, "in-flight", G_TYPE_INT, stats.in_flight, "dropped", G_TYPE_UINT64,
      stats.dropped, "zero-copy", G_TYPE_UINT64, stats.zero_copy, "copied", G_TYPE_UINT64,
      stats.copied, "direct-out", G_TYPE_UINT64, stats.held_outputs, "qos-dropped", G_TYPE_UINT64,
      stats.qos_dropped, nullptr);
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
    case PROP_DEPTH:
      g_value_set_int(value, self->settings.depth);
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
