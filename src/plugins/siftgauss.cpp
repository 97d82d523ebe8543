// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * SECTION:element-siftgauss
 * @title: siftgauss
 *
 * Blurs every frame with a Gaussian of standard deviation #GstSiftGauss:sigma-x along x and
 * #GstSiftGauss:sigma-y along y (#GstSiftGauss:sigma sets both), per colour channel (alpha
 * and padding bytes pass through untouched). Pixels outside the frame are read according to
 * #GstSiftGauss:border. Along an axis the weights reach #GstSiftGauss:radius-x (or
 * #GstSiftGauss:radius-y) pixels each side; 0, the default, takes ceil(4 sigma), beyond
 * which the Gaussian holds 6.3e-5 of its weight. sigma 0 leaves that axis untouched.
 *
 * The filter runs on a CUDA GPU when one is usable, otherwise on the CPU;
 * #GstSiftTransform:backend chooses, and #GstSiftTransform:active-backend says which one runs.
 * The CPU sums the weights directly while the larger sigma is below 50, giving the reference
 * blur bit for bit, and from sigma 50 runs Deriche's fourth-order recursion, whose cost does
 * not grow with sigma and which lands within 0.11 % of the exact blur's peak (the radius
 * plays no part there). The GPU sums directly up to sigma 4, on 8-bit grey frames below
 * sigma 5.5 (within one count of the reference); beyond, with the automatic radius, it reduces
 * the frame by about sigma / 2.5, blurs the small plane and interpolates back, whose cost
 * does not grow with sigma either and which lands within 0.5 % of a point source's peak from
 * sigma 9 (1.2 % below); with a radius of the user's it recurses (docs/gauss.md).
 *
 * Property changes take effect at the next frame, at every depth without waiting for the
 * frames in flight. A border-value the negotiated format cannot hold is refused (the
 * property keeps its value).
 *
 * ## Example launch line
 * |[
 * gst-launch-1.0 videotestsrc pattern=snow ! \
 *     video/x-raw,format=GRAY16_LE,width=512,height=512 ! \
 *     siftgauss sigma=2 ! videoconvert ! autovideosink
 * ]| Smooths the noise with a Gaussian of sigma 2 pixels (radius 8).
 */

#include "plugins/siftgauss.hpp"

#include <exception>
#include <memory>
#include <type_traits>

#include "pipeline/chain/chain_config.hpp"
#include "plugins/common/enums.hpp"

GST_DEBUG_CATEGORY_STATIC(gst_sift_gauss_debug);
#define GST_CAT_DEFAULT gst_sift_gauss_debug

// The defaults are GaussParams's own.
static constexpr starsift::GaussParams kDefaults{};

// The largest border value any GStreamer format of the element can hold (GRAY16_LE).
#define MAX_PROP_BORDER_VALUE 65535.0

// backend, device-id and active-backend: GstSiftTransform's.
enum {
  PROP_0,
  PROP_SIGMA,
  PROP_SIGMA_X,
  PROP_SIGMA_Y,
  PROP_RADIUS,
  PROP_RADIUS_X,
  PROP_RADIUS_Y,
  PROP_BORDER,
  PROP_BORDER_VALUE,
  N_PROPERTIES
};

static GParamSpec* properties[N_PROPERTIES];

// init() placement-constructs the settings in GObject's zeroed instance memory; nothing
// needs destroying in finalize().
static_assert(std::is_trivially_destructible_v<GstSiftGaussSettings>);

static void gst_sift_gauss_set_property(GObject* object, guint prop_id, const GValue* value,
                                        GParamSpec* pspec);
static void gst_sift_gauss_get_property(GObject* object, guint prop_id, GValue* value,
                                        GParamSpec* pspec);

#define gst_sift_gauss_parent_class parent_class
G_DEFINE_TYPE(GstSiftGauss, gst_sift_gauss, GST_TYPE_SIFT_TRANSFORM);
GST_ELEMENT_REGISTER_DEFINE(siftgauss, "siftgauss", GST_RANK_NONE, GST_TYPE_SIFT_GAUSS);

/* helpers */

// Checks `candidate` (the current parameters with one property changed) and, if it holds,
// stores the fields `apply` names; Error otherwise, the property unchanged. The border value
// is also checked against the negotiated format, when there is one.
template <class Apply>
static void gst_sift_gauss_store(GstSiftGauss* self, Apply apply) {
  starsift::gst::store_checked(GST_SIFT_TRANSFORM(self), self->settings.params, apply);
}

/* GstSiftTransform hooks */

// A one-stage chain: the blur with the properties' parameters.
static std::shared_ptr<const starsift::ChainConfig> gst_sift_gauss_describe_chain(
    GstSiftTransform* trans, gboolean) {
  return starsift::gst::one_stage_chain(trans, "gauss", GST_SIFT_GAUSS(trans)->settings.params,
                                        "siftgauss properties");
}

/* GObject vfuncs */

static void gst_sift_gauss_class_init(GstSiftGaussClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstElementClass* element_class = GST_ELEMENT_CLASS(klass);
  GstSiftTransformClass* sift_class = GST_SIFT_TRANSFORM_CLASS(klass);

  GST_DEBUG_CATEGORY_INIT(gst_sift_gauss_debug, "siftgauss", 0, "starsift Gaussian blur");

  gobject_class->set_property = gst_sift_gauss_set_property;
  gobject_class->get_property = gst_sift_gauss_get_property;

  using starsift::GaussParams;
  const auto controllable =
      static_cast<GParamFlags>(G_PARAM_READWRITE | GST_PARAM_CONTROLLABLE |
                               GST_PARAM_MUTABLE_PLAYING | G_PARAM_STATIC_STRINGS);
  properties[PROP_SIGMA] = g_param_spec_double(
      "sigma", "Sigma",
      "Standard deviation of the Gaussian in pixels along both axes (reading it gives "
      "sigma-x); 0: no blur",
      0.0, GaussParams::kMaxSigma, kDefaults.sigma_x, controllable);
  properties[PROP_SIGMA_X] =
      g_param_spec_double("sigma-x", "Sigma x",
                          "Standard deviation of the Gaussian along x in pixels; 0: no blur "
                          "along x",
                          0.0, GaussParams::kMaxSigma, kDefaults.sigma_x, controllable);
  properties[PROP_SIGMA_Y] =
      g_param_spec_double("sigma-y", "Sigma y",
                          "Standard deviation of the Gaussian along y in pixels; 0: no blur "
                          "along y",
                          0.0, GaussParams::kMaxSigma, kDefaults.sigma_y, controllable);
  properties[PROP_RADIUS] = g_param_spec_int(
      "radius", "Radius",
      "Pixels each side the weights reach along both axes (reading it gives radius-x); 0: "
      "ceil(4 sigma)",
      0, GaussParams::kMaxRadius, kDefaults.radius_x, controllable);
  properties[PROP_RADIUS_X] = g_param_spec_int(
      "radius-x", "Radius x", "Pixels each side the weights reach along x; 0: ceil(4 sigma-x)", 0,
      GaussParams::kMaxRadius, kDefaults.radius_x, controllable);
  properties[PROP_RADIUS_Y] = g_param_spec_int(
      "radius-y", "Radius y", "Pixels each side the weights reach along y; 0: ceil(4 sigma-y)", 0,
      GaussParams::kMaxRadius, kDefaults.radius_y, controllable);
  properties[PROP_BORDER] =
      starsift::gst::border_param_spec(kDefaults.border, "How pixels outside the frame are read");
  properties[PROP_BORDER_VALUE] = g_param_spec_double(
      "border-value", "Border value",
      "Value of the pixels outside the frame when border=constant, in the format's units: "
      "0..255 for 8-bit formats, 0..65535 for GRAY16_LE (checked against the negotiated "
      "format)",
      0.0, MAX_PROP_BORDER_VALUE, kDefaults.border_value, controllable);
  g_object_class_install_properties(gobject_class, N_PROPERTIES, properties);

  gst_element_class_set_static_metadata(
      element_class, "Gaussian blur", "Filter/Effect/Video",
      "Gaussian blur per colour channel, sigma and radius per axis, on a CUDA GPU or the CPU",
      "starsift");

  sift_class->describe_chain = GST_DEBUG_FUNCPTR(gst_sift_gauss_describe_chain);
}

static void gst_sift_gauss_init(GstSiftGauss* self) {
  new (&self->settings) GstSiftGaussSettings();
}

static void gst_sift_gauss_set_property(GObject* object, guint prop_id, const GValue* value,
                                        GParamSpec* pspec) {
  GstSiftGauss* self = GST_SIFT_GAUSS(object);
  using starsift::GaussParams;

  // GObject enforces the ranges of the param specs; what they cannot say (NaN, a border
  // value the negotiated format holds) is checked here, and a refused value leaves the
  // property unchanged.
  try {
    switch (prop_id) {
      case PROP_SIGMA: {
        const double sigma = g_value_get_double(value);
        gst_sift_gauss_store(self, [sigma](GaussParams& p) { p.sigma_x = p.sigma_y = sigma; });
        break;
      }
      case PROP_SIGMA_X: {
        const double sigma = g_value_get_double(value);
        gst_sift_gauss_store(self, [sigma](GaussParams& p) { p.sigma_x = sigma; });
        break;
      }
      case PROP_SIGMA_Y: {
        const double sigma = g_value_get_double(value);
        gst_sift_gauss_store(self, [sigma](GaussParams& p) { p.sigma_y = sigma; });
        break;
      }
      case PROP_RADIUS: {
        const int radius = g_value_get_int(value);
        gst_sift_gauss_store(self, [radius](GaussParams& p) { p.radius_x = p.radius_y = radius; });
        break;
      }
      case PROP_RADIUS_X: {
        const int radius = g_value_get_int(value);
        gst_sift_gauss_store(self, [radius](GaussParams& p) { p.radius_x = radius; });
        break;
      }
      case PROP_RADIUS_Y: {
        const int radius = g_value_get_int(value);
        gst_sift_gauss_store(self, [radius](GaussParams& p) { p.radius_y = radius; });
        break;
      }
      case PROP_BORDER: {
        const auto border = static_cast<starsift::BorderMode>(g_value_get_enum(value));
        gst_sift_gauss_store(self, [border](GaussParams& p) { p.border = border; });
        break;
      }
      case PROP_BORDER_VALUE: {
        const double border_value = g_value_get_double(value);
        gst_sift_gauss_store(self,
                             [border_value](GaussParams& p) { p.border_value = border_value; });
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

static void gst_sift_gauss_get_property(GObject* object, guint prop_id, GValue* value,
                                        GParamSpec* pspec) {
  GstSiftGauss* self = GST_SIFT_GAUSS(object);

  GST_OBJECT_LOCK(self);
  const starsift::GaussParams& params = self->settings.params;
  switch (prop_id) {
    case PROP_SIGMA:
    case PROP_SIGMA_X:
      g_value_set_double(value, params.sigma_x);
      break;
    case PROP_SIGMA_Y:
      g_value_set_double(value, params.sigma_y);
      break;
    case PROP_RADIUS:
    case PROP_RADIUS_X:
      g_value_set_int(value, params.radius_x);
      break;
    case PROP_RADIUS_Y:
      g_value_set_int(value, params.radius_y);
      break;
    case PROP_BORDER:
      g_value_set_enum(value, static_cast<gint>(params.border));
      break;
    case PROP_BORDER_VALUE:
      g_value_set_double(value, params.border_value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK(self);
}
