// SPDX-License-Identifier: LGPL-2.1-or-later
// siftgauss: the starsift Gaussian blur as a GStreamer element (a GstSiftTransform).
#pragma once

#include <gst/gst.h>

#include "pipeline/gauss/params.hpp"
#include "plugins/common/transform.hpp"

G_BEGIN_DECLS

#define GST_TYPE_SIFT_GAUSS (gst_sift_gauss_get_type())
G_DECLARE_FINAL_TYPE(GstSiftGauss, gst_sift_gauss, GST, SIFT_GAUSS, GstSiftTransform)

GST_ELEMENT_REGISTER_DECLARE(siftgauss);

G_END_DECLS

// What the filter's properties say; written by set_property under the object lock and copied
// once per frame by the streaming thread. backend and device-id belong to GstSiftTransform.
struct GstSiftGaussSettings {
  starsift::GaussParams params;

  bool operator==(const GstSiftGaussSettings&) const = default;
};

struct _GstSiftGauss {
  GstSiftTransform parent;

  /* properties (object lock) */
  GstSiftGaussSettings settings;
};
