// SPDX-License-Identifier: LGPL-2.1-or-later
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
 * The element writes, in the input's format (GRAY8 or GRAY16_LE, rounded and clamped), either
 * whitening's significance, offset + gain * z, z the Gaussian equivalent of residual / sigma with
 * each pixel's own running noise sigma (#GstSiftWhiten:output significance, the default), or offset
 * + gain * residual (output=residual). With significance the src caps carry the scale
 * ("significance-offset", "significance-gain"), so siftdetect downstream thresholds in whitening's
 * sigmas: a star's residual, whose noise is larger than the sky's, is not taken for an object.
 * GStreamer has no float grey format, so the filter's float outputs (GRAY32F residual, snr, sigma)
 * serve chains inside the starsift engine (siftchain).
 *
 * The filter keeps a history across frames. Changes of gamma, refit-interval, shift-max,
 * shift-noise, reject-sigma, reject-object-sigma, warmup, offset, gain and despike apply from
 * the next frame and keep it; changes of history, fit, fit-subsample, shift, shift-window,
 * reject, noise-frames and history-format start a new one, as do caps of another size or format
 * and a flush.
 * Every change applies from the next frame at every depth, without waiting for the frames in
 * flight. Each output buffer carries its frame's stats as a GstSiftResultMeta ("whiten-stats",
 * one WhitenStats record; plugins/common/result_meta.hpp); #GstSiftWhiten:stats describes the
 * last frame handed downstream (the noise amplification of the weights, the measured shift,
 * the pixels rejected); with #GstSiftWhiten:post-messages every frame is also reported as an
 * element message.
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
 *     siftwhiten backend=cpu history=8 output=residual gain=4 ! videoconvert ! autovideosink
 * ]| What changes in front of a camera, four times amplified around mid-grey.
 */

#include "plugins/siftwhiten.hpp"

#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <type_traits>

#include "pipeline/chain/chain_config.hpp"
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
#define DEFAULT_PROP_SHIFT_NOISE starsift::WhitenParams::kDefaultShiftNoise
#define DEFAULT_PROP_REJECT starsift::WhitenParams::kDefaultReject
#define DEFAULT_PROP_REJECT_SIGMA starsift::WhitenParams::kDefaultRejectSigma
#define DEFAULT_PROP_REJECT_OBJECT_SIGMA starsift::WhitenParams::kDefaultRejectObjectSigma
#define DEFAULT_PROP_NOISE_FRAMES starsift::WhitenParams::kAutoNoiseFrames
#define DEFAULT_PROP_WARMUP starsift::WhitenParams::kDefaultWarmup
// WhitenParams::offset is unset by default (mid-range); the property says so with -1.
#define DEFAULT_PROP_OFFSET (-1.0)
#define DEFAULT_PROP_GAIN starsift::WhitenParams::kAutoGain
#define DEFAULT_PROP_OUTPUT starsift::WhitenParams::kDefaultOutput
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
  PROP_SHIFT_NOISE,
  PROP_REJECT,
  PROP_REJECT_SIGMA,
  PROP_REJECT_OBJECT_SIGMA,
  PROP_NOISE_FRAMES,
  PROP_WARMUP,
  PROP_OUTPUT,
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

static void gst_sift_whiten_set_property(GObject* object, guint prop_id, const GValue* value,
                                         GParamSpec* pspec);
static void gst_sift_whiten_get_property(GObject* object, guint prop_id, GValue* value,
                                         GParamSpec* pspec);

#define gst_sift_whiten_parent_class parent_class
G_DEFINE_TYPE(GstSiftWhiten, gst_sift_whiten, GST_TYPE_SIFT_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE(siftwhiten, "siftwhiten", GST_RANK_NONE, GST_TYPE_SIFT_WHITEN);

/* GstSiftTransform hooks */

// A one-stage chain: whitening with the properties' parameters.
static std::shared_ptr<const starsift::ChainConfig> gst_sift_whiten_describe_chain(
    GstSiftTransform* trans, gboolean) {
  return starsift::gst::one_stage_chain(trans, "whiten", GST_SIFT_WHITEN(trans)->settings.params,
                                        "siftwhiten properties");
}

// Every frame as it leaves: its stats (the stage's result, also on the buffer as a meta)
// become `stats`, and a message when post-messages is set.
static void gst_sift_whiten_frame_out(GstSiftTransform* trans, GstBuffer* buffer,
                                      const starsift::FinishedFrame& frame) {
  GstSiftWhiten* self = GST_SIFT_WHITEN(trans);
  const starsift::WhitenStats* stats = nullptr;
  for (const starsift::FrameResult& result : frame.results) {
    if (result.layout.kind == starsift::kWhitenStatsKind && result.header().count == 1) {
      stats = result.view.records<starsift::WhitenStats>();
    }
  }
  if (stats == nullptr) return;
  GstStructure* message = nullptr;
  {
    const starsift::gst::ObjectLock lock(self);
    self->report.stats = *stats;
    ++self->report.frames;
    self->report.timestamp = GST_BUFFER_PTS(buffer);
    if (self->settings.post_messages) {
      message = starsift::gst::whiten_report_to_structure(self->report,
                                                          starsift::gst::kWhitenMessageName);
    }
  }
  if (message != nullptr) {
    gst_element_post_message(GST_ELEMENT(self), gst_message_new_element(GST_OBJECT(self), message));
  }
}

/* GstBaseTransform vfuncs */

// The stats start over, then GstSiftTransform starts.
static gboolean gst_sift_whiten_start(GstBaseTransform* trans) {
  GstSiftWhiten* self = GST_SIFT_WHITEN(trans);
  {
    const starsift::gst::ObjectLock lock(self);
    self->report = starsift::gst::WhitenReport{};
  }
  return GST_BASE_TRANSFORM_CLASS(parent_class)->start(trans);
}

/* GObject vfuncs */

static void gst_sift_whiten_class_init(GstSiftWhitenClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstBaseTransformClass* trans_class = GST_BASE_TRANSFORM_CLASS(klass);
  GstSiftTransformClass* sift_class = GST_SIFT_TRANSFORM_CLASS(klass);
  using P = starsift::WhitenParams;

  GST_DEBUG_CATEGORY_INIT(gst_sift_whiten_debug, "siftwhiten", 0, "starsift temporal whitening");

  gobject_class->set_property = gst_sift_whiten_set_property;
  gobject_class->get_property = gst_sift_whiten_get_property;

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
      "weights; 0: automatic, every row up to 1024 rows, then about 1024 rows). A change "
      "starts a new history",
      P::kAutoFitSubsample, P::kMaxFitSubsample, DEFAULT_PROP_FIT_SUBSAMPLE, restarts);
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
  properties[PROP_SHIFT_NOISE] = g_param_spec_double(
      "shift-noise", "Shift noise",
      "The registration's error in pixels (shift=resample): the significance outputs divide by "
      "sqrt(sigma^2 + (shift-noise |gradient|)^2), so the residuals alignment leaves at bright "
      "stars are judged against that error while the clear sky keeps its sigma; 0 is off. "
      "Applies from the next frame, keeping the history",
      0.0, P::kMaxShiftNoise, DEFAULT_PROP_SHIFT_NOISE, live);
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
      "Time constant of each pixel's running noise sigma, in frames: 0 is four times history, "
      "otherwise at least 1 (values between 0 and 1 are refused). A change starts a new history",
      0.0, G_MAXDOUBLE, DEFAULT_PROP_NOISE_FRAMES, restarts);
  properties[PROP_WARMUP] = g_param_spec_enum(
      "warmup", "Warm-up",
      "What the first frames output, while fewer than history frames are stored: the input "
      "itself, the zero level (offset), or whitened with the frames available. Applies from the "
      "next frame, keeping the history",
      GST_TYPE_SIFT_WHITEN_WARMUP, static_cast<gint>(DEFAULT_PROP_WARMUP), live);
  properties[PROP_OUTPUT] = g_param_spec_enum(
      "output", "Output",
      "What the element writes, in the input's format: significance, offset + gain * residual "
      "/ sigma with whitening's own per-pixel noise sigma (its scale on the caps: siftdetect "
      "thresholds it in sigmas), or residual, offset + gain * residual. A change starts a new "
      "history",
      GST_TYPE_SIFT_WHITEN_OUTPUT, static_cast<gint>(DEFAULT_PROP_OUTPUT), restarts);
  properties[PROP_OFFSET] = g_param_spec_double(
      "offset", "Offset",
      "Output level of a zero residual, in the format's units: -1 (negative) is mid-range (128 "
      "for GRAY8, 32768 for GRAY16_LE); otherwise 0..255 for GRAY8, 0..65535 for GRAY16_LE "
      "(checked against the negotiated format: a value that does not fit is refused). Applies "
      "from the next frame, keeping the history",
      DEFAULT_PROP_OFFSET, MAX_PROP_OFFSET, DEFAULT_PROP_OFFSET, live);
  properties[PROP_GAIN] = g_param_spec_double(
      "gain", "Gain",
      "The output is offset + gain * residual (or * residual / sigma), rounded and clamped to "
      "the format; 0 is automatic: 1 for residual, 2^bit-depth / 64 for significance (+-32 "
      "sigma around a mid-range offset). Applies from the next frame, keeping the history; with "
      "output=significance a change of offset or gain renegotiates the caps and starts a new "
      "history",
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

  sift_class->describe_chain = GST_DEBUG_FUNCPTR(gst_sift_whiten_describe_chain);
  sift_class->frame_out = GST_DEBUG_FUNCPTR(gst_sift_whiten_frame_out);
  trans_class->start = GST_DEBUG_FUNCPTR(gst_sift_whiten_start);
}

static void gst_sift_whiten_init(GstSiftWhiten* self) {
  new (&self->settings) GstSiftWhitenSettings();
  new (&self->report) starsift::gst::WhitenReport();
  // WhitenParams' defaults are the DEFAULT_PROP_* above.
  self->settings.post_messages = DEFAULT_PROP_POST_MESSAGES;
}

// Stores `value` in the parameter `field` when WhitenParams accepts the settings with it (for
// the negotiated frames, once caps are set); otherwise throws starsift::Error and the property
// keeps its value. The next frame runs with it.
template <class T>
static void gst_sift_whiten_store(GstSiftWhiten* self, T starsift::WhitenParams::*field, T value) {
  starsift::gst::store_checked(GST_SIFT_TRANSFORM(self), self->settings.params,
                               [&](starsift::WhitenParams& p) { p.*field = value; });
  starsift::gst::chain_changed(GST_SIFT_TRANSFORM(self));
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
      case PROP_SHIFT_NOISE:
        gst_sift_whiten_store(self, &P::shift_noise, g_value_get_double(value));
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
      case PROP_OUTPUT:
        gst_sift_whiten_store(self, &P::output,
                              gst_sift_whiten_enum<starsift::WhitenOutput>(value));
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
    case PROP_SHIFT_NOISE:
      g_value_set_double(value, p.shift_noise);
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
    case PROP_OUTPUT:
      g_value_set_enum(value, static_cast<gint>(p.output));
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
