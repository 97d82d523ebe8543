// SPDX-License-Identifier: LGPL-2.1-or-later
#include "plugins/common/enums.hpp"

#include <gst/gst.h>

namespace {

// The GEnum values below are the enum class values, so a g_value_get_enum() converts with a
// static_cast.
static_assert(static_cast<int>(starsift::Backend::Auto) == 0 &&
              static_cast<int>(starsift::Backend::Cuda) == 1 &&
              static_cast<int>(starsift::Backend::Cpu) == 2);
static_assert(static_cast<int>(starsift::BorderMode::Replicate) == 0 &&
              static_cast<int>(starsift::BorderMode::Reflect101) == 1 &&
              static_cast<int>(starsift::BorderMode::Constant) == 2);
static_assert(static_cast<int>(starsift::WhitenFit::Current) == 0 &&
              static_cast<int>(starsift::WhitenFit::Past) == 1);
static_assert(static_cast<int>(starsift::WhitenShift::None) == 0 &&
              static_cast<int>(starsift::WhitenShift::Resample) == 1);
static_assert(static_cast<int>(starsift::WhitenReject::None) == 0 &&
              static_cast<int>(starsift::WhitenReject::Mask) == 1 &&
              static_cast<int>(starsift::WhitenReject::Objects) == 2);
static_assert(static_cast<int>(starsift::WhitenWarmup::Passthrough) == 0 &&
              static_cast<int>(starsift::WhitenWarmup::Zeros) == 1 &&
              static_cast<int>(starsift::WhitenWarmup::Partial) == 2);

// Registers `values` as the GEnum `name` once.
GType register_enum(gsize* type_id, const char* name, const GEnumValue* values) {
  if (g_once_init_enter(type_id)) g_once_init_leave(type_id, g_enum_register_static(name, values));
  return static_cast<GType>(*type_id);
}

}  // namespace

GType gst_sift_backend_get_type(void) {
  static gsize type_id = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(starsift::Backend::Auto),
       "CUDA when a usable GPU is present, else the CPU (logged)", "auto"},
      {static_cast<gint>(starsift::Backend::Cuda), "CUDA device device-id; fails without one",
       "cuda"},
      {static_cast<gint>(starsift::Backend::Cpu), "CPU (multi-threaded reference)", "cpu"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type_id)) {
    g_once_init_leave(&type_id, g_enum_register_static("GstSiftBackend", values));
  }
  return static_cast<GType>(type_id);
}

GType gst_sift_border_get_type(void) {
  static gsize type_id = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(starsift::BorderMode::Replicate), "Repeat the edge pixel (aaa|abcd|ddd)",
       "replicate"},
      {static_cast<gint>(starsift::BorderMode::Reflect101),
       "Mirror without repeating the edge (dcb|abcd|cba)", "reflect-101"},
      {static_cast<gint>(starsift::BorderMode::Constant),
       "The value of border-value (vvv|abcd|vvv)", "constant"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type_id)) {
    g_once_init_leave(&type_id, g_enum_register_static("GstSiftBorder", values));
  }
  return static_cast<GType>(type_id);
}

// The nicks are the names WhitenParams' YAML keys take (params.cpp), so a chain file and a
// launch line spell a value the same way.
GType gst_sift_whiten_fit_get_type(void) {
  static gsize type_id = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(starsift::WhitenFit::Current),
       "Fit the weights to the frame being whitened (adapts at once; two passes)", "current"},
      {static_cast<gint>(starsift::WhitenFit::Past),
       "Fit the weights to the previous frame (one pass; movers never pull the fit)", "past"},
      {0, nullptr, nullptr},
  };
  return register_enum(&type_id, "GstSiftWhitenFit", values);
}

GType gst_sift_brightness_mode_get_type(void) {
  static gsize type_id = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(starsift::BrightnessMode::Local),
       "Moroney's local correction: Y^(2^(strength (2 B - 1))), B the blurred luminance", "local"},
      {static_cast<gint>(starsift::BrightnessMode::Clahe),
       "Contrast-limited adaptive histogram equalisation on tiles-x x tiles-y tiles", "clahe"},
      {0, nullptr, nullptr},
  };
  return register_enum(&type_id, "GstSiftBrightnessMode", values);
}

GType gst_sift_brightness_stretch_get_type(void) {
  static gsize type_id = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(starsift::BrightnessStretch::None), "No stretch", "none"},
      {static_cast<gint>(starsift::BrightnessStretch::Fixed),
       "stretch-min..stretch-max onto the full range", "fixed"},
      {static_cast<gint>(starsift::BrightnessStretch::Percentile),
       "The frame's low-percentile..high-percentile onto the full range", "percentile"},
      {0, nullptr, nullptr},
  };
  return register_enum(&type_id, "GstSiftBrightnessStretch", values);
}

GType gst_sift_whiten_shift_get_type(void) {
  static gsize type_id = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(starsift::WhitenShift::None),
       "Use frames on the camera's grid as they come", "none"},
      {static_cast<gint>(starsift::WhitenShift::Resample),
       "Measure each frame's shift (phase correlation) and resample it onto the first frame's grid",
       "resample"},
      {0, nullptr, nullptr},
  };
  return register_enum(&type_id, "GstSiftWhitenShift", values);
}

GType gst_sift_whiten_reject_get_type(void) {
  static gsize type_id = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(starsift::WhitenReject::None), "Store every frame in the history as it is",
       "none"},
      {static_cast<gint>(starsift::WhitenReject::Mask),
       "Store the prediction where |residual| > reject-sigma * sigma (movers stay out of the "
       "history)",
       "mask"},
      {static_cast<gint>(starsift::WhitenReject::Objects),
       "As mask, and also store the prediction next to every 3 x 3 box whose residual sum is "
       "significant (reject-object-sigma): faint slow movers stay out of the history",
       "objects"},
      {0, nullptr, nullptr},
  };
  return register_enum(&type_id, "GstSiftWhitenReject", values);
}

static_assert(static_cast<int>(starsift::WhitenHistoryFormat::Float) == 0 &&
              static_cast<int>(starsift::WhitenHistoryFormat::Half) == 1);

GType gst_sift_whiten_history_format_get_type(void) {
  static gsize type_id = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(starsift::WhitenHistoryFormat::Float), "Keep the history as float",
       "float"},
      {static_cast<gint>(starsift::WhitenHistoryFormat::Half),
       "Keep the history as binary16 (each stored value rounded to 11 significant bits; half "
       "the memory and the bytes read per frame; GRAY8 and GRAY16_LE)",
       "half"},
      {0, nullptr, nullptr},
  };
  return register_enum(&type_id, "GstSiftWhitenHistoryFormat", values);
}

GType gst_sift_whiten_warmup_get_type(void) {
  static gsize type_id = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(starsift::WhitenWarmup::Passthrough), "Output the input itself",
       "passthrough"},
      {static_cast<gint>(starsift::WhitenWarmup::Zeros), "Output the zero level (offset)", "zeros"},
      {static_cast<gint>(starsift::WhitenWarmup::Partial), "Whiten with the frames available",
       "partial"},
      {0, nullptr, nullptr},
  };
  return register_enum(&type_id, "GstSiftWhitenWarmup", values);
}

GType gst_sift_whiten_output_get_type(void) {
  static gsize type_id = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(starsift::WhitenOutput::Significance),
       "offset + gain * residual / sigma: whitening's significance, which siftdetect thresholds",
       "significance"},
      {static_cast<gint>(starsift::WhitenOutput::Residual), "offset + gain * residual", "residual"},
      {0, nullptr, nullptr},
  };
  return register_enum(&type_id, "GstSiftWhitenOutput", values);
}

GType gst_sift_detect_background_get_type(void) {
  static gsize type_id = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(starsift::DetectBackground::Auto),
       "The input's own significance scale when it has one (siftwhiten output=significance), "
       "else mesh",
       "auto"},
      {static_cast<gint>(starsift::DetectBackground::Mesh),
       "Sigma-clipped mean and sigma per tile of mesh px, interpolated", "mesh"},
      {static_cast<gint>(starsift::DetectBackground::Global),
       "One sigma-clipped mean and sigma for the frame", "global"},
      {static_cast<gint>(starsift::DetectBackground::None),
       "The input is a significance image: its scale when it has one, else background 0, "
       "sigma 1",
       "none"},
      {0, nullptr, nullptr},
  };
  return register_enum(&type_id, "GstSiftDetectBackground", values);
}

GType gst_sift_detect_filter_get_type(void) {
  static gsize type_id = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(starsift::DetectFilter::None), "Each pixel alone", "none"},
      {static_cast<gint>(starsift::DetectFilter::Default), "Source Extractor's default 3x3 kernel",
       "default"},
      {static_cast<gint>(starsift::DetectFilter::Gaussian), "A Gaussian PSF of fwhm px",
       "gaussian"},
      {0, nullptr, nullptr},
  };
  return register_enum(&type_id, "GstSiftDetectFilter", values);
}

GType gst_sift_detect_threshold_get_type(void) {
  static gsize type_id = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(starsift::DetectThreshold::Sigma),
       "threshold in sigmas of the filtered noise", "sigma"},
      {static_cast<gint>(starsift::DetectThreshold::Absolute),
       "threshold in the input's units above the background", "absolute"},
      {0, nullptr, nullptr},
  };
  return register_enum(&type_id, "GstSiftDetectThreshold", values);
}

GType gst_sift_detect_output_get_type(void) {
  static gsize type_id = 0;
  static const GEnumValue values[] = {
      {static_cast<gint>(starsift::DetectOutput::Input), "The input frame, unchanged", "input"},
      {static_cast<gint>(starsift::DetectOutput::Labels),
       "GRAY16: each pixel its object's id, 0 background", "labels"},
      {static_cast<gint>(starsift::DetectOutput::Overlay),
       "GRAY8: the significance stretched, boxes drawn at 255", "overlay"},
      {0, nullptr, nullptr},
  };
  return register_enum(&type_id, "GstSiftDetectOutput", values);
}

namespace starsift::gst {

namespace {
constexpr auto kFlags = static_cast<GParamFlags>(G_PARAM_READWRITE | GST_PARAM_MUTABLE_PLAYING |
                                                 G_PARAM_STATIC_STRINGS);
}  // namespace

GParamSpec* backend_param_spec() {
  return g_param_spec_enum(
      "backend", "Backend",
      "Processor that runs the filter: auto (CUDA when usable, else CPU with a log line), cuda "
      "(fails when the device is not usable), cpu. A change takes effect at the next frame",
      GST_TYPE_SIFT_BACKEND, static_cast<gint>(kDefaultBackend), kFlags);
}

GParamSpec* device_id_param_spec() {
  return g_param_spec_int("device-id", "Device ID",
                          "CUDA device ordinal used by backend=auto|cuda. A change takes effect "
                          "at the next frame",
                          0, G_MAXINT, kDefaultDeviceId, kFlags);
}

GParamSpec* active_backend_param_spec() {
  return g_param_spec_string(
      "active-backend", "Active backend",
      "Backend in use while running: \"cpu\" or \"cuda:<device-id>\"; empty when stopped", nullptr,
      static_cast<GParamFlags>(G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
}

GParamSpec* border_param_spec(BorderMode default_mode, const char* blurb) {
  return g_param_spec_enum("border", "Border", blurb, GST_TYPE_SIFT_BORDER,
                           static_cast<gint>(default_mode),
                           static_cast<GParamFlags>(kFlags | GST_PARAM_CONTROLLABLE));
}

std::string active_backend_name(const BackendChoice& choice) {
  if (choice.backend == Backend::Cuda) return "cuda:" + std::to_string(choice.device_id);
  return std::string(to_string(choice.backend));
}

void mark_enums_as_plugin_api() {
  gst_type_mark_as_plugin_api(GST_TYPE_SIFT_DETECT_BACKGROUND, static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(GST_TYPE_SIFT_DETECT_FILTER, static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(GST_TYPE_SIFT_DETECT_THRESHOLD, static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(GST_TYPE_SIFT_DETECT_OUTPUT, static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(GST_TYPE_SIFT_BACKEND, static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(GST_TYPE_SIFT_BORDER, static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(GST_TYPE_SIFT_WHITEN_FIT, static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(GST_TYPE_SIFT_WHITEN_SHIFT, static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(GST_TYPE_SIFT_WHITEN_REJECT, static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(GST_TYPE_SIFT_WHITEN_WARMUP, static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(GST_TYPE_SIFT_BRIGHTNESS_MODE, static_cast<GstPluginAPIFlags>(0));
  gst_type_mark_as_plugin_api(GST_TYPE_SIFT_BRIGHTNESS_STRETCH, static_cast<GstPluginAPIFlags>(0));
}

}  // namespace starsift::gst
