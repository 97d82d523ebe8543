/**
 * SECTION:element-siftmedian
 * @title: siftmedian
 *
 * Replaces every pixel by the median of the size x size window around it, per colour
 * channel (alpha and padding bytes pass through untouched). Pixels outside the frame are
 * read according to #GstSiftMedian:border. The filter runs on a CUDA GPU when one is usable,
 * otherwise on the CPU; #GstSiftTransform:backend chooses, and #GstSiftTransform:active-backend
 * says which one runs.
 *
 * Both backends give bit-identical results. Property changes take effect at the next frame.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc pattern=snow ! \
 *     video/x-raw,format=GRAY16_LE,width=512,height=512 ! \
 *     siftmedian size=5 border=reflect-101 ! videoconvert ! autovideosink
 * ]| Removes salt-and-pepper noise with a 5x5 median window.
 */

#include "plugins/siftmedian.hpp"

#include <cmath>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>

#include "pipeline/error.hpp"
#include "pipeline/median/median_stage.hpp"
#include "plugins/common/enums.hpp"

GST_DEBUG_CATEGORY_STATIC(gst_sift_median_debug);
#define GST_CAT_DEFAULT gst_sift_median_debug

#define DEFAULT_PROP_SIZE starsift::MedianParams::kDefaultSize
#define DEFAULT_PROP_BORDER starsift::MedianParams::kDefaultBorder
#define DEFAULT_PROP_BORDER_VALUE starsift::MedianParams::kDefaultBorderValue

// The largest border value any GStreamer format of the element can hold (GRAY16_LE).
#define MAX_PROP_BORDER_VALUE 65535.0

// backend, device-id and active-backend: GstSiftTransform's.
enum { PROP_0, PROP_SIZE, PROP_BORDER, PROP_BORDER_VALUE, N_PROPERTIES };

static GParamSpec* properties[N_PROPERTIES];

// init() placement-constructs the settings in GObject's zeroed instance memory; nothing
// needs destroying in finalize().
static_assert(std::is_trivially_destructible_v<GstSiftMedianSettings>);

struct GstSiftMedianState {
  starsift::MedianParams applied;                // what the stage currently runs with
  std::unique_ptr<starsift::MedianStage> stage;  // depth 1: built once caps are known
  // depth >= 2: the parameters last seen by stages_generation(), and how often they changed.
  starsift::MedianParams seen;
  guint64 generation = 0;
};

static void gst_sift_median_set_property(GObject* object, guint prop_id, const GValue* value,
                                         GParamSpec* pspec);
static void gst_sift_median_get_property(GObject* object, guint prop_id, GValue* value,
                                         GParamSpec* pspec);

#define gst_sift_median_parent_class parent_class
G_DEFINE_TYPE(GstSiftMedian, gst_sift_median, GST_TYPE_SIFT_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE(siftmedian, "siftmedian", GST_RANK_NONE, GST_TYPE_SIFT_MEDIAN);

/* helpers */

static GstSiftMedianSettings gst_sift_median_copy_settings(GstSiftMedian* self) {
  GST_OBJECT_LOCK(self);
  const GstSiftMedianSettings settings = self->settings;
  GST_OBJECT_UNLOCK(self);
  return settings;
}

// Brings the stage in line with `settings` for frames of `shape` on the chosen backend: builds
// it when there is none, passes new parameters through set_params(), and with `reconfigure`
// (new caps) re-runs configure(). Throws starsift::Error.
static void gst_sift_median_update_stage(GstSiftMedian* self, const GstSiftMedianSettings& settings,
                                         const starsift::FrameShape& shape, bool reconfigure) {
  if (self->state == nullptr) throw starsift::Error("median: frames before start", "start first");
  GstSiftMedianState& state = *self->state;
  if (!state.stage) {
    const starsift::BackendChoice& choice = starsift::gst::backend_choice(GST_SIFT_TRANSFORM(self));
    auto stage = starsift::make_median_stage(settings.params, choice);
    stage->configure(shape);
    state.stage = std::move(stage);
    GST_DEBUG_OBJECT(self, "built the %s stage for %dx%d %s",
                     std::string(starsift::to_string(choice.backend)).c_str(), shape.width,
                     shape.height, std::string(starsift::to_string(shape.format)).c_str());
  } else if (reconfigure) {
    state.stage->set_params(settings.params);
    state.stage->configure(shape);
  } else if (settings.params != state.applied) {
    settings.params.validate_for(shape.format);
    state.stage->set_params(settings.params);
    GST_DEBUG_OBJECT(self, "parameters now size=%d border=%s border-value=%g", settings.params.size,
                     std::string(starsift::to_string(settings.params.border)).c_str(),
                     settings.params.border_value);
  }
  state.applied = settings.params;
}

/* GstSiftTransform hooks */

static void gst_sift_median_set_backend(GstSiftTransform* trans, const starsift::BackendChoice&) {
  GstSiftMedian* self = GST_SIFT_MEDIAN(trans);
  if (self->state == nullptr) self->state = new GstSiftMedianState();
  self->state->stage.reset();  // rebuilt on the new backend once a shape is known
}

// depth >= 2: the stage the engine runs, with the parameters set now.
static std::vector<std::unique_ptr<starsift::FilterStage>> gst_sift_median_build_stages(
    GstSiftTransform* trans, const starsift::BackendChoice& choice) {
  GstSiftMedian* self = GST_SIFT_MEDIAN(trans);
  const GstSiftMedianSettings settings = gst_sift_median_copy_settings(self);
  self->state->seen = settings.params;
  std::vector<std::unique_ptr<starsift::FilterStage>> stages;
  stages.push_back(starsift::make_median_stage(settings.params, choice));
  return stages;
}

// depth >= 2: changes when a property did, so the base rebuilds the stage for the next frame.
static guint64 gst_sift_median_stages_generation(GstSiftTransform* trans) {
  GstSiftMedian* self = GST_SIFT_MEDIAN(trans);
  const GstSiftMedianSettings settings = gst_sift_median_copy_settings(self);
  GstSiftMedianState& state = *self->state;
  if (settings.params != state.seen) {
    state.seen = settings.params;
    ++state.generation;
  }
  return state.generation;
}

static void gst_sift_median_configure(GstSiftTransform* trans, const starsift::FrameShape& shape) {
  GstSiftMedian* self = GST_SIFT_MEDIAN(trans);
  gst_sift_median_update_stage(self, gst_sift_median_copy_settings(self), shape, true);
}

static void gst_sift_median_filter(GstSiftTransform* trans, starsift::ConstImageView in,
                                   starsift::ImageView out) {
  GstSiftMedian* self = GST_SIFT_MEDIAN(trans);
  gst_sift_median_update_stage(self, gst_sift_median_copy_settings(self),
                               *starsift::gst::negotiated_shape(trans), false);
  self->state->stage->process(in, out);
}

static void gst_sift_median_reset(GstSiftTransform* trans) {
  GstSiftMedian* self = GST_SIFT_MEDIAN(trans);
  delete self->state;
  self->state = nullptr;
}

/* GObject vfuncs */

static void gst_sift_median_finalize(GObject* object) {
  gst_sift_median_reset(GST_SIFT_TRANSFORM(object));
  G_OBJECT_CLASS(parent_class)->finalize(object);
}

static void gst_sift_median_class_init(GstSiftMedianClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstSiftTransformClass* sift_class = GST_SIFT_TRANSFORM_CLASS(klass);

  GST_DEBUG_CATEGORY_INIT(gst_sift_median_debug, "siftmedian", 0, "starsift median filter");

  gobject_class->set_property = gst_sift_median_set_property;
  gobject_class->get_property = gst_sift_median_get_property;
  gobject_class->finalize = gst_sift_median_finalize;

  const auto controllable =
      static_cast<GParamFlags>(G_PARAM_READWRITE | GST_PARAM_CONTROLLABLE |
                               GST_PARAM_MUTABLE_PLAYING | G_PARAM_STATIC_STRINGS);
  properties[PROP_SIZE] = g_param_spec_int(
      "size", "Size",
      "Side of the square median window in pixels; odd values only (even values are refused)",
      starsift::MedianParams::kMinSize, starsift::MedianParams::kMaxSize, DEFAULT_PROP_SIZE,
      controllable);
  properties[PROP_BORDER] = starsift::gst::border_param_spec(
      DEFAULT_PROP_BORDER, "How pixels outside the frame are read");
  properties[PROP_BORDER_VALUE] = g_param_spec_double(
      "border-value", "Border value",
      "Value of the pixels outside the frame when border=constant, in the format's units: whole "
      "numbers 0..255 for 8-bit formats, 0..65535 for GRAY16_LE (checked against the "
      "negotiated format)",
      0.0, MAX_PROP_BORDER_VALUE, DEFAULT_PROP_BORDER_VALUE, controllable);
  g_object_class_install_properties(gobject_class, N_PROPERTIES, properties);

  gst_element_class_set_static_metadata(
      element_class, "Median filter", "Filter/Effect/Video",
      "Median of each pixel's size x size window per colour channel, on a CUDA GPU or the CPU",
      "starsift");

  sift_class->set_backend = GST_DEBUG_FUNCPTR(gst_sift_median_set_backend);
  sift_class->configure = GST_DEBUG_FUNCPTR(gst_sift_median_configure);
  sift_class->filter = GST_DEBUG_FUNCPTR(gst_sift_median_filter);
  sift_class->reset = GST_DEBUG_FUNCPTR(gst_sift_median_reset);
  sift_class->build_stages = GST_DEBUG_FUNCPTR(gst_sift_median_build_stages);
  sift_class->stages_generation = GST_DEBUG_FUNCPTR(gst_sift_median_stages_generation);
}

static void gst_sift_median_init(GstSiftMedian* self) {
  new (&self->settings) GstSiftMedianSettings();
  self->settings.params.size = DEFAULT_PROP_SIZE;
  self->settings.params.border = DEFAULT_PROP_BORDER;
  self->settings.params.border_value = DEFAULT_PROP_BORDER_VALUE;
  self->state = nullptr;
}

static void gst_sift_median_set_property(GObject* object, guint prop_id, const GValue* value,
                                         GParamSpec* pspec) {
  GstSiftMedian* self = GST_SIFT_MEDIAN(object);

  // GObject enforces the ranges of the param specs; what they cannot say (odd sizes, whole
  // border values) is checked here, and a refused value leaves the property unchanged.
  try {
    switch (prop_id) {
      case PROP_SIZE: {
        starsift::MedianParams candidate;
        candidate.size = g_value_get_int(value);
        candidate.validate();
        GST_OBJECT_LOCK(self);
        self->settings.params.size = candidate.size;
        GST_OBJECT_UNLOCK(self);
        break;
      }
      case PROP_BORDER:
        GST_OBJECT_LOCK(self);
        self->settings.params.border = static_cast<starsift::BorderMode>(g_value_get_enum(value));
        GST_OBJECT_UNLOCK(self);
        break;
      case PROP_BORDER_VALUE: {
        const double border_value = g_value_get_double(value);
        if (border_value != std::floor(border_value)) {
          throw starsift::Error("border-value " + std::to_string(border_value) + " is not whole",
                                "whole numbers 0..255 for 8-bit formats, 0..65535 for GRAY16_LE");
        }
        GST_OBJECT_LOCK(self);
        self->settings.params.border_value = border_value;
        GST_OBJECT_UNLOCK(self);
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

static void gst_sift_median_get_property(GObject* object, guint prop_id, GValue* value,
                                         GParamSpec* pspec) {
  GstSiftMedian* self = GST_SIFT_MEDIAN(object);

  GST_OBJECT_LOCK(self);
  switch (prop_id) {
    case PROP_SIZE:
      g_value_set_int(value, self->settings.params.size);
      break;
    case PROP_BORDER:
      g_value_set_enum(value, static_cast<gint>(self->settings.params.border));
      break;
    case PROP_BORDER_VALUE:
      g_value_set_double(value, self->settings.params.border_value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK(self);
}
