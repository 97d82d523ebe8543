// siftmedian: the starsift median filter as a GStreamer element (GstBaseTransform).
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/gst.h>

#include "pipeline/backend.hpp"
#include "pipeline/median/params.hpp"

G_BEGIN_DECLS

#define GST_TYPE_SIFT_MEDIAN (gst_sift_median_get_type())
G_DECLARE_FINAL_TYPE(GstSiftMedian, gst_sift_median, GST, SIFT_MEDIAN, GstBaseTransform)

GST_ELEMENT_REGISTER_DECLARE(siftmedian);

G_END_DECLS

// What the properties say; written by set_property under the object lock and copied once
// per frame by the streaming thread.
struct GstSiftMedianSettings {
  starsift::MedianParams params;
  starsift::Backend backend = starsift::Backend::Auto;
  int device_id = 0;

  bool operator==(const GstSiftMedianSettings&) const = default;
};

// Streaming state: built in start()/set_caps(), dropped in stop(). Defined in siftmedian.cpp.
struct GstSiftMedianState;

struct _GstSiftMedian {
  GstBaseTransform parent;

  /* properties (object lock) */
  GstSiftMedianSettings settings;
  gchar* active_backend;  // "cpu", "cuda:0", or NULL when stopped

  /* streaming thread only */
  GstSiftMedianState* state;
};
