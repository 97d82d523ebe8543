// SPDX-License-Identifier: LGPL-2.1-or-later
// siftwhiten: temporal whitening as a GStreamer element (a GstSiftTransform).
#pragma once

#include <gst/gst.h>

#include "pipeline/whiten/params.hpp"
#include "plugins/common/transform.hpp"
#include "plugins/common/whiten_report.hpp"

G_BEGIN_DECLS

#define GST_TYPE_SIFT_WHITEN (gst_sift_whiten_get_type())
G_DECLARE_FINAL_TYPE(GstSiftWhiten, gst_sift_whiten, GST, SIFT_WHITEN, GstSiftTransform)

GST_ELEMENT_REGISTER_DECLARE(siftwhiten);

G_END_DECLS

// What the filter's properties say; written by set_property under the object lock and copied
// once per frame by the streaming thread. backend, device-id and depth belong to
// GstSiftTransform.
struct GstSiftWhitenSettings {
  // params.output stays residual: the element writes the input's own format (GStreamer has no
  // float grey format for the other outputs).
  starsift::WhitenParams params;
  bool post_messages = false;  // an element message per frame handed downstream
};

// Streaming state: built when the backend is chosen, dropped at stop. Defined in
// siftwhiten.cpp.
struct GstSiftWhitenState;

// Carries each frame's stats from the thread that whitened it to the src pad, where the frame
// leaves. Thread-safe; defined in siftwhiten.cpp.
class GstSiftWhitenRelay;

struct _GstSiftWhiten {
  GstSiftTransform parent;

  /* properties (object lock) */
  GstSiftWhitenSettings settings;

  /* results (object lock): the last frame handed downstream; written on the streaming
   * thread as it leaves, reset at start, kept after stop */
  starsift::gst::WhitenReport report;
};
