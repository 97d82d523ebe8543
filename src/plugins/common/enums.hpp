// SPDX-License-Identifier: LGPL-2.1-or-later
// GLib enum types and parameter specs shared by the starsift elements: the `backend`,
// `device-id`, `active-backend` and `border` properties mean the same in every element; the
// whitening enums are siftwhiten's, kept here so every GEnum of the plugin is in one place.
#pragma once

#include <glib-object.h>

#include <string>

#include "pipeline/backend.hpp"
#include "pipeline/border.hpp"
#include "pipeline/brightness/params.hpp"
#include "pipeline/detect/params.hpp"
#include "pipeline/whiten/params.hpp"

G_BEGIN_DECLS

// GstSiftBackend: auto | cuda | cpu, values equal to starsift::Backend.
#define GST_TYPE_SIFT_BACKEND (gst_sift_backend_get_type())
GType gst_sift_backend_get_type(void);

// GstSiftBorder: replicate | reflect-101 | constant, values equal to starsift::BorderMode.
#define GST_TYPE_SIFT_BORDER (gst_sift_border_get_type())
GType gst_sift_border_get_type(void);

// GstSiftWhitenFit: current | past, values equal to starsift::WhitenFit.
#define GST_TYPE_SIFT_WHITEN_FIT (gst_sift_whiten_fit_get_type())
GType gst_sift_whiten_fit_get_type(void);

// GstSiftWhitenShift: none | resample, values equal to starsift::WhitenShift.
#define GST_TYPE_SIFT_WHITEN_SHIFT (gst_sift_whiten_shift_get_type())
GType gst_sift_whiten_shift_get_type(void);

// GstSiftWhitenReject: none | mask, values equal to starsift::WhitenReject.
#define GST_TYPE_SIFT_WHITEN_REJECT (gst_sift_whiten_reject_get_type())
GType gst_sift_whiten_reject_get_type(void);
#define GST_TYPE_SIFT_WHITEN_HISTORY_FORMAT (gst_sift_whiten_history_format_get_type())
GType gst_sift_whiten_history_format_get_type(void);

// GstSiftWhitenWarmup: passthrough | zeros | partial, values equal to starsift::WhitenWarmup.
#define GST_TYPE_SIFT_WHITEN_WARMUP (gst_sift_whiten_warmup_get_type())
GType gst_sift_whiten_warmup_get_type(void);

// GstSiftWhitenOutput: residual | significance, values equal to starsift::WhitenOutput (the
// outputs a GStreamer buffer can carry: the input's format).
#define GST_TYPE_SIFT_WHITEN_OUTPUT (gst_sift_whiten_output_get_type())
GType gst_sift_whiten_output_get_type(void);

// Detection's enums (siftdetect), values equal to the DetectParams enums, nicks as in YAML.
#define GST_TYPE_SIFT_DETECT_BACKGROUND (gst_sift_detect_background_get_type())
GType gst_sift_detect_background_get_type(void);
#define GST_TYPE_SIFT_DETECT_FILTER (gst_sift_detect_filter_get_type())
GType gst_sift_detect_filter_get_type(void);
#define GST_TYPE_SIFT_DETECT_THRESHOLD (gst_sift_detect_threshold_get_type())
GType gst_sift_detect_threshold_get_type(void);
#define GST_TYPE_SIFT_DETECT_OUTPUT (gst_sift_detect_output_get_type())
GType gst_sift_detect_output_get_type(void);

// The brightness correction's enums (siftbrightness), values equal to BrightnessMode and
// BrightnessStretch, nicks as in YAML.
#define GST_TYPE_SIFT_BRIGHTNESS_MODE (gst_sift_brightness_mode_get_type())
GType gst_sift_brightness_mode_get_type(void);
#define GST_TYPE_SIFT_BRIGHTNESS_STRETCH (gst_sift_brightness_stretch_get_type())
GType gst_sift_brightness_stretch_get_type(void);

G_END_DECLS

namespace starsift::gst {

inline constexpr Backend kDefaultBackend = Backend::Auto;
inline constexpr int kDefaultDeviceId = 0;

// Parameter specs, flagged readable/writable/mutable in PLAYING with static strings.
GParamSpec* backend_param_spec();                       // "backend", default auto
GParamSpec* device_id_param_spec();                     // "device-id", 0 or more
GParamSpec* active_backend_param_spec();                // "active-backend", read-only
GParamSpec* border_param_spec(BorderMode default_mode,  // "border", controllable
                              const char* blurb);

// What active-backend reports for a resolved choice: "cpu" or "cuda:<device>".
std::string active_backend_name(const BackendChoice& choice);

// Marks the enum types as plugin API so the documentation lists them; call from class_init.
void mark_enums_as_plugin_api();

}  // namespace starsift::gst
