// SPDX-License-Identifier: LGPL-2.1-or-later
// siftbrightness: the starsift adaptive brightness correction as a GStreamer element (a
// GstSiftTransform).
#pragma once

#include <gst/gst.h>

#include "pipeline/brightness/params.hpp"
#include "plugins/common/transform.hpp"

G_BEGIN_DECLS

#define GST_TYPE_SIFT_BRIGHTNESS (gst_sift_brightness_get_type())
G_DECLARE_FINAL_TYPE(GstSiftBrightness, gst_sift_brightness, GST, SIFT_BRIGHTNESS, GstSiftTransform)

GST_ELEMENT_REGISTER_DECLARE(siftbrightness);

G_END_DECLS

// What the filter's properties say; written by set_property under the object lock and copied
// once per frame by the streaming thread. backend and device-id belong to GstSiftTransform.
struct GstSiftBrightnessSettings {
  starsift::BrightnessParams params;

  bool operator==(const GstSiftBrightnessSettings&) const = default;
};

struct _GstSiftBrightness {
  GstSiftTransform parent;

  /* properties (object lock) */
  GstSiftBrightnessSettings settings;
};
