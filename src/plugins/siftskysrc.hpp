// SPDX-License-Identifier: LGPL-2.1-or-later
// siftskysrc: the synthetic sky (src/pipeline/sky) as a GStreamer source: seeded star fields
// with known movers, each frame carrying its truth (GstSiftSkyTruthMeta, and optionally a
// JSON-lines file).
#pragma once

#include <gst/base/gstpushsrc.h>
#include <gst/gst.h>

#include <string>

#include "pipeline/sky/sky_params.hpp"

G_BEGIN_DECLS

#define GST_TYPE_SIFT_SKY_SRC (gst_sift_sky_src_get_type())
G_DECLARE_FINAL_TYPE(GstSiftSkySrc, gst_sift_sky_src, GST, SIFT_SKY_SRC, GstPushSrc)

// GstSiftSkyPsf: gaussian | moffat, values equal to starsift::PsfKind.
#define GST_TYPE_SIFT_SKY_PSF (gst_sift_sky_psf_get_type())
GType gst_sift_sky_psf_get_type(void);

GST_ELEMENT_REGISTER_DECLARE(siftskysrc);

G_END_DECLS

// What the properties say; written by set_property under the object lock, copied once at
// start (a change while running applies at the next start). The frame size comes from caps.
struct GstSiftSkySrcSettings {
  starsift::SkyParams params;
  std::string truth_file;  // empty: no file
};

// Streaming state, from start to stop. Defined in siftskysrc.cpp.
struct GstSiftSkySrcState;

struct _GstSiftSkySrc {
  GstPushSrc parent;

  /* properties (object lock) */
  GstSiftSkySrcSettings settings;

  /* streaming: created at start, deleted at stop */
  GstSiftSkySrcState* state;
};
