// SPDX-License-Identifier: LGPL-2.1-or-later
// siftdetect: detection of objects in each frame (threshold above a background, connected
// components, per-object statistics), linked into tracks across frames, published as buffer
// metas, element messages and JSON lines. Element documentation: siftdetect.cpp.
#pragma once

#include <gst/gst.h>

#include <memory>
#include <string>

#include "pipeline/detect/params.hpp"
#include "pipeline/detect/streak_merge.hpp"
#include "pipeline/detect/tracker.hpp"
#include "plugins/common/transform.hpp"

G_BEGIN_DECLS

#define GST_TYPE_SIFT_DETECT (gst_sift_detect_get_type())
G_DECLARE_FINAL_TYPE(GstSiftDetect, gst_sift_detect, GST, SIFT_DETECT, GstSiftTransform)

GST_ELEMENT_REGISTER_DECLARE(siftdetect);

G_END_DECLS

struct GstSiftDetectSettings {
  // Detection's parameters, the host's merge and tracker (params.link) included.
  starsift::DetectParams params;
  std::string json_file;       // strftime pattern in UTC; empty: no file
  guint64 json_max_bytes = 0;  // 0: no limit
  bool post_messages = false;
  guint message_interval_ms = 0;  // at most one message per this many ms (0: every frame)
  bool roi_metas = true;
};

struct GstSiftDetectStats {
  guint64 frames = 0;          // handed downstream since start
  guint objects = 0;           // in the last frame
  guint64 objects_total = 0;   // since start
  guint64 overflow_total = 0;  // objects the catalogue had no room for, since start
  guint movers = 0;            // tracks reported in the last frame
  guint64 json_lines = 0;      // lines written since start
  guint64 json_failures = 0;   // frames whose line could not be written
  guint64 messages = 0;        // element messages posted
  starsift::TrackerCounters tracker;
};

struct GstSiftDetectState;

struct _GstSiftDetect {
  GstSiftTransform parent;

  /* properties and stats (object lock) */
  GstSiftDetectSettings settings;
  GstSiftDetectStats stats;

  /* streaming thread only: tracker, writer, message timing; from start to stop */
  GstSiftDetectState* state;
};
