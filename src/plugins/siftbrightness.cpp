// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * SECTION:element-siftbrightness
 * @title: siftbrightness
 *
 * Adaptive brightness correction: lifts dark regions and holds bright ones, each pixel after
 * its own surroundings, so a sky camera's dark foreground and faint sky show without the bright
 * parts burning out. docs/brightness.md has the maths.
 *
 * #GstSiftBrightness:mode local (the default) is Moroney's non-linear masking: with Y the
 * pixel's luminance (0..1) and B the luminance blurred by a Gaussian of
 * #GstSiftBrightness:sigma pixels, Y' = Y^(2^(strength (2 B - 1))): dark surroundings (B below
 * one half) lift the pixel, bright ones compress it a little. #GstSiftBrightness:strength 0 is
 * the identity, 1 Moroney's correction. mode clahe is contrast-limited adaptive histogram
 * equalisation on #GstSiftBrightness:tiles-x by #GstSiftBrightness:tiles-y tiles, each bin
 * clipped at #GstSiftBrightness:clip-limit times the mean. #GstSiftBrightness:alpha blends
 * the corrected luminance with the original (1: the correction alone). Then an optional
 * #GstSiftBrightness:stretch: fixed maps stretch-min..stretch-max onto the full range,
 * percentile the frame's own low-percentile..high-percentile.
 *
 * Grey frames (GRAY8, GRAY16_LE at the negotiated bit-depth, so a 12-bit camera's 4096
 * values) are corrected directly. Colour frames (RGBA, BGRA, RGBx, BGRx) are corrected on
 * their BT.709 luma, and R, G and B scaled alike by the ratio of the new luma to the old, so
 * hues hold; alpha and padding bytes pass through untouched.
 *
 * Runs on the CPU or a CUDA GPU, as #GstSiftTransform:backend chooses (auto: the GPU where one
 * is usable); #GstSiftTransform:active-backend says which one runs. From sigma 8 both blur the
 * luminance on a downsampled plane, the GPU as the CPU does; below, the CPU sums the Gaussian
 * exactly, the GPU too up to sigma 4 and by the Gaussian's recursion beyond. On 8- and 12-bit
 * frames each stays within two counts of the exact definition. Property changes
 * take effect at the next frame. A value out of its own range is refused at once (the property
 * keeps its value); the rules that join two properties (low-percentile below high-percentile,
 * stretch-min below stretch-max when stretch=fixed) and those that depend on the frames
 * (stretch-max within the bit depth, no clahe on GRAY32F) are checked when the element starts
 * or the change reaches the stream: at start a failure is an error, while playing the running
 * parameters are kept and a warning says why.
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 siftskysrc num-buffers=1 ! video/x-raw,format=GRAY16_LE,width=1024,height=768 ! \
 *     siftbrightness backend=cpu sigma=40 strength=1 stretch=percentile ! \
 *     videoconvert ! pngenc ! filesink location=sky.png
 * ]| Brightens the dark parts of a synthetic sky frame and stretches 0.5 %..99.5 % onto the
 * full range.
 */

#include "plugins/siftbrightness.hpp"

#include <exception>
#include <memory>
#include <type_traits>

#include "pipeline/chain/chain_config.hpp"
#include "plugins/common/enums.hpp"

GST_DEBUG_CATEGORY_STATIC(gst_sift_brightness_debug);
#define GST_CAT_DEFAULT gst_sift_brightness_debug

// The defaults are BrightnessParams's own.
static constexpr starsift::BrightnessParams kDefaults{};

// The largest sample value of any format of the element (GRAY16_LE at 16 bits).
#define MAX_PROP_STRETCH_VALUE 65535.0

// backend, device-id and active-backend: GstSiftTransform's.
enum {
  PROP_0,
  PROP_MODE,
  PROP_SIGMA,
  PROP_STRENGTH,
  PROP_TILES_X,
  PROP_TILES_Y,
  PROP_CLIP_LIMIT,
  PROP_ALPHA,
  PROP_STRETCH,
  PROP_STRETCH_MIN,
  PROP_STRETCH_MAX,
  PROP_LOW_PERCENTILE,
  PROP_HIGH_PERCENTILE,
  N_PROPERTIES
};

static GParamSpec* properties[N_PROPERTIES];

// init() placement-constructs the settings in GObject's zeroed instance memory; nothing
// needs destroying in finalize().
static_assert(std::is_trivially_destructible_v<GstSiftBrightnessSettings>);

static void gst_sift_brightness_set_property(GObject* object, guint prop_id, const GValue* value,
                                             GParamSpec* pspec);
static void gst_sift_brightness_get_property(GObject* object, guint prop_id, GValue* value,
                                             GParamSpec* pspec);

#define gst_sift_brightness_parent_class parent_class
G_DEFINE_TYPE(GstSiftBrightness, gst_sift_brightness, GST_TYPE_SIFT_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE(siftbrightness, "siftbrightness", GST_RANK_NONE,
                            GST_TYPE_SIFT_BRIGHTNESS);

/* helpers */

// Checks the value `apply` writes on its own (the pairs set aside: the percentile not being
// set at its extreme, the stretch none, so a launch line may give stretch=fixed before
// stretch-max) and stores it; Error otherwise, the property unchanged.
template <class Apply>
static void gst_sift_brightness_store(GstSiftBrightness* self, guint prop_id, Apply apply) {
  starsift::BrightnessParams alone = starsift::gst::locked_copy(self, self->settings.params);
  apply(alone);
  alone.stretch = starsift::BrightnessStretch::None;
  if (prop_id != PROP_LOW_PERCENTILE) alone.low_percentile = 0.0;
  if (prop_id != PROP_HIGH_PERCENTILE) alone.high_percentile = 100.0;
  alone.validate();
  const starsift::gst::ObjectLock lock(self);
  apply(self->settings.params);
}

/* GstSiftTransform hooks */

// A one-stage chain: the correction with the properties' parameters, the pairs checked now.
static std::shared_ptr<const starsift::ChainConfig> gst_sift_brightness_describe_chain(
    GstSiftTransform* trans, gboolean) {
  auto chain = std::make_shared<starsift::ChainConfig>();
  const starsift::BrightnessParams params =
      starsift::gst::locked_copy(trans, GST_SIFT_BRIGHTNESS(trans)->settings.params);
  params.validate();
  chain->stages.push_back({"brightness", params, {"siftbrightness properties"}});
  return chain;
}

/* GObject vfuncs */

static void gst_sift_brightness_class_init(GstSiftBrightnessClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstSiftTransformClass* sift_class = GST_SIFT_TRANSFORM_CLASS(klass);

  GST_DEBUG_CATEGORY_INIT(gst_sift_brightness_debug, "siftbrightness", 0,
                          "starsift adaptive brightness correction");

  gobject_class->set_property = gst_sift_brightness_set_property;
  gobject_class->get_property = gst_sift_brightness_get_property;

  using starsift::BrightnessParams;
  const auto controllable =
      static_cast<GParamFlags>(G_PARAM_READWRITE | GST_PARAM_CONTROLLABLE |
                               GST_PARAM_MUTABLE_PLAYING | G_PARAM_STATIC_STRINGS);
  properties[PROP_MODE] = g_param_spec_enum(
      "mode", "Mode",
      "local: Moroney's correction after the blurred luminance; clahe: contrast-limited "
      "adaptive histogram equalisation",
      GST_TYPE_SIFT_BRIGHTNESS_MODE, static_cast<gint>(kDefaults.mode), controllable);
  properties[PROP_SIGMA] = g_param_spec_double(
      "sigma", "Sigma",
      "mode local: the size of a region, the standard deviation in pixels of the Gaussian that "
      "blurs the luminance into B (above 0)",
      0.0, BrightnessParams::kMaxSigma, kDefaults.sigma, controllable);
  properties[PROP_STRENGTH] = g_param_spec_double(
      "strength", "Strength",
      "mode local: Y' = Y^(2^(strength (2 B - 1))); 0: no correction, 1: Moroney's", 0.0,
      BrightnessParams::kMaxStrength, kDefaults.strength, controllable);
  properties[PROP_TILES_X] =
      g_param_spec_int("tiles-x", "Tiles x", "mode clahe: tiles across the frame", 1,
                       BrightnessParams::kMaxTiles, kDefaults.tiles_x, controllable);
  properties[PROP_TILES_Y] =
      g_param_spec_int("tiles-y", "Tiles y", "mode clahe: tiles down the frame", 1,
                       BrightnessParams::kMaxTiles, kDefaults.tiles_y, controllable);
  properties[PROP_CLIP_LIMIT] = g_param_spec_double(
      "clip-limit", "Clip limit",
      "mode clahe: the most a histogram bin holds, in mean bins; 0: no limit, else 1 or more", 0.0,
      G_MAXDOUBLE, kDefaults.clip_limit, controllable);
  properties[PROP_ALPHA] = g_param_spec_double(
      "alpha", "Alpha",
      "Blend of the corrected luminance with the original: 1 the correction alone, 0 the "
      "original",
      0.0, 1.0, kDefaults.alpha, controllable);
  properties[PROP_STRETCH] = g_param_spec_enum(
      "stretch", "Stretch",
      "After the correction: none; fixed: stretch-min..stretch-max onto the full range; "
      "percentile: the frame's low-percentile..high-percentile onto the full range",
      GST_TYPE_SIFT_BRIGHTNESS_STRETCH, static_cast<gint>(kDefaults.stretch), controllable);
  properties[PROP_STRETCH_MIN] = g_param_spec_double(
      "stretch-min", "Stretch min",
      "stretch=fixed: the value mapped onto 0, in the format's units (0..1 for GRAY32F); below "
      "stretch-max",
      0.0, MAX_PROP_STRETCH_VALUE, kDefaults.stretch_min, controllable);
  properties[PROP_STRETCH_MAX] = g_param_spec_double(
      "stretch-max", "Stretch max",
      "stretch=fixed: the value mapped onto the maximum, in the format's units: at most "
      "2^bit-depth - 1 for GRAY16_LE, 255 for 8-bit formats, 1 for GRAY32F",
      0.0, MAX_PROP_STRETCH_VALUE, kDefaults.stretch_max, controllable);
  properties[PROP_LOW_PERCENTILE] = g_param_spec_double(
      "low-percentile", "Low percentile",
      "stretch=percentile: the percentage of the frame's values mapped onto 0 or below it; "
      "below high-percentile",
      0.0, 100.0, kDefaults.low_percentile, controllable);
  properties[PROP_HIGH_PERCENTILE] = g_param_spec_double(
      "high-percentile", "High percentile",
      "stretch=percentile: the percentage of the frame's values mapped onto the maximum or "
      "below it",
      0.0, 100.0, kDefaults.high_percentile, controllable);
  g_object_class_install_properties(gobject_class, N_PROPERTIES, properties);

  gst_element_class_set_static_metadata(
      element_class, "Adaptive brightness correction", "Filter/Effect/Video",
      "Lifts dark regions after their surroundings (Moroney's local correction or CLAHE), "
      "with an optional stretch, on the CPU",
      "starsift");

  sift_class->describe_chain = GST_DEBUG_FUNCPTR(gst_sift_brightness_describe_chain);
}

static void gst_sift_brightness_init(GstSiftBrightness* self) {
  new (&self->settings) GstSiftBrightnessSettings();
}

static void gst_sift_brightness_set_property(GObject* object, guint prop_id, const GValue* value,
                                             GParamSpec* pspec) {
  GstSiftBrightness* self = GST_SIFT_BRIGHTNESS(object);
  using starsift::BrightnessParams;

  // GObject enforces the ranges of the param specs; what they cannot say (sigma above 0, a
  // clip limit of 0 or from 1) is checked here, and a refused value leaves the property
  // unchanged.
  const auto number = [&](double BrightnessParams::*field) {
    const double v = g_value_get_double(value);
    gst_sift_brightness_store(self, prop_id, [field, v](BrightnessParams& p) { p.*field = v; });
  };
  const auto integer = [&](int BrightnessParams::*field) {
    const int v = g_value_get_int(value);
    gst_sift_brightness_store(self, prop_id, [field, v](BrightnessParams& p) { p.*field = v; });
  };
  try {
    switch (prop_id) {
      case PROP_MODE: {
        const auto mode = static_cast<starsift::BrightnessMode>(g_value_get_enum(value));
        gst_sift_brightness_store(self, prop_id, [mode](BrightnessParams& p) { p.mode = mode; });
        break;
      }
      case PROP_SIGMA:
        number(&BrightnessParams::sigma);
        break;
      case PROP_STRENGTH:
        number(&BrightnessParams::strength);
        break;
      case PROP_TILES_X:
        integer(&BrightnessParams::tiles_x);
        break;
      case PROP_TILES_Y:
        integer(&BrightnessParams::tiles_y);
        break;
      case PROP_CLIP_LIMIT:
        number(&BrightnessParams::clip_limit);
        break;
      case PROP_ALPHA:
        number(&BrightnessParams::alpha);
        break;
      case PROP_STRETCH: {
        const auto stretch = static_cast<starsift::BrightnessStretch>(g_value_get_enum(value));
        gst_sift_brightness_store(self, prop_id,
                                  [stretch](BrightnessParams& p) { p.stretch = stretch; });
        break;
      }
      case PROP_STRETCH_MIN:
        number(&BrightnessParams::stretch_min);
        break;
      case PROP_STRETCH_MAX:
        number(&BrightnessParams::stretch_max);
        break;
      case PROP_LOW_PERCENTILE:
        number(&BrightnessParams::low_percentile);
        break;
      case PROP_HIGH_PERCENTILE:
        number(&BrightnessParams::high_percentile);
        break;
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        return;
    }
    starsift::gst::chain_changed(GST_SIFT_TRANSFORM(self));
  } catch (const std::exception& e) {
    starsift::gst::warn_refused_value(object, GST_CAT_DEFAULT, pspec, e.what());
  }
}

static void gst_sift_brightness_get_property(GObject* object, guint prop_id, GValue* value,
                                             GParamSpec* pspec) {
  GstSiftBrightness* self = GST_SIFT_BRIGHTNESS(object);

  GST_OBJECT_LOCK(self);
  const starsift::BrightnessParams& params = self->settings.params;
  switch (prop_id) {
    case PROP_MODE:
      g_value_set_enum(value, static_cast<gint>(params.mode));
      break;
    case PROP_SIGMA:
      g_value_set_double(value, params.sigma);
      break;
    case PROP_STRENGTH:
      g_value_set_double(value, params.strength);
      break;
    case PROP_TILES_X:
      g_value_set_int(value, params.tiles_x);
      break;
    case PROP_TILES_Y:
      g_value_set_int(value, params.tiles_y);
      break;
    case PROP_CLIP_LIMIT:
      g_value_set_double(value, params.clip_limit);
      break;
    case PROP_ALPHA:
      g_value_set_double(value, params.alpha);
      break;
    case PROP_STRETCH:
      g_value_set_enum(value, static_cast<gint>(params.stretch));
      break;
    case PROP_STRETCH_MIN:
      g_value_set_double(value, params.stretch_min);
      break;
    case PROP_STRETCH_MAX:
      g_value_set_double(value, params.stretch_max);
      break;
    case PROP_LOW_PERCENTILE:
      g_value_set_double(value, params.low_percentile);
      break;
    case PROP_HIGH_PERCENTILE:
      g_value_set_double(value, params.high_percentile);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK(self);
}
