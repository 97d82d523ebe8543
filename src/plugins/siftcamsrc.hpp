// SPDX-License-Identifier: LGPL-2.1-or-later
// siftcamsrc: a GigE Vision or USB3 Vision camera through aravis, its frames written by the
// camera's stream straight into buffers of the pool downstream proposes (siftchain's and
// siftmedian's page-locked frame memory), so they reach the engine without a copy.
#pragma once

#include <gst/base/gstpushsrc.h>
#include <gst/gst.h>

#include <atomic>
#include <string>

#include "plugins/camera/camera_settings.hpp"

G_BEGIN_DECLS

#define GST_TYPE_SIFT_CAM_SRC (gst_sift_cam_src_get_type())
G_DECLARE_FINAL_TYPE(GstSiftCamSrc, gst_sift_cam_src, GST, SIFT_CAM_SRC, GstPushSrc)

GST_ELEMENT_REGISTER_DECLARE(siftcamsrc);

G_END_DECLS

// Streaming state, from start to stop. Defined in siftcamsrc.cpp.
struct GstSiftCamSrcState;

// What the stats property and the siftcamsrc-drops message report. Object lock.
struct GstSiftCamSrcReport {
  // the camera as configured at start, read back from it
  std::string camera;        // aravis's id
  std::string model;         // vendor, model, serial, protocol
  std::string pixel_format;  // GenICam name
  gint width = 0;
  gint height = 0;
  gdouble fps = 0.0;           // 0: the camera has no frame rate feature
  gdouble exposure_us = -1.0;  // -1: the camera has no exposure time feature
  gdouble gain_db = -1.0;      // -1: the camera has no gain feature
  gint packet_size = 0;        // GigE Vision; 0 for USB3 Vision

  guint64 frames = 0;                // frames pushed downstream
  guint64 missing = 0;               // frames the camera numbered that never arrived whole
  guint64 incomplete = 0;            // buffers the stream completed with an error, lent again
  guint64 underruns = 0;             // frames that came while no lent buffer was free
  guint64 failures = 0;              // aravis's count of failed buffers
  guint64 timeouts = 0;              // frames that stopped arriving part way
  guint64 missing_packets = 0;       // GigE Vision packets never received (after resends)
  guint64 resent_packets = 0;        // packets the camera sent again on request
  guint64 restarts = 0;              // times the camera restarted its frame numbering
  gint lent = 0;                     // buffers lent to the camera's stream now
  gboolean downstream_pool = FALSE;  // the frames are in the pool downstream proposed
};

struct _GstSiftCamSrc {
  GstPushSrc parent;

  /* properties (object lock) */
  starsift::camera::CameraSettings settings;

  /* streaming: created at start, deleted at stop */
  GstSiftCamSrcState* state;

  /* what stats reports (object lock): reset at start, kept after stop */
  GstSiftCamSrcReport report;

  /* set by unlock, cleared by unlock_stop: create() returns FLUSHING */
  std::atomic<bool> unlocking;
};
