// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * SECTION:element-siftskysrc
 * @title: siftskysrc
 *
 * A synthetic star field with known movers: stars with power-law fluxes and a Gaussian or
 * Moffat PSF on a sky with a gradient, hot pixels, the field's drift and jitter, and movers
 * streaked along their motion during the exposure; photon noise, read noise, then ADU with
 * a gain, a bias and the sensor's bit depth. Seeded: the same properties give the same
 * frames, frame by frame, on any machine and thread count.
 *
 * Every buffer carries the frame's truth as a GstSiftSkyTruthMeta (frame index, the field's
 * shift, each mover's id, position, velocity, flux, nominal peak SNR and noise); with
 * #GstSiftSkySrc:truth-file set, the same truth is written as one JSON line per frame pushed
 * downstream (a live source drops the frame it was waiting to push when it stops; that frame
 * has no line). A line is written whole or not at all: when the file cannot take one (a full
 * disk), the element posts an error naming the file and the lines it holds, and stops.
 *
 * GRAY16_LE frames hold #GstSiftSkySrc:bit-depth bits in the low bits of each sample (the
 * caps do not say how many), saturating at 2^bit-depth - 1; GRAY8 frames have 8 bits. Sizes
 * and frame rates are negotiated (1024x1024 at 30/1 in GRAY16_LE unless downstream asks
 * otherwise); timestamps follow the frame rate. Properties are read at start.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 siftskysrc num-buffers=100 movers=10 mover-snr-min=5 mover-snr-max=8 \
 *     truth-file=truth.jsonl ! video/x-raw,width=2048,height=2048,framerate=10/1 ! \
 *     siftmedian size=3 ! fakesink
 * ]| 100 frames of a 2048x2048 12-bit sky with ten faint movers, median-filtered; where the
 * movers were is in truth.jsonl.
 */

#include "plugins/siftskysrc.hpp"

#include <fcntl.h>
#include <gst/video/video.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <iterator>
#include <memory>

#include "pipeline/error.hpp"
#include "pipeline/sky/sky_generator.hpp"
#include "plugins/common/sky_truth_meta.hpp"
#include "plugins/common/source_allocation.hpp"
#include "plugins/common/transform.hpp"
#include "plugins/common/video.hpp"

GST_DEBUG_CATEGORY_STATIC(gst_sift_sky_src_debug);
#define GST_CAT_DEFAULT gst_sift_sky_src_debug

using SkyParams = starsift::SkyParams;

#define DEFAULT_PROP_SEED SkyParams::kDefaultSeed
#define DEFAULT_PROP_PSF SkyParams::kDefaultPsf
#define DEFAULT_PROP_BIT_DEPTH SkyParams::kDefaultBitDepth
#define DEFAULT_PROP_MOVERS SkyParams::kDefaultMovers
#define DEFAULT_PROP_TRUTH_FILE nullptr
#define DEFAULT_PROP_IS_LIVE FALSE

// Caps fixation when downstream leaves a choice.
#define DEFAULT_WIDTH SkyParams::kDefaultWidth
#define DEFAULT_HEIGHT SkyParams::kDefaultHeight
#define DEFAULT_FPS_N 30
#define DEFAULT_FPS_D 1
#define DEFAULT_FORMAT "GRAY16_LE"

// The properties of one SkyParams number each, after these.
enum {
  PROP_0,
  PROP_SEED,
  PROP_PSF,
  PROP_BIT_DEPTH,
  PROP_MOVERS,
  PROP_TRUTH_FILE,
  PROP_IS_LIVE,
  PROP_FIRST_DOUBLE,
};

// A SkyParams field of type double as a property: name, range and default in one place.
struct DoubleProperty {
  const char* name;
  const char* nick;
  const char* blurb;
  double SkyParams::*field;
  double minimum;
  double maximum;
  double default_value;
};

static const DoubleProperty kDoubleProperties[] = {
    {"star-density", "Star density", "Stars per megapixel", &SkyParams::star_density, 0.0,
     SkyParams::kMaxStarDensity, SkyParams::kDefaultStarDensity},
    {"star-flux-min", "Faintest star",
     "Flux of the faintest star, e- per exposure; fluxes follow N(>F) ~ F^-star-flux-slope "
     "between star-flux-min and star-flux-max",
     &SkyParams::star_flux_min, SkyParams::kMinStarFlux, SkyParams::kMaxStarFlux,
     SkyParams::kDefaultStarFluxMin},
    {"star-flux-max", "Brightest star", "Flux of the brightest star, e- per exposure",
     &SkyParams::star_flux_max, SkyParams::kMinStarFlux, SkyParams::kMaxStarFlux,
     SkyParams::kDefaultStarFluxMax},
    {"star-flux-slope", "Star flux slope",
     "Slope of the cumulative star counts, N(>F) ~ F^-slope (1.5: uniform in Euclidean space)",
     &SkyParams::star_flux_slope, SkyParams::kMinStarFluxSlope, SkyParams::kMaxStarFluxSlope,
     SkyParams::kDefaultStarFluxSlope},
    {"fwhm", "FWHM", "Full width at half maximum of the PSF of stars and movers, pixels",
     &SkyParams::fwhm, SkyParams::kMinFwhm, SkyParams::kMaxFwhm, SkyParams::kDefaultFwhm},
    {"moffat-beta", "Moffat beta",
     "Wing exponent of the Moffat PSF (psf=moffat): lower, wider wings", &SkyParams::moffat_beta,
     SkyParams::kMinMoffatBeta, SkyParams::kMaxMoffatBeta, SkyParams::kDefaultMoffatBeta},
    {"sky-level", "Sky level", "Sky background at the frame's centre, e- per pixel",
     &SkyParams::sky_level, 0.0, SkyParams::kMaxSkyLevel, SkyParams::kDefaultSkyLevel},
    {"sky-gradient", "Sky gradient",
     "Linear change of the sky from one side of the frame to the other, as a fraction of "
     "sky-level",
     &SkyParams::sky_gradient, 0.0, SkyParams::kMaxSkyGradient, SkyParams::kDefaultSkyGradient},
    {"sky-gradient-angle", "Sky gradient angle",
     "Direction in which the sky brightens, degrees from +x towards +y (down the frame)",
     &SkyParams::sky_gradient_angle, 0.0, SkyParams::kMaxAngle,
     SkyParams::kDefaultSkyGradientAngle},
    {"read-noise", "Read noise", "Read noise, e- rms per pixel", &SkyParams::read_noise, 0.0,
     SkyParams::kMaxReadNoise, SkyParams::kDefaultReadNoise},
    {"gain", "Gain", "Electrons per ADU", &SkyParams::gain, SkyParams::kMinGain,
     SkyParams::kMaxGain, SkyParams::kDefaultGain},
    {"bias", "Bias",
     "Pedestal added to every pixel, ADU; must be below the saturation (2^bit-depth - 1, 255 "
     "for GRAY8)",
     &SkyParams::bias, 0.0, SkyParams::kMaxBias, SkyParams::kDefaultBias},
    {"hot-pixel-fraction", "Hot pixel fraction",
     "Fraction of pixels that are hot, at positions fixed by the seed",
     &SkyParams::hot_pixel_fraction, 0.0, SkyParams::kMaxHotPixelFraction,
     SkyParams::kDefaultHotPixelFraction},
    {"hot-pixel-level", "Hot pixel level", "Electrons a hot pixel collects per frame on top",
     &SkyParams::hot_pixel_level, 0.0, SkyParams::kMaxHotPixelLevel,
     SkyParams::kDefaultHotPixelLevel},
    {"jitter", "Jitter",
     "Step of the field's random walk between frames, pixels rms per axis (0: no jitter)",
     &SkyParams::jitter, 0.0, SkyParams::kMaxJitter, SkyParams::kDefaultJitter},
    {"jitter-reversion", "Jitter reversion",
     "Fraction of the jitter offset undone each frame, which keeps the walk near its start "
     "(0: a free random walk)",
     &SkyParams::jitter_reversion, 0.0, 1.0, SkyParams::kDefaultJitterReversion},
    {"drift-x", "Drift x", "Constant drift of the field along x, pixels per frame",
     &SkyParams::drift_x, -SkyParams::kMaxDrift, SkyParams::kMaxDrift, SkyParams::kDefaultDrift},
    {"drift-y", "Drift y", "Constant drift of the field along y, pixels per frame",
     &SkyParams::drift_y, -SkyParams::kMaxDrift, SkyParams::kMaxDrift, SkyParams::kDefaultDrift},
    {"mover-snr-min", "Mover SNR min",
     "Lowest nominal peak SNR of a mover: peak pixel signal were it still and centred on a "
     "pixel / sqrt(sky + read-noise^2)",
     &SkyParams::mover_snr_min, 0.0, SkyParams::kMaxMoverSnr, SkyParams::kDefaultMoverSnrMin},
    {"mover-snr-max", "Mover SNR max", "Highest nominal peak SNR of a mover (uniform in between)",
     &SkyParams::mover_snr_max, 0.0, SkyParams::kMaxMoverSnr, SkyParams::kDefaultMoverSnrMax},
    {"mover-speed-min", "Mover speed min", "Lowest speed of a mover, pixels per frame",
     &SkyParams::mover_speed_min, 0.0, SkyParams::kMaxMoverSpeed, SkyParams::kDefaultMoverSpeedMin},
    {"mover-speed-max", "Mover speed max",
     "Highest speed of a mover, pixels per frame (uniform in between)", &SkyParams::mover_speed_max,
     0.0, SkyParams::kMaxMoverSpeed, SkyParams::kDefaultMoverSpeedMax},
    {"mover-direction", "Mover direction",
     "Direction of every mover, degrees from +x towards +y; negative: random per mover",
     &SkyParams::mover_direction, SkyParams::kRandomDirection, SkyParams::kMaxAngle,
     SkyParams::kDefaultMoverDirection},
};

constexpr guint kPropertyCount = PROP_FIRST_DOUBLE + std::size(kDoubleProperties);
static GParamSpec* properties[kPropertyCount];

#define SKY_SRC_CAPS                                          \
  "video/x-raw, format = (string) { GRAY16_LE, GRAY8 }, "     \
  "width = (int) [ 1, 65536 ], height = (int) [ 1, 65536 ], " \
  "framerate = (fraction) [ 1/2147483647, 2147483647/1 ]"

static GstStaticPadTemplate src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS(SKY_SRC_CAPS));

struct GstSiftSkySrcState {
  GstSiftSkySrcSettings settings;                     // as they were at start
  std::unique_ptr<starsift::SkyGenerator> generator;  // built when caps are set
  GstVideoInfo info{};
  starsift::PixelFormat format = starsift::PixelFormat::Gray16;
  starsift::SkyTruth truth;       // of the frame being made; reused
  std::string line;               // a pushed frame's JSON line; reused
  int truth_fd = -1;              // the truth file; -1: none, or closed after a failed write
  std::uint64_t truth_bytes = 0;  // its size: where the next line goes
  std::uint64_t truth_lines = 0;  // the frames whose truth it holds
  std::uint64_t frame = 0;        // index of the next frame

  ~GstSiftSkySrcState() {
    if (truth_fd >= 0) ::close(truth_fd);
  }
};

static void gst_sift_sky_src_set_property(GObject* object, guint prop_id, const GValue* value,
                                          GParamSpec* pspec);
static void gst_sift_sky_src_get_property(GObject* object, guint prop_id, GValue* value,
                                          GParamSpec* pspec);

#define gst_sift_sky_src_parent_class parent_class
G_DEFINE_TYPE(GstSiftSkySrc, gst_sift_sky_src, GST_TYPE_PUSH_SRC);
GST_ELEMENT_REGISTER_DEFINE(siftskysrc, "siftskysrc", GST_RANK_NONE, GST_TYPE_SIFT_SKY_SRC);

GType gst_sift_sky_psf_get_type(void) {
  static_assert(static_cast<int>(starsift::PsfKind::Gaussian) == 0 &&
                static_cast<int>(starsift::PsfKind::Moffat) == 1);
  static gsize type_id = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(starsift::PsfKind::Gaussian), "Gaussian", "gaussian"},
      {static_cast<gint>(starsift::PsfKind::Moffat),
       "Moffat: (1 + r^2/alpha^2)^-beta, wings like a real telescope's", "moffat"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type_id)) {
    g_once_init_leave(&type_id, g_enum_register_static("GstSiftSkyPsf", values));
  }
  return static_cast<GType>(type_id);
}

/* helpers */

static const DoubleProperty* gst_sift_sky_src_double_property(guint prop_id) {
  if (prop_id < PROP_FIRST_DOUBLE || prop_id >= kPropertyCount) return nullptr;
  return &kDoubleProperties[prop_id - PROP_FIRST_DOUBLE];
}

static GstClockTime gst_sift_sky_src_frame_time(const GstVideoInfo& info, std::uint64_t frame) {
  return gst_util_uint64_scale(frame,
                               GST_SECOND * static_cast<guint64>(GST_VIDEO_INFO_FPS_D(&info)),
                               static_cast<guint64>(GST_VIDEO_INFO_FPS_N(&info)));
}

// Appends `truth` to the truth file as one JSON line, whole or not at all: the line is built
// in memory and written at the file's end; when the file takes only part of it (a full disk,
// a file size limit), that part is cut off again, so the file never ends in half a line.
// Returns 0, or the errno of the failure.
static int gst_sift_sky_src_write_truth(GstSiftSkySrcState& state,
                                        const starsift::SkyTruth& truth) {
  state.line.clear();
  starsift::append_json_line(truth, state.line);
  std::size_t written = 0;
  int error = 0;
  while (written < state.line.size()) {
    const ssize_t n =
        ::write(state.truth_fd, state.line.data() + written, state.line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : ENOSPC;
      break;
    }
    written += static_cast<std::size_t>(n);
  }
  if (error == 0) {
    state.truth_bytes += written;
    ++state.truth_lines;
    return 0;
  }
  if (written > 0) {
    const auto end = static_cast<off_t>(state.truth_bytes);
    if (::ftruncate(state.truth_fd, end) != 0 || ::lseek(state.truth_fd, end, SEEK_SET) != end) {
      GST_WARNING("could not cut a partly written line off the truth file: %s", g_strerror(errno));
    }
  }
  return error;
}

// On the src pad: a frame's truth goes to the file when the frame is pushed, not when it is
// made, since a live source that stops drops the frame it made and was waiting to push.
// When the line cannot be written the frame is not pushed either, so the file holds the
// truth of exactly the frames that went downstream.
static GstPadProbeReturn gst_sift_sky_src_pushing(GstPad*, GstPadProbeInfo* info, gpointer data) {
  GstSiftSkySrc* self = GST_SIFT_SKY_SRC(data);
  GstSiftSkySrcState* state = self->state;
  if (state == nullptr || state->truth_fd < 0) return GST_PAD_PROBE_OK;
  GstBuffer* buffer = GST_PAD_PROBE_INFO_BUFFER(info);
  const GstSiftSkyTruthMeta* meta = gst_buffer_get_sift_sky_truth_meta(buffer);
  if (meta == nullptr) return GST_PAD_PROBE_OK;
  const int error = gst_sift_sky_src_write_truth(*state, meta->truth);
  if (error == 0) return GST_PAD_PROBE_OK;
  ::close(state->truth_fd);  // no more lines: the file stays a record of whole lines
  state->truth_fd = -1;
  GST_ELEMENT_ERROR(
      self, RESOURCE, WRITE,
      ("cannot write to truth-file '%s': %s; it holds the truth of the %" G_GUINT64_FORMAT
       " frames pushed before, each a whole line",
       state->settings.truth_file.c_str(), g_strerror(error), state->truth_lines),
      ("frame %" G_GUINT64_FORMAT " and later ones are not pushed", meta->truth.frame));
  gst_buffer_unref(buffer);
  GST_PAD_PROBE_INFO_DATA(info) = nullptr;
  GST_PAD_PROBE_INFO_FLOW_RETURN(info) = GST_FLOW_ERROR;
  return GST_PAD_PROBE_HANDLED;
}

/* GstBaseSrc vfuncs */

// Everything is checked here, before any frame: the parameters together (their relations),
// and the truth file (opened, truncated). Errors name the property.
static gboolean gst_sift_sky_src_start(GstBaseSrc* src) {
  GstSiftSkySrc* self = GST_SIFT_SKY_SRC(src);
  auto state = std::make_unique<GstSiftSkySrcState>();
  try {
    const starsift::gst::ObjectLock lock(self);
    state->settings = self->settings;
  } catch (...) {
    STARSIFT_POST_CURRENT_EXCEPTION(self, "starting");
    return FALSE;
  }
  try {
    state->settings.params.validate();
  } catch (...) {
    STARSIFT_POST_CURRENT_CONFIG_EXCEPTION(self, "checking the properties at start");
    return FALSE;
  }
  const std::string& path = state->settings.truth_file;
  if (!path.empty()) {
    state->truth_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (state->truth_fd < 0) {
      const int error = errno;
      GST_ELEMENT_ERROR(
          self, RESOURCE, OPEN_WRITE,
          ("cannot open truth-file '%s' for writing: %s",
           starsift::shown_value(path, starsift::kMaxShownPathBytes).c_str(), g_strerror(error)),
          (nullptr));
      return FALSE;
    }
  }
  delete self->state;
  self->state = state.release();
  return TRUE;
}

static gboolean gst_sift_sky_src_stop(GstBaseSrc* src) {
  GstSiftSkySrc* self = GST_SIFT_SKY_SRC(src);
  delete self->state;  // closes the truth file
  self->state = nullptr;
  return TRUE;
}

// Without a preference downstream: 1024x1024 GRAY16_LE at 30/1.
static GstCaps* gst_sift_sky_src_fixate(GstBaseSrc* src, GstCaps* caps) {
  caps = gst_caps_make_writable(caps);
  GstStructure* structure = gst_caps_get_structure(caps, 0);
  gst_structure_fixate_field_nearest_int(structure, "width", DEFAULT_WIDTH);
  gst_structure_fixate_field_nearest_int(structure, "height", DEFAULT_HEIGHT);
  gst_structure_fixate_field_nearest_fraction(structure, "framerate", DEFAULT_FPS_N, DEFAULT_FPS_D);
  if (gst_structure_has_field(structure, "format")) {
    gst_structure_fixate_field_string(structure, "format", DEFAULT_FORMAT);
  }
  // GRAY16_LE caps cannot say how many bits are real: a "bit-depth" field tells the starsift
  // elements downstream (others ignore it).
  const gchar* format = gst_structure_get_string(structure, "format");
  if (format != nullptr && g_str_equal(format, "GRAY16_LE")) {
    GstSiftSkySrc* self = GST_SIFT_SKY_SRC(src);
    GST_OBJECT_LOCK(self);
    const int bits = self->settings.params.bit_depth;
    GST_OBJECT_UNLOCK(self);
    gst_structure_set(structure, "bit-depth", G_TYPE_INT, bits, nullptr);
  }
  return GST_BASE_SRC_CLASS(parent_class)->fixate(src, caps);
}

// The generator is (re)built for the negotiated size and format; the frame count goes on.
static gboolean gst_sift_sky_src_set_caps(GstBaseSrc* src, GstCaps* caps) {
  GstSiftSkySrc* self = GST_SIFT_SKY_SRC(src);
  if (self->state == nullptr) return FALSE;
  GstSiftSkySrcState& state = *self->state;
  GstVideoInfo info;
  if (!gst_video_info_from_caps(&info, caps) || GST_VIDEO_INFO_FPS_N(&info) <= 0) {
    GST_ERROR_OBJECT(self, "caps without a usable size or frame rate: %" GST_PTR_FORMAT, caps);
    return FALSE;
  }
  try {
    const starsift::FrameShape shape = starsift::gst::frame_shape_from_info(info);
    SkyParams params = state.settings.params;
    params.width = shape.width;
    params.height = shape.height;
    params.validate_for(shape.format);
    if (!state.generator || state.generator->params() != params) {
      state.generator = std::make_unique<starsift::SkyGenerator>(params);
    }
    state.info = info;
    state.format = shape.format;
    GST_DEBUG_OBJECT(self, "%dx%d %s at %d/%d fps, seed %" G_GUINT64_FORMAT ", %zu stars",
                     shape.width, shape.height,
                     std::string(starsift::to_string(shape.format)).c_str(),
                     GST_VIDEO_INFO_FPS_N(&info), GST_VIDEO_INFO_FPS_D(&info), params.seed,
                     state.generator->stars().size());
  } catch (...) {
    STARSIFT_POST_CURRENT_CONFIG_EXCEPTION(self, "setting caps");
    return FALSE;
  }
  return TRUE;
}

// Downstream's pool (siftchain's pinned frame memory) when it offers one: source_allocation.
static gboolean gst_sift_sky_src_decide_allocation(GstBaseSrc* src, GstQuery* query) {
  if (!starsift::gst::decide_source_allocation(query)) return FALSE;
  return GST_BASE_SRC_CLASS(parent_class)->decide_allocation(src, query);
}

// Live: GstBaseSrc waits for the clock until each buffer's time.
static void gst_sift_sky_src_get_times(GstBaseSrc* src, GstBuffer* buffer, GstClockTime* start,
                                       GstClockTime* end) {
  *start = GST_CLOCK_TIME_NONE;
  *end = GST_CLOCK_TIME_NONE;
  if (!gst_base_src_is_live(src)) return;
  const GstClockTime pts = GST_BUFFER_PTS(buffer);
  if (!GST_CLOCK_TIME_IS_VALID(pts)) return;
  *start = pts;
  if (GST_BUFFER_DURATION_IS_VALID(buffer)) *end = pts + GST_BUFFER_DURATION(buffer);
}

// A live sky has one frame of latency: a frame is pushed when its exposure ends.
static gboolean gst_sift_sky_src_query(GstBaseSrc* src, GstQuery* query) {
  if (GST_QUERY_TYPE(query) == GST_QUERY_LATENCY) {
    GstCaps* caps = gst_pad_get_current_caps(GST_BASE_SRC_PAD(src));
    GstVideoInfo info;
    const bool known =
        caps != nullptr && gst_video_info_from_caps(&info, caps) && GST_VIDEO_INFO_FPS_N(&info) > 0;
    if (caps != nullptr) gst_caps_unref(caps);
    if (!known) return FALSE;
    const GstClockTime latency = gst_sift_sky_src_frame_time(info, 1);
    gst_query_set_latency(query, gst_base_src_is_live(src), latency, latency);
    return TRUE;
  }
  return GST_BASE_SRC_CLASS(parent_class)->query(src, query);
}

/* GstPushSrc vfuncs */

static GstFlowReturn gst_sift_sky_src_fill(GstPushSrc* push_src, GstBuffer* buffer) {
  GstSiftSkySrc* self = GST_SIFT_SKY_SRC(push_src);
  if (self->state == nullptr || !self->state->generator) goto not_negotiated;
  {
    GstSiftSkySrcState& state = *self->state;
    try {
      const starsift::gst::MappedFrame frame(state.info, buffer, GST_MAP_WRITE);
      if (!frame.ok()) goto map_failed;
      state.generator->render(state.frame, frame.view(state.format), state.truth);
    } catch (...) {
      STARSIFT_POST_CURRENT_EXCEPTION(self, "rendering a frame");
      return GST_FLOW_ERROR;
    }
    gst_buffer_add_sift_sky_truth_meta(buffer, state.truth);

    const GstClockTime pts = gst_sift_sky_src_frame_time(state.info, state.frame);
    GST_BUFFER_PTS(buffer) = pts;
    GST_BUFFER_DTS(buffer) = GST_CLOCK_TIME_NONE;
    GST_BUFFER_DURATION(buffer) = gst_sift_sky_src_frame_time(state.info, state.frame + 1) - pts;
    GST_BUFFER_OFFSET(buffer) = state.frame;
    GST_BUFFER_OFFSET_END(buffer) = state.frame + 1;
    if (state.frame == 0) GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DISCONT);

    ++state.frame;
  }
  return GST_FLOW_OK;

  /* ERRORS */
not_negotiated:
  GST_ELEMENT_ERROR(self, CORE, NEGOTIATION, (nullptr), ("a frame was asked for before caps"));
  return GST_FLOW_NOT_NEGOTIATED;
map_failed:
  GST_ELEMENT_ERROR(self, RESOURCE, WRITE, ("could not map the output buffer for writing"),
                    (nullptr));
  return GST_FLOW_ERROR;
}

/* GObject vfuncs */

static void gst_sift_sky_src_finalize(GObject* object) {
  GstSiftSkySrc* self = GST_SIFT_SKY_SRC(object);
  delete self->state;
  self->state = nullptr;
  self->settings.~GstSiftSkySrcSettings();
  G_OBJECT_CLASS(parent_class)->finalize(object);
}

static void gst_sift_sky_src_class_init(GstSiftSkySrcClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstBaseSrcClass* base_class = GST_BASE_SRC_CLASS(klass);
  GstPushSrcClass* push_class = GST_PUSH_SRC_CLASS(klass);

  GST_DEBUG_CATEGORY_INIT(gst_sift_sky_src_debug, "siftskysrc", 0, "starsift synthetic sky");

  gobject_class->set_property = gst_sift_sky_src_set_property;
  gobject_class->get_property = gst_sift_sky_src_get_property;
  gobject_class->finalize = gst_sift_sky_src_finalize;

  // Read at start: a change while running applies at the next start.
  const auto flags = static_cast<GParamFlags>(G_PARAM_READWRITE | GST_PARAM_MUTABLE_READY |
                                              G_PARAM_STATIC_STRINGS);
  properties[PROP_SEED] =
      g_param_spec_uint64("seed", "Seed",
                          "Seed of every random number: equal seeds (and properties) give "
                          "equal frames",
                          0, G_MAXUINT64, DEFAULT_PROP_SEED, flags);
  properties[PROP_PSF] =
      g_param_spec_enum("psf", "PSF", "Point spread function of stars and movers",
                        GST_TYPE_SIFT_SKY_PSF, static_cast<gint>(DEFAULT_PROP_PSF), flags);
  properties[PROP_BIT_DEPTH] = g_param_spec_int(
      "bit-depth", "Bit depth",
      "Bits of a GRAY16_LE sample (in the low bits; saturation at 2^bit-depth - 1); GRAY8 "
      "has 8",
      SkyParams::kMinBitDepth, SkyParams::kMaxBitDepth, DEFAULT_PROP_BIT_DEPTH, flags);
  properties[PROP_MOVERS] = g_param_spec_int(
      "movers", "Movers",
      "Movers in every frame; one that leaves the frame is replaced by a new one (new id)", 0,
      SkyParams::kMaxMovers, DEFAULT_PROP_MOVERS, flags);
  properties[PROP_TRUTH_FILE] = g_param_spec_string(
      "truth-file", "Truth file",
      "File to write each frame's truth to, one JSON line per frame (truncated at start); "
      "unset or empty: none",
      DEFAULT_PROP_TRUTH_FILE, flags);
  properties[PROP_IS_LIVE] = g_param_spec_boolean(
      "is-live", "Is live", "Produce frames in real time at the frame rate, like a camera",
      DEFAULT_PROP_IS_LIVE, flags);
  for (std::size_t i = 0; i < std::size(kDoubleProperties); ++i) {
    const DoubleProperty& p = kDoubleProperties[i];
    properties[PROP_FIRST_DOUBLE + i] =
        g_param_spec_double(p.name, p.nick, p.blurb, p.minimum, p.maximum, p.default_value, flags);
  }
  g_object_class_install_properties(gobject_class, kPropertyCount, properties);

  gst_element_class_set_static_metadata(
      element_class, "Synthetic sky", "Source/Video",
      "Seeded synthetic star field with known movers, each frame carrying its truth", "starsift");
  gst_element_class_add_static_pad_template(element_class, &src_template);

  base_class->start = GST_DEBUG_FUNCPTR(gst_sift_sky_src_start);
  base_class->stop = GST_DEBUG_FUNCPTR(gst_sift_sky_src_stop);
  base_class->fixate = GST_DEBUG_FUNCPTR(gst_sift_sky_src_fixate);
  base_class->set_caps = GST_DEBUG_FUNCPTR(gst_sift_sky_src_set_caps);
  base_class->decide_allocation = GST_DEBUG_FUNCPTR(gst_sift_sky_src_decide_allocation);
  base_class->get_times = GST_DEBUG_FUNCPTR(gst_sift_sky_src_get_times);
  base_class->query = GST_DEBUG_FUNCPTR(gst_sift_sky_src_query);
  push_class->fill = GST_DEBUG_FUNCPTR(gst_sift_sky_src_fill);

  gst_type_mark_as_plugin_api(GST_TYPE_SIFT_SKY_PSF, static_cast<GstPluginAPIFlags>(0));
}

static void gst_sift_sky_src_init(GstSiftSkySrc* self) {
  new (&self->settings) GstSiftSkySrcSettings();
  self->state = nullptr;
  gst_base_src_set_format(GST_BASE_SRC(self), GST_FORMAT_TIME);
  gst_base_src_set_live(GST_BASE_SRC(self), DEFAULT_PROP_IS_LIVE);
  gst_pad_add_probe(GST_BASE_SRC_PAD(self), GST_PAD_PROBE_TYPE_BUFFER, gst_sift_sky_src_pushing,
                    self, nullptr);
}

// GObject refuses values outside a property's range; what it lets through and SkyParams
// refuses (a NaN) is reported here, and the property keeps its previous value. Relations
// between properties (star-flux-min <= star-flux-max, ...) are checked at start, so they can
// be set in any order.
static void gst_sift_sky_src_set_property(GObject* object, guint prop_id, const GValue* value,
                                          GParamSpec* pspec) {
  GstSiftSkySrc* self = GST_SIFT_SKY_SRC(object);
  if (prop_id == PROP_IS_LIVE) {
    gst_base_src_set_live(GST_BASE_SRC(self), g_value_get_boolean(value));
    return;
  }
  if (prop_id == PROP_TRUTH_FILE) {
    const gchar* path = g_value_get_string(value);
    const starsift::gst::ObjectLock lock(self);
    self->settings.truth_file = path != nullptr ? path : "";
    return;
  }
  const DoubleProperty* number = gst_sift_sky_src_double_property(prop_id);
  const auto apply = [&](SkyParams& params) {
    switch (prop_id) {
      case PROP_SEED:
        params.seed = g_value_get_uint64(value);
        break;
      case PROP_PSF:
        params.psf = static_cast<starsift::PsfKind>(g_value_get_enum(value));
        break;
      case PROP_BIT_DEPTH:
        params.bit_depth = g_value_get_int(value);
        break;
      case PROP_MOVERS:
        params.movers = g_value_get_int(value);
        break;
      default:
        params.*(number->field) = g_value_get_double(value);
        break;
    }
  };
  const bool known = (prop_id >= PROP_SEED && prop_id <= PROP_MOVERS) || number != nullptr;
  if (!known) {
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
    return;
  }
  try {
    SkyParams candidate;
    {
      const starsift::gst::ObjectLock lock(self);
      candidate = self->settings.params;
    }
    apply(candidate);
    candidate.validate_fields();
    const starsift::gst::ObjectLock lock(self);
    apply(self->settings.params);
  } catch (const std::exception& e) {
    starsift::gst::warn_refused_value(object, GST_CAT_DEFAULT, pspec, e.what());
  }
}

static void gst_sift_sky_src_get_property(GObject* object, guint prop_id, GValue* value,
                                          GParamSpec* pspec) {
  GstSiftSkySrc* self = GST_SIFT_SKY_SRC(object);
  if (prop_id == PROP_IS_LIVE) {
    g_value_set_boolean(value, gst_base_src_is_live(GST_BASE_SRC(self)));
    return;
  }
  const DoubleProperty* number = gst_sift_sky_src_double_property(prop_id);
  GST_OBJECT_LOCK(self);
  const SkyParams& params = self->settings.params;
  switch (prop_id) {
    case PROP_SEED:
      g_value_set_uint64(value, params.seed);
      break;
    case PROP_PSF:
      g_value_set_enum(value, static_cast<gint>(params.psf));
      break;
    case PROP_BIT_DEPTH:
      g_value_set_int(value, params.bit_depth);
      break;
    case PROP_MOVERS:
      g_value_set_int(value, params.movers);
      break;
    case PROP_TRUTH_FILE:
      g_value_set_string(
          value, self->settings.truth_file.empty() ? nullptr : self->settings.truth_file.c_str());
      break;
    default:
      if (number != nullptr) {
        g_value_set_double(value, params.*(number->field));
      } else {
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      }
      break;
  }
  GST_OBJECT_UNLOCK(self);
}
