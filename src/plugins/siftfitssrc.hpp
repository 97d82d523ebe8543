// SPDX-License-Identifier: LGPL-2.1-or-later
// siftfitssrc: a sequence of FITS frames (a file or a glob pattern) as a GStreamer source,
// each frame stamped from its DATE-OBS, so archived nights can be run through the filters
// and their detections carry the real capture times.
#pragma once

#include <gst/base/gstpushsrc.h>
#include <gst/gst.h>

#include <string>

G_BEGIN_DECLS

#define GST_TYPE_SIFT_FITS_SRC (gst_sift_fits_src_get_type())
G_DECLARE_FINAL_TYPE(GstSiftFitsSrc, gst_sift_fits_src, GST, SIFT_FITS_SRC, GstPushSrc)

GST_ELEMENT_REGISTER_DECLARE(siftfitssrc);

G_END_DECLS

// What the properties say; object lock; copied at start.
struct GstSiftFitsSrcSettings {
  std::string location;  // a file or a glob pattern
  gint fps_n = 0;        // 0/1: timestamps from DATE-OBS
  gint fps_d = 1;
  bool loop = false;
};

// Streaming state, from start to stop. Defined in siftfitssrc.cpp.
struct GstSiftFitsSrcState;

struct _GstSiftFitsSrc {
  GstPushSrc parent;

  /* properties (object lock) */
  GstSiftFitsSrcSettings settings;

  /* counts for the stats property (object lock); reset at start */
  guint64 files;    // files the pattern named
  guint64 frames;   // frames pushed
  guint64 skipped;  // files passed over: unreadable, or not the first file's size and type

  /* streaming: created at start, deleted at stop */
  GstSiftFitsSrcState* state;
};
