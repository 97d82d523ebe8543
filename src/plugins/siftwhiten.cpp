/**
 * SECTION:element-siftwhiten
 * @title: siftwhiten
 *
 * Temporal whitening: every frame minus its prediction from the previous
 * #GstSiftWhiten:history frames, a least-squares combination of them whose weights are fitted
 * as the frames come (regularised by #GstSiftWhiten:gamma). What does not change from frame
 * to frame (sky, stars, fixed pattern) cancels and the noise left is white: movers and
 * transients stand out on a flat background at #GstSiftWhiten:offset. With shift=resample each
 * frame is aligned by phase correlation first, so jitter and drift cancel too.
 *
 * The element writes offset + gain * residual in the input's format, GRAY8 or GRAY16_LE,
 * rounded and clamped (the filter's `output: residual`). GStreamer has no float grey format,
 * so the filter's float outputs (the residual, residual / sigma and sigma as GRAY32F) are not
 * offered here: they serve chains inside the starsift engine, where the next stage reads them.
 *
 * The filter keeps a history across frames. Changes of gamma, refit-interval, shift-max,
 * reject-sigma, reject-object-sigma, warmup, offset, gain and despike apply from the next frame
 * and keep it; changes of history, fit, fit-subsample, shift, shift-window, reject,
 * noise-frames and history-format start a new one, as do caps of another size or format and a
 * flush.
 * #GstSiftWhiten:stats describes the last frame handed downstream (the noise amplification of the
 * weights, the measured shift, the pixels rejected); with #GstSiftWhiten:post-messages every frame
 * is also reported as an element message.
 *
 * The CUDA stage does not take reject=objects with shift=none (its single pass decides each
 * pixel before its neighbours' residuals are known): backend=cuda, and backend=auto on a host
 * with a usable GPU, then fail with an error saying so when the stage is built or the
 * parameters reach it.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 siftskysrc movers=5 ! \
 *     siftwhiten backend=cpu history=20 shift=resample depth=3 ! videoconvert ! autovideosink
 * ]| A synthetic sky with five movers: the stars cancel, the movers stay, on a grey background;
 * three frames in flight.
 * |[
 * gst-launch-1.0 -m siftskysrc num-buffers=50 ! siftwhiten backend=cpu post-messages=true ! \
 *     fakesink
 * ]| Prints each frame's stats ("siftwhiten" element messages).
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=GRAY8 ! \
 *     siftwhiten backend=cpu history=8 gain=4 ! videoconvert ! autovideosink
 * ]| What changes in front of a camera, four times amplified around mid-grey.
 */

#include "plugins/siftwhiten.hpp"

#include <array>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/error.hpp"
#include "pipeline/whiten/whiten_stage.hpp"
#include "plugins/common/enums.hpp"

GST_DEBUG_CATEGORY_STATIC(gst_sift_whiten_debug);
#define GST_CAT_DEFAULT gst_sift_whiten_debug

#define DEFAULT_PROP_HISTORY starsift::WhitenParams::kDefaultHistory
#define DEFAULT_PROP_GAMMA starsift::WhitenParams::kDefaultGamma
#define DEFAULT_PROP_FIT starsift::WhitenParams::kDefaultFit
#define DEFAULT_PROP_REFIT_INTERVAL starsift::WhitenParams::kDefaultRefitInterval
#define DEFAULT_PROP_FIT_SUBSAMPLE starsift::WhitenParams::kDefaultFitSubsample
#define DEFAULT_PROP_SHIFT starsift::WhitenParams::kDefaultShift
#define DEFAULT_PROP_SHIFT_WINDOW starsift::WhitenParams::kDefaultShiftWindow
#define DEFAULT_PROP_SHIFT_MAX starsift::WhitenParams::kDefaultShiftMax
#define DEFAULT_PROP_REJECT starsift::WhitenParams::kDefaultReject
#define DEFAULT_PROP_REJECT_SIGMA starsift::WhitenParams::kDefaultRejectSigma
#define DEFAULT_PROP_REJECT_OBJECT_SIGMA starsift::WhitenParams::kDefaultRejectObjectSigma
#define DEFAULT_PROP_NOISE_FRAMES starsift::WhitenParams::kAutoNoiseFrames
#define DEFAULT_PROP_WARMUP starsift::WhitenParams::kDefaultWarmup
// WhitenParams::offset is unset by default (mid-range); the property says so with -1.
#define DEFAULT_PROP_OFFSET (-1.0)
#define DEFAULT_PROP_GAIN starsift::WhitenParams::kDefaultGain
#define DEFAULT_PROP_DESPIKE starsift::WhitenParams::kDefaultDespike
#define DEFAULT_PROP_HISTORY_FORMAT starsift::WhitenParams::kDefaultHistoryFormat
#define DEFAULT_PROP_POST_MESSAGES FALSE

// The largest offset any format of the element can hold (GRAY16_LE).
#define MAX_PROP_OFFSET 65535.0

// backend, device-id, active-backend and depth: GstSiftTransform's.
enum {
  PROP_0,
  PROP_HISTORY,
  PROP_GAMMA,
  PROP_FIT,
  PROP_REFIT_INTERVAL,
  PROP_FIT_SUBSAMPLE,
  PROP_SHIFT,
  PROP_SHIFT_WINDOW,
  PROP_SHIFT_MAX,
  PROP_REJECT,
  PROP_REJECT_SIGMA,
  PROP_REJECT_OBJECT_SIGMA,
  PROP_NOISE_FRAMES,
  PROP_WARMUP,
  PROP_OFFSET,
  PROP_GAIN,
  PROP_DESPIKE,
  PROP_HISTORY_FORMAT,
  PROP_POST_MESSAGES,
  PROP_STATS,
  N_PROPERTIES
};

static GParamSpec* properties[N_PROPERTIES];

// Whitening reads grey frames only (whiten_supports(); GRAY32F has no GStreamer format), so
// these replace the templates GstSiftTransform installs for every element.
#define SIFT_WHITEN_CAPS GST_VIDEO_CAPS_MAKE("{ GRAY8, GRAY16_LE }")

static GstStaticPadTemplate gst_sift_whiten_src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(SIFT_WHITEN_CAPS));

static GstStaticPadTemplate gst_sift_whiten_sink_template = GST_STATIC_PAD_TEMPLATE(
    "sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS(SIFT_WHITEN_CAPS));

// init() placement-constructs the settings and report in GObject's zeroed instance memory;
// nothing of them needs destroying in finalize().
static_assert(std::is_trivially_destructible_v<GstSiftWhitenSettings>);
static_assert(std::is_trivially_destructible_v<starsift::gst::WhitenReport>);

namespace starsift::gst {
class ReportingWhitenStage;
}  // namespace starsift::gst
using starsift::gst::ReportingWhitenStage;

// Each frame's WhitenStats, from the thread that whitened it (the streaming thread at depth 1,
// the engine's worker at depth >= 2 on the CPU) to the src pad probe, on the streaming thread,
// when the frame leaves. Frames leave in the order they were whitened, so a FIFO pairs each
// outgoing frame with its stats. A whitened frame that never leaves was dropped by an engine
// reset (flush, stop, new caps: the stage's reset_state() or configure() drops its entries) or
// at depth 1 by the next frame; a fixed ring holds the few in between (at most depth in the
// engine plus one being pushed), so whitening never allocates for it. A frame queued on a
// CUDA stream has no stats yet when it is queued: its entry names the stage and the frame,
// and the stats are read from the stage (stats_of) when the frame leaves, by then finished.
class GstSiftWhitenRelay {
 public:
  // `owner`: the stage that whitened the frame, so that one stage's reset drops only its own
  // frames (while an engine is replaced the new one starts before the old one's frames left).
  void push(const void* owner, const starsift::WhitenStats& stats) {
    add({owner, nullptr, 0, stats});
  }
  // A frame `stage` has queued but maybe not finished: its stats are looked up at pop().
  void push_queued(const void* owner, const starsift::WhitenStage* stage, std::uint64_t frame) {
    add({owner, stage, frame, {}});
  }

  // The oldest frame's stats, or nothing.
  std::optional<starsift::WhitenStats> pop() {
    const std::lock_guard lock(mutex_);
    if (size_ == 0) return std::nullopt;
    const Entry entry = ring_[head_];
    head_ = (head_ + 1) % kCapacity;
    --size_;
    // The stage is alive: its destructor drops its entries under this lock.
    if (entry.queued_on != nullptr) return entry.queued_on->stats_of(entry.frame);
    return entry.stats;
  }

  // Forgets `owner`'s frames (every frame when `owner` is null), keeping the others' order.
  void drop(const void* owner) {
    const std::lock_guard lock(mutex_);
    int kept = 0;
    for (int i = 0; i < size_; ++i) {
      const Entry& entry = ring_[(head_ + i) % kCapacity];
      if (owner != nullptr && entry.owner != owner) ring_[(head_ + kept++) % kCapacity] = entry;
    }
    size_ = kept;
  }

  // The stage the running engine whitens with (depth >= 2), or null: update_stages() passes
  // new parameters to it. Set by build_stages(), cleared by the stage's destructor, both on
  // the streaming thread or the one starting and stopping the element.
  void set_running(ReportingWhitenStage* stage) {
    const std::lock_guard lock(mutex_);
    running_ = stage;
  }
  ReportingWhitenStage* running() {
    const std::lock_guard lock(mutex_);
    return running_;
  }
  void forget_running(const ReportingWhitenStage* stage) {
    const std::lock_guard lock(mutex_);
    if (running_ == stage) running_ = nullptr;
  }

 private:
  struct Entry {
    const void* owner = nullptr;
    const starsift::WhitenStage* queued_on = nullptr;  // set: look the stats up at pop()
    std::uint64_t frame = 0;                           // WhitenStats::frame, when queued
    starsift::WhitenStats stats;                       // when finished
  };
  static constexpr int kCapacity = 2 * starsift::kMaxStreamingDepth;

  void add(const Entry& entry) {
    const std::lock_guard lock(mutex_);
    if (size_ == kCapacity) {
      // Not reachable while the pairing above holds; the newest stats win.
      head_ = (head_ + 1) % kCapacity;
      --size_;
    }
    ring_[(head_ + size_) % kCapacity] = entry;
    ++size_;
  }

  std::mutex mutex_;
  std::array<Entry, kCapacity> ring_{};
  int head_ = 0;
  int size_ = 0;
  ReportingWhitenStage* running_ = nullptr;
};

namespace starsift::gst {

// The WhitenStage the engine runs at depth >= 2, wrapped so that each frame's stats are
// copied out on the thread that whitened it, right after it: the next frame overwrites
// last_stats(), and at depth >= 2 the CPU engine whitens on its worker while the streaming
// thread takes in the next frames.
class ReportingWhitenStage final : public starsift::FilterStage {
 public:
  ReportingWhitenStage(std::unique_ptr<starsift::WhitenStage> stage,
                       std::shared_ptr<GstSiftWhitenRelay> relay)
      : stage_(std::move(stage)), relay_(std::move(relay)) {}
  ~ReportingWhitenStage() override {
    relay_->forget_running(this);
    relay_->drop(this);
  }

  starsift::WhitenStage& whiten() noexcept { return *stage_; }

  std::string_view name() const override { return stage_->name(); }
  starsift::Backend backend() const override { return stage_->backend(); }
  bool supports(starsift::PixelFormat format) const override { return stage_->supports(format); }
  starsift::FrameShape output_shape(const starsift::FrameShape& in) const override {
    return stage_->output_shape(in);
  }
  void configure(const starsift::FrameShape& shape) override {
    relay_->drop(this);  // a new history: frames not handed out yet were dropped
    stage_->configure(shape);
  }
  void process(starsift::ConstImageView in, starsift::ImageView out) override {
    stage_->process(in, out);
    relay_->push(this, stage_->last_stats());
  }
  void reset_state() override {
    stage_->reset_state();
    relay_->drop(this);  // the engine dropped the frames in flight
  }
  void configure_device(const starsift::FrameShape& shape) override {
    relay_->drop(this);
    stage_->configure_device(shape);
  }
  // Never recorded into a CUDA graph: the stats are host work after every frame.
  bool capturable() const override { return false; }
  // enqueue() returns before the frame is done: the relay reads its stats when it leaves.
  void enqueue(starsift::ConstImageView in, starsift::ImageView out, void* stream) override {
    const std::uint64_t frame = stage_->next_frame();
    stage_->enqueue(in, out, stream);
    relay_->push_queued(this, stage_.get(), frame);
  }

 private:
  std::unique_ptr<starsift::WhitenStage> stage_;
  std::shared_ptr<GstSiftWhitenRelay> relay_;
};

}  // namespace starsift::gst

struct GstSiftWhitenState {
  starsift::WhitenParams applied;                // depth 1: what the stage runs with
  std::unique_ptr<starsift::WhitenStage> stage;  // depth 1: built once caps are known
  starsift::FrameShape shape;                    // depth 1: what `stage` is configured for
  // depth >= 2: the parameters last seen by stages_generation(), and how often they changed.
  starsift::WhitenParams seen;
  guint64 generation = 0;
};

static void gst_sift_whiten_set_property(GObject* object, guint prop_id, const GValue* value,
                                         GParamSpec* pspec);
static void gst_sift_whiten_get_property(GObject* object, guint prop_id, GValue* value,
                                         GParamSpec* pspec);

#define gst_sift_whiten_parent_class parent_class
G_DEFINE_TYPE(GstSiftWhiten, gst_sift_whiten, GST_TYPE_SIFT_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE(siftwhiten, "siftwhiten", GST_RANK_NONE, GST_TYPE_SIFT_WHITEN);

/* helpers */

static GstSiftWhitenSettings gst_sift_whiten_copy_settings(GstSiftWhiten* self) {
  const starsift::gst::ObjectLock lock(self);
  return self->settings;
}

static void gst_sift_whiten_log_params(GstSiftWhiten* self, const starsift::WhitenParams& p) {
  GST_DEBUG_OBJECT(
      self,
      "parameters now history=%d gamma=%g fit=%s refit-interval=%d fit-subsample=%d "
      "shift=%s shift-window=%d shift-max=%g reject=%s reject-sigma=%g "
      "reject-object-sigma=%g noise-frames=%g warmup=%s offset=%g gain=%g despike=%d "
      "history-format=%s",
      p.history, p.gamma, std::string(starsift::to_string(p.fit)).c_str(), p.refit_interval,
      p.fit_subsample, std::string(starsift::to_string(p.shift)).c_str(), p.shift_window,
      p.shift_max, std::string(starsift::to_string(p.reject)).c_str(), p.reject_sigma,
      p.reject_object_sigma, p.noise_frames, std::string(starsift::to_string(p.warmup)).c_str(),
      p.offset.value_or(DEFAULT_PROP_OFFSET), p.gain, p.despike ? 1 : 0,
      std::string(starsift::to_string(p.history_format)).c_str());
}

// depth 1: brings the stage in line with `params` for frames of `shape` on the chosen backend:
// builds it when there is none or the shape changed (a new history), and passes new
// parameters through set_params(), which keeps the history where the change allows. New caps
// of the same shape (another frame rate) keep the history, as the engine does at depth >= 2.
// Throws starsift::Error (the stage is then unchanged).
static void gst_sift_whiten_update_stage(GstSiftWhiten* self, const starsift::WhitenParams& params,
                                         const starsift::FrameShape& shape) {
  if (self->state == nullptr) throw starsift::Error("whiten: frames before start", "start first");
  GstSiftWhitenState& state = *self->state;
  if (!state.stage || state.shape != shape) {
    const starsift::BackendChoice& choice = starsift::gst::backend_choice(GST_SIFT_TRANSFORM(self));
    auto stage = starsift::make_whiten_stage(params, choice);
    stage->configure(shape);
    state.stage = std::move(stage);
    state.shape = shape;
    GST_DEBUG_OBJECT(self, "built the %s stage for %dx%d %s",
                     std::string(starsift::to_string(choice.backend)).c_str(), shape.width,
                     shape.height, std::string(starsift::to_string(shape.format)).c_str());
  } else if (params != state.applied) {
    state.stage->set_params(params);
    gst_sift_whiten_log_params(self, params);
  }
  state.applied = params;
}

/* pad probe */

// Every frame leaves through the src pad, whichever path of GstSiftTransform pushes it (the
// output of a submit, a full engine, a drain before an event or a rebuild): here its stats
// become `stats`, and a message when post-messages is set. Streaming thread.
static GstPadProbeReturn gst_sift_whiten_src_probe(GstPad*, GstPadProbeInfo* info,
                                                   gpointer user_data) {
  GstSiftWhiten* self = GST_SIFT_WHITEN(user_data);
  const GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  const std::optional<starsift::WhitenStats> stats = self->relay->pop();
  if (!stats) return GST_PAD_PROBE_OK;

  GstStructure* message = nullptr;
  {
    const starsift::gst::ObjectLock lock(self);
    self->report.stats = *stats;
    ++self->report.frames;
    self->report.timestamp = buffer != nullptr ? GST_BUFFER_PTS(buffer) : GST_CLOCK_TIME_NONE;
    if (self->settings.post_messages) {
      message = starsift::gst::whiten_report_to_structure(self->report,
                                                          starsift::gst::kWhitenMessageName);
    }
  }
  if (message != nullptr) {
    gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), message));
  }
  return GST_PAD_PROBE_OK;
}

/* GstSiftTransform hooks */

static void gst_sift_whiten_set_backend(GstSiftTransform* trans, const starsift::BackendChoice&) {
  GstSiftWhiten* self = GST_SIFT_WHITEN(trans);
  if (self->state == nullptr) self->state = new GstSiftWhitenState();
  self->state->stage.reset();  // rebuilt on the new backend once a shape is known
}

// depth >= 2: the stage the engine runs, with the parameters set now, reporting each frame's
// stats to the relay.
static std::vector<std::unique_ptr<starsift::FilterStage>> gst_sift_whiten_build_stages(
    GstSiftTransform* trans, const starsift::BackendChoice& choice) {
  GstSiftWhiten* self = GST_SIFT_WHITEN(trans);
  const GstSiftWhitenSettings settings = gst_sift_whiten_copy_settings(self);
  self->state->seen = settings.params;
  auto stage = std::make_unique<ReportingWhitenStage>(
      starsift::make_whiten_stage(settings.params, choice), self->relay);
  self->relay->set_running(stage.get());
  std::vector<std::unique_ptr<starsift::FilterStage>> stages;
  stages.push_back(std::move(stage));
  return stages;
}

// depth >= 2: changes when a property did, so the base hands the new parameters to
// update_stages() before the next frame.
static guint64 gst_sift_whiten_stages_generation(GstSiftTransform* trans) {
  GstSiftWhiten* self = GST_SIFT_WHITEN(trans);
  const GstSiftWhitenSettings settings = gst_sift_whiten_copy_settings(self);
  GstSiftWhitenState& state = *self->state;
  if (settings.params != state.seen) {
    state.seen = settings.params;
    ++state.generation;
  }
  return state.generation;
}

// depth >= 2, no frame in flight (the engine's worker is idle): the new parameters go to the
// running stage, whose set_params() keeps the history where the change allows, as at depth 1.
// Without a running stage (a rebuild failed) the base builds one.
static gboolean gst_sift_whiten_update_stages(GstSiftTransform* trans) {
  GstSiftWhiten* self = GST_SIFT_WHITEN(trans);
  ReportingWhitenStage* running = self->relay->running();
  if (running == nullptr) return FALSE;
  const starsift::WhitenParams params = gst_sift_whiten_copy_settings(self).params;
  running->whiten().set_params(params);
  gst_sift_whiten_log_params(self, params);
  return TRUE;
}

static void gst_sift_whiten_configure(GstSiftTransform* trans, const starsift::FrameShape& shape) {
  GstSiftWhiten* self = GST_SIFT_WHITEN(trans);
  gst_sift_whiten_update_stage(self, gst_sift_whiten_copy_settings(self).params, shape);
}

static void gst_sift_whiten_filter(GstSiftTransform* trans, starsift::ConstImageView in,
                                   starsift::ImageView out) {
  GstSiftWhiten* self = GST_SIFT_WHITEN(trans);
  gst_sift_whiten_update_stage(self, gst_sift_whiten_copy_settings(self).params,
                               *starsift::gst::negotiated_shape(trans));
  starsift::WhitenStage& stage = *self->state->stage;
  stage.process(in, out);
  // A frame filtered before that never left (a failed push) is not coming.
  self->relay->drop(nullptr);
  self->relay->push(&stage, stage.last_stats());
}

static void gst_sift_whiten_reset(GstSiftTransform* trans) {
  GstSiftWhiten* self = GST_SIFT_WHITEN(trans);
  delete self->state;
  self->state = nullptr;
  self->relay->drop(nullptr);
}

/* GstBaseTransform vfuncs */

// The stats start over, then GstSiftTransform starts (and builds the stages at depth >= 2).
static gboolean gst_sift_whiten_start(GstBaseTransform* trans) {
  GstSiftWhiten* self = GST_SIFT_WHITEN(trans);
  self->relay->drop(nullptr);
  {
    const starsift::gst::ObjectLock lock(self);
    self->report = starsift::gst::WhitenReport{};
  }
  return GST_BASE_TRANSFORM_CLASS(parent_class)->start(trans);
}

// depth 1: a flush starts a new history, as the engine's reset does at depth >= 2 (frames
// after a seek do not continue the ones before). FLUSH_STOP comes with the stream lock held,
// so the streaming thread is not filtering meanwhile.
static gboolean gst_sift_whiten_sink_event(GstBaseTransform* trans, GstEvent* event) {
  GstSiftWhiten* self = GST_SIFT_WHITEN(trans);
  if (GST_EVENT_TYPE(event) == GST_EVENT_FLUSH_STOP &&
      starsift::gst::streaming_depth(GST_SIFT_TRANSFORM(self)) == 1) {
    if (self->state != nullptr && self->state->stage) self->state->stage->reset_state();
    self->relay->drop(nullptr);
    GST_DEBUG_OBJECT(self, "flushed: a new history starts");
  }
  return GST_BASE_TRANSFORM_CLASS(parent_class)->sink_event(trans, event);
}

/* GObject vfuncs */

static void gst_sift_whiten_finalize(GObject* object) {
  GstSiftWhiten* self = GST_SIFT_WHITEN(object);
  gst_sift_whiten_reset(GST_SIFT_TRANSFORM(self));
  self->relay.~shared_ptr();
  G_OBJECT_CLASS(parent_class)->finalize(object);
}

static void gst_sift_whiten_class_init(GstSiftWhitenClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass* trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  GstSiftTransformClass* sift_class = GST_SIFT_TRANSFORM_CLASS(klass);
  using P = starsift::WhitenParams;

  GST_DEBUG_CATEGORY_INIT(gst_sift_whiten_debug, "siftwhiten", 0, "starsift temporal whitening");

  gobject_class->set_property = gst_sift_whiten_set_property;
  gobject_class->get_property = gst_sift_whiten_get_property;
  gobject_class->finalize = gst_sift_whiten_finalize;

  // Parameters that apply from the next frame without a new history are controllable; the
  // others would restart the history at every controlled change.
  const auto restarts = static_cast<GParamFlags>(G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
                                                 G_PARAM_STATIC_STRINGS);
  const auto live = static_cast<GParamFlags>(restarts | GST_PARAM_CONTROLLABLE);

  properties[PROP_HISTORY] = g_param_spec_int(
      "history", "History",
      "Frames the prediction is made of (N). A change starts a new history: the next frames "
      "warm up again",
      P::kMinHistory, P::kMaxHistory, DEFAULT_PROP_HISTORY, restarts);
  properties[PROP_GAMMA] = g_param_spec_double(
      "gamma", "Gamma",
      "Relative regularisation of the weights' solve (gamma * tr(R) / n is added to the "
      "diagonal): larger values shrink the weights, 1e-5..1e-3 whiten best. Applies from the "
      "next frame, keeping the history",
      0.0, G_MAXDOUBLE, DEFAULT_PROP_GAMMA, live);
  properties[PROP_FIT] = g_param_spec_enum(
      "fit", "Fit",
      "Which frame the weights are fitted to: the current one (adapts at once) or the previous "
      "one (one pass; movers never pull the fit). A change starts a new history",
      GST_TYPE_SIFT_WHITEN_FIT, static_cast<gint>(DEFAULT_PROP_FIT), restarts);
  properties[PROP_REFIT_INTERVAL] = g_param_spec_int(
      "refit-interval", "Refit interval",
      "Solve for new weights every this many frames (1: every frame), reusing them between. "
      "Applies from the next frame, keeping the history",
      1, P::kMaxRefitInterval, DEFAULT_PROP_REFIT_INTERVAL, live);
  properties[PROP_FIT_SUBSAMPLE] = g_param_spec_int(
      "fit-subsample", "Fit subsample",
      "The fit's sums read every this-many-th row (1: every row; larger is faster with noisier "
      "weights). A change starts a new history",
      1, P::kMaxFitSubsample, DEFAULT_PROP_FIT_SUBSAMPLE, restarts);
  properties[PROP_SHIFT] = g_param_spec_enum(
      "shift", "Shift",
      "How frame-to-frame shifts (jitter, drift) are handled: none, or resample each frame onto "
      "the first frame's grid after measuring its shift by phase correlation (frames of at "
      "least 16x16). A change starts a new history",
      GST_TYPE_SIFT_WHITEN_SHIFT, static_cast<gint>(DEFAULT_PROP_SHIFT), restarts);
  properties[PROP_SHIFT_WINDOW] = g_param_spec_int(
      "shift-window", "Shift window",
      "Side of the phase-correlation window in pixels (shift=resample): a power of two, other "
      "values are refused; clipped to the largest power of two that fits the frame. A change "
      "starts a new history",
      P::kMinShiftWindow, P::kMaxShiftWindow, DEFAULT_PROP_SHIFT_WINDOW, restarts);
  properties[PROP_SHIFT_MAX] = g_param_spec_double(
      "shift-max", "Shift max",
      "Pixels a frame may lie from the shift reference before it becomes the new reference "
      "(shift=resample); more than 0 (0 is refused). Applies from the next frame, keeping the "
      "history",
      0.0, G_MAXDOUBLE, DEFAULT_PROP_SHIFT_MAX, live);
  properties[PROP_REJECT] = g_param_spec_enum(
      "reject", "Reject",
      "What enters the history where the residual is an outlier: the frame as it is (none), or "
      "the prediction (mask), so movers stay out of the history; objects also stores the "
      "prediction next to every 3 x 3 box whose residual sum is significant, so faint slow "
      "movers stay out too (on CUDA with shift=resample only). A change starts a new history",
      GST_TYPE_SIFT_WHITEN_REJECT, static_cast<gint>(DEFAULT_PROP_REJECT), restarts);
  properties[PROP_REJECT_SIGMA] = g_param_spec_double(
      "reject-sigma", "Reject sigma",
      "k of the outlier test |residual| > k * sigma (reject=mask or objects); more than 0 (0 is "
      "refused). Applies from the next frame, keeping the history",
      0.0, G_MAXDOUBLE, DEFAULT_PROP_REJECT_SIGMA, live);
  properties[PROP_REJECT_OBJECT_SIGMA] = g_param_spec_double(
      "reject-object-sigma", "Reject object sigma",
      "k_o of the object test |box sum of residuals| > k_o * sqrt(box sum of sigma^2) over each "
      "3 x 3 box (reject=objects); more than 0 (0 is refused). Applies from the next frame, "
      "keeping the history",
      0.0, G_MAXDOUBLE, DEFAULT_PROP_REJECT_OBJECT_SIGMA, live);
  properties[PROP_NOISE_FRAMES] = g_param_spec_double(
      "noise-frames", "Noise frames",
      "Time constant of each pixel's running noise sigma, in frames: 0 is twice history, "
      "otherwise at least 1 (values between 0 and 1 are refused). A change starts a new history",
      0.0, G_MAXDOUBLE, DEFAULT_PROP_NOISE_FRAMES, restarts);
  properties[PROP_WARMUP] = g_param_spec_enum(
      "warmup", "Warm-up",
      "What the first frames output, while fewer than history frames are stored: the input "
      "itself, the zero level (offset), or whitened with the frames available. Applies from the "
      "next frame, keeping the history",
      GST_TYPE_SIFT_WHITEN_WARMUP, static_cast<gint>(DEFAULT_PROP_WARMUP), live);
  properties[PROP_OFFSET] = g_param_spec_double(
      "offset", "Offset",
      "Output level of a zero residual, in the format's units: -1 (negative) is mid-range (128 "
      "for GRAY8, 32768 for GRAY16_LE); otherwise 0..255 for GRAY8, 0..65535 for GRAY16_LE "
      "(checked against the negotiated format: a value that does not fit stops the stream with "
      "an error). Applies from the next frame, keeping the history",
      DEFAULT_PROP_OFFSET, MAX_PROP_OFFSET, DEFAULT_PROP_OFFSET, live);
  properties[PROP_GAIN] = g_param_spec_double(
      "gain", "Gain",
      "The output is offset + gain * residual, rounded and clamped to the format; any finite "
      "value but 0 (refused). Applies from the next frame, keeping the history",
      -G_MAXDOUBLE, G_MAXDOUBLE, DEFAULT_PROP_GAIN, live);
  properties[PROP_DESPIKE] = g_param_spec_boolean(
      "despike", "Despike",
      "Take an input sample that sticks out of its 3x3 neighbourhood (a hot or dead pixel, "
      "single or two side by side; stars and movers of FWHM 1.5 px and more do not) for no "
      "measurement: the shift estimate, the alignment and the history see its neighbours' "
      "level, and its residual is 0. Applies from the next frame, keeping the history",
      DEFAULT_PROP_DESPIKE, live);
  properties[PROP_HISTORY_FORMAT] = g_param_spec_enum(
      "history-format", "History format",
      "How the history keeps its frames: float, or half (binary16: each stored value rounded to "
      "11 significant bits, half the memory and the bytes the prediction reads; GRAY8 and "
      "GRAY16_LE only). A change starts a new history",
      GST_TYPE_SIFT_WHITEN_HISTORY_FORMAT, static_cast<gint>(DEFAULT_PROP_HISTORY_FORMAT),
      restarts);
  properties[PROP_POST_MESSAGES] = g_param_spec_boolean(
      "post-messages", "Post messages",
      "Post a \"siftwhiten\" element message for every frame handed downstream, with the fields "
      "of stats",
      DEFAULT_PROP_POST_MESSAGES,
      static_cast<GParamFlags>(G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
                               G_PARAM_STATIC_STRINGS));
  properties[PROP_STATS] = g_param_spec_boxed(
      "stats", "Statistics",
      "siftwhiten-stats of the last frame handed downstream: frame (guint64: its index since the "
      "history started), history-used (int: frames the prediction was made of), warmup "
      "(boolean: fewer than history were stored), refit (boolean: weights solved for it), sum-w2 "
      "(double: sum of the squared weights), noise-floor (double: sqrt(1 + sum-w2), the "
      "residual's noise over the frame's), gamma (double: the absolute regularisation solved "
      "with), shift-x, shift-y (doubles: its shift against the first frame, px), shift-peak "
      "(double: phase-correlation peak, 1 perfect, 0 none), reference-changed (boolean: it "
      "became the shift reference), shift-rejected (boolean: the highest correlation peak lay "
      "over 2 px from the previous shift without standing out; the peak near the previous "
      "shift was taken), rejected (guint64: pixels whose residual was an outlier), despiked "
      "(guint64: input samples taken for spikes, despike), "
      "frames (guint64: handed downstream since start), timestamp (guint64: its PTS). Reset at "
      "start, kept after stop",
      GST_TYPE_STRUCTURE, static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
  g_object_class_install_properties(gobject_class, N_PROPERTIES, properties);

  gst_element_class_set_static_metadata(
      element_class, "Temporal whitening", "Filter/Effect/Video",
      "Subtracts from each frame its least-squares prediction from the previous frames: the "
      "static scene cancels, movers and transients stay on white noise",
      "starsift");

  // Same names as GstSiftTransform's templates: these replace them.
  gst_element_class_add_static_pad_template(element_class, &gst_sift_whiten_sink_template);
  gst_element_class_add_static_pad_template(element_class, &gst_sift_whiten_src_template);

  sift_class->set_backend = GST_DEBUG_FUNCPTR(gst_sift_whiten_set_backend);
  sift_class->configure = GST_DEBUG_FUNCPTR(gst_sift_whiten_configure);
  sift_class->filter = GST_DEBUG_FUNCPTR(gst_sift_whiten_filter);
  sift_class->reset = GST_DEBUG_FUNCPTR(gst_sift_whiten_reset);
  sift_class->build_stages = GST_DEBUG_FUNCPTR(gst_sift_whiten_build_stages);
  sift_class->stages_generation = GST_DEBUG_FUNCPTR(gst_sift_whiten_stages_generation);
  sift_class->update_stages = GST_DEBUG_FUNCPTR(gst_sift_whiten_update_stages);
  trans_class->start = GST_DEBUG_FUNCPTR(gst_sift_whiten_start);
  trans_class->sink_event = GST_DEBUG_FUNCPTR(gst_sift_whiten_sink_event);
}

static void gst_sift_whiten_init(GstSiftWhiten* self) {
  new (&self->settings) GstSiftWhitenSettings();
  new (&self->report) starsift::gst::WhitenReport();
  new (&self->relay) std::shared_ptr<GstSiftWhitenRelay>(std::make_shared<GstSiftWhitenRelay>());
  // WhitenParams' defaults are the DEFAULT_PROP_* above; the property only ever writes
  // residual frames.
  self->settings.params.output = starsift::WhitenOutput::Residual;
  self->settings.post_messages = DEFAULT_PROP_POST_MESSAGES;
  self->state = nullptr;

  gst_pad_add_probe(GST_BASE_TRANSFORM_SRC_PAD(self), GST_PAD_PROBE_TYPE_BUFFER,
                    gst_sift_whiten_src_probe, self, nullptr);
}

// Stores `value` in the parameter `field` when WhitenParams::validate() accepts the settings
// with it; otherwise throws starsift::Error and the property keeps its value.
template <class T>
static void gst_sift_whiten_store(GstSiftWhiten* self, T starsift::WhitenParams::*field, T value) {
  starsift::WhitenParams candidate = gst_sift_whiten_copy_settings(self).params;
  candidate.*field = value;
  candidate.validate();
  const starsift::gst::ObjectLock lock(self);
  self->settings.params.*field = value;
}

template <class Enum>
static Enum gst_sift_whiten_enum(const GValue* value) {
  return static_cast<Enum>(g_value_get_enum(value));
}

static void gst_sift_whiten_set_property(GObject* object, guint prop_id, const GValue* value,
                                         GParamSpec* pspec) {
  GstSiftWhiten* self = GST_SIFT_WHITEN(object);
  using P = starsift::WhitenParams;

  // GObject enforces the ranges of the param specs; what they cannot say (powers of two, open
  // ranges, gain 0, noise-frames below 1) WhitenParams::validate() judges here, and a refused
  // value leaves the property unchanged. Changes reach the stage at the next frame.
  try {
    switch (prop_id) {
      case PROP_HISTORY:
        gst_sift_whiten_store(self, &P::history, g_value_get_int(value));
        break;
      case PROP_GAMMA:
        gst_sift_whiten_store(self, &P::gamma, g_value_get_double(value));
        break;
      case PROP_FIT:
        gst_sift_whiten_store(self, &P::fit, gst_sift_whiten_enum<starsift::WhitenFit>(value));
        break;
      case PROP_REFIT_INTERVAL:
        gst_sift_whiten_store(self, &P::refit_interval, g_value_get_int(value));
        break;
      case PROP_FIT_SUBSAMPLE:
        gst_sift_whiten_store(self, &P::fit_subsample, g_value_get_int(value));
        break;
      case PROP_SHIFT:
        gst_sift_whiten_store(self, &P::shift, gst_sift_whiten_enum<starsift::WhitenShift>(value));
        break;
      case PROP_SHIFT_WINDOW:
        gst_sift_whiten_store(self, &P::shift_window, g_value_get_int(value));
        break;
      case PROP_SHIFT_MAX:
        gst_sift_whiten_store(self, &P::shift_max, g_value_get_double(value));
        break;
      case PROP_REJECT:
        gst_sift_whiten_store(self, &P::reject,
                              gst_sift_whiten_enum<starsift::WhitenReject>(value));
        break;
      case PROP_REJECT_SIGMA:
        gst_sift_whiten_store(self, &P::reject_sigma, g_value_get_double(value));
        break;
      case PROP_REJECT_OBJECT_SIGMA:
        gst_sift_whiten_store(self, &P::reject_object_sigma, g_value_get_double(value));
        break;
      case PROP_NOISE_FRAMES:
        gst_sift_whiten_store(self, &P::noise_frames, g_value_get_double(value));
        break;
      case PROP_WARMUP:
        gst_sift_whiten_store(self, &P::warmup,
                              gst_sift_whiten_enum<starsift::WhitenWarmup>(value));
        break;
      case PROP_OFFSET: {
        const double offset = g_value_get_double(value);
        gst_sift_whiten_store(self, &P::offset,
                              offset < 0.0 ? std::nullopt : std::optional<double>(offset));
        break;
      }
      case PROP_GAIN:
        gst_sift_whiten_store(self, &P::gain, g_value_get_double(value));
        break;
      case PROP_DESPIKE:
        gst_sift_whiten_store(self, &P::despike, g_value_get_boolean(value) != FALSE);
        break;
      case PROP_HISTORY_FORMAT:
        gst_sift_whiten_store(self, &P::history_format,
                              gst_sift_whiten_enum<starsift::WhitenHistoryFormat>(value));
        break;
      case PROP_POST_MESSAGES: {
        const starsift::gst::ObjectLock lock(self);
        self->settings.post_messages = g_value_get_boolean(value) != FALSE;
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

static void gst_sift_whiten_get_property(GObject* object, guint prop_id, GValue* value,
                                         GParamSpec* pspec) {
  GstSiftWhiten* self = GST_SIFT_WHITEN(object);
  const starsift::WhitenParams& p = self->settings.params;

  GST_OBJECT_LOCK(self);
  switch (prop_id) {
    case PROP_HISTORY:
      g_value_set_int(value, p.history);
      break;
    case PROP_GAMMA:
      g_value_set_double(value, p.gamma);
      break;
    case PROP_FIT:
      g_value_set_enum(value, static_cast<gint>(p.fit));
      break;
    case PROP_REFIT_INTERVAL:
      g_value_set_int(value, p.refit_interval);
      break;
    case PROP_FIT_SUBSAMPLE:
      g_value_set_int(value, p.fit_subsample);
      break;
    case PROP_SHIFT:
      g_value_set_enum(value, static_cast<gint>(p.shift));
      break;
    case PROP_SHIFT_WINDOW:
      g_value_set_int(value, p.shift_window);
      break;
    case PROP_SHIFT_MAX:
      g_value_set_double(value, p.shift_max);
      break;
    case PROP_REJECT:
      g_value_set_enum(value, static_cast<gint>(p.reject));
      break;
    case PROP_REJECT_SIGMA:
      g_value_set_double(value, p.reject_sigma);
      break;
    case PROP_REJECT_OBJECT_SIGMA:
      g_value_set_double(value, p.reject_object_sigma);
      break;
    case PROP_NOISE_FRAMES:
      g_value_set_double(value, p.noise_frames);
      break;
    case PROP_WARMUP:
      g_value_set_enum(value, static_cast<gint>(p.warmup));
      break;
    case PROP_OFFSET:
      g_value_set_double(value, p.offset.value_or(DEFAULT_PROP_OFFSET));
      break;
    case PROP_GAIN:
      g_value_set_double(value, p.gain);
      break;
    case PROP_DESPIKE:
      g_value_set_boolean(value, p.despike);
      break;
    case PROP_HISTORY_FORMAT:
      g_value_set_enum(value, static_cast<gint>(p.history_format));
      break;
    case PROP_POST_MESSAGES:
      g_value_set_boolean(value, self->settings.post_messages);
      break;
    case PROP_STATS:
      // GLib allocations only: safe under the object lock.
      g_value_take_boxed(value, starsift::gst::whiten_report_to_structure(
                                    self->report, starsift::gst::kWhitenStatsName));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK(self);
}
