// SPDX-License-Identifier: LGPL-2.1-or-later
// siftmedian: the starsift median filter as a GStreamer element (a GstSiftTransform).
#pragma once

#include <gst/gst.h>

#include "pipeline/median/params.hpp"
#include "plugins/common/transform.hpp"

G_BEGIN_DECLS

#define GST_TYPE_SIFT_MEDIAN (gst_sift_median_get_type())
G_DECLARE_FINAL_TYPE(GstSiftMedian, gst_sift_median, GST, SIFT_MEDIAN, GstSiftTransform)

GST_ELEMENT_REGISTER_DECLARE(siftmedian);

G_END_DECLS

// What the filter's properties say; written by set_property under the object lock and copied
// once per frame by the streaming thread. backend and device-id belong to GstSiftTransform.
struct GstSiftMedianSettings {
  starsift::MedianParams params;

  bool operator==(const GstSiftMedianSettings&) const = default;
};

// Streaming state: built when the backend is chosen, dropped at stop. Defined in
// siftmedian.cpp.
struct _GstSiftMedian {
  GstSiftTransform parent;

  /* properties (object lock) */
  GstSiftMedianSettings settings;
};
