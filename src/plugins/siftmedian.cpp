// SPDX-License-Identifier: LGPL-2.1-or-later
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
 * Both backends give bit-identical results. Property changes take effect at the next frame,
 * at every depth without waiting for the frames in flight. A border-value the negotiated
 * format cannot hold is refused (the property keeps its value).
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

#include "pipeline/chain/chain_config.hpp"
#include "pipeline/error.hpp"
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

static void gst_sift_median_set_property(GObject* object, guint prop_id, const GValue* value,
                                         GParamSpec* pspec);
static void gst_sift_median_get_property(GObject* object, guint prop_id, GValue* value,
                                         GParamSpec* pspec);

#define gst_sift_median_parent_class parent_class
G_DEFINE_TYPE(GstSiftMedian, gst_sift_median, GST_TYPE_SIFT_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE(siftmedian, "siftmedian", GST_RANK_NONE, GST_TYPE_SIFT_MEDIAN);

/* helpers */

// Stores a property's change (`apply`) when the parameters accept it, the border value also
// against the negotiated format; starsift::Error otherwise, the property unchanged.
template <class Apply>
static void gst_sift_median_store(GstSiftMedian* self, Apply apply) {
  starsift::gst::store_checked(GST_SIFT_TRANSFORM(self), self->settings.params, apply);
}

/* GstSiftTransform hooks */

// A one-stage chain: the median with the properties' parameters.
static std::shared_ptr<const starsift::ChainConfig> gst_sift_median_describe_chain(
    GstSiftTransform* trans, gboolean) {
  return starsift::gst::one_stage_chain(trans, "median", GST_SIFT_MEDIAN(trans)->settings.params,
                                        "siftmedian properties");
}

/* GObject vfuncs */

static void gst_sift_median_class_init(GstSiftMedianClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstSiftTransformClass* sift_class = GST_SIFT_TRANSFORM_CLASS(klass);

  GST_DEBUG_CATEGORY_INIT(gst_sift_median_debug, "siftmedian", 0, "starsift median filter");

  gobject_class->set_property = gst_sift_median_set_property;
  gobject_class->get_property = gst_sift_median_get_property;

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

  sift_class->describe_chain = GST_DEBUG_FUNCPTR(gst_sift_median_describe_chain);
}

static void gst_sift_median_init(GstSiftMedian* self) {
  new (&self->settings) GstSiftMedianSettings();
  self->settings.params.size = DEFAULT_PROP_SIZE;
  self->settings.params.border = DEFAULT_PROP_BORDER;
  self->settings.params.border_value = DEFAULT_PROP_BORDER_VALUE;
}

static void gst_sift_median_set_property(GObject* object, guint prop_id, const GValue* value,
                                         GParamSpec* pspec) {
  GstSiftMedian* self = GST_SIFT_MEDIAN(object);

  // GObject enforces the ranges of the param specs; what they cannot say (odd sizes, whole
  // border values, a border value the negotiated format holds) is checked here, and a refused
  // value leaves the property unchanged.
  try {
    switch (prop_id) {
      case PROP_SIZE: {
        const int size = g_value_get_int(value);
        gst_sift_median_store(self, [size](starsift::MedianParams& p) { p.size = size; });
        break;
      }
      case PROP_BORDER: {
        const auto border = static_cast<starsift::BorderMode>(g_value_get_enum(value));
        gst_sift_median_store(self, [border](starsift::MedianParams& p) { p.border = border; });
        break;
      }
      case PROP_BORDER_VALUE: {
        const double border_value = g_value_get_double(value);
        if (border_value != std::floor(border_value)) {
          throw starsift::Error("border-value " + std::to_string(border_value) + " is not whole",
                                "whole numbers 0..255 for 8-bit formats, 0..65535 for GRAY16_LE");
        }
        gst_sift_median_store(
            self, [border_value](starsift::MedianParams& p) { p.border_value = border_value; });
        break;
      }
      default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
        return;
    }
    starsift::gst::chain_changed(GST_SIFT_TRANSFORM(self));
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
