// SPDX-License-Identifier: LGPL-2.1-or-later
// siftchain: a YAML chain of starsift filters as one GStreamer element (a GstSiftTransform).
#pragma once

#include <gst/gst.h>

#include <memory>
#include <string>

#include "pipeline/chain/chain_config.hpp"
#include "plugins/common/linked_detections.hpp"
#include "plugins/common/transform.hpp"

G_BEGIN_DECLS

#define GST_TYPE_SIFT_CHAIN (gst_sift_chain_get_type())
G_DECLARE_FINAL_TYPE(GstSiftChain, gst_sift_chain, GST, SIFT_CHAIN, GstSiftTransform)

GST_ELEMENT_REGISTER_DECLARE(siftchain);

G_END_DECLS

// What the chain's properties say; written by set_property under the object lock. The
// streaming thread copies it when `generation` changed, not every frame. backend and
// device-id belong to GstSiftTransform.
struct GstSiftChainSettings {
  std::string config;  // `config`: path of a YAML chain file; empty when unset
  std::string chain;   // `chain`: inline YAML; empty when unset
  // Each as parsed when it was set (never a value that failed to parse); null when unset.
  std::shared_ptr<const starsift::ChainConfig> config_parsed;
  std::shared_ptr<const starsift::ChainConfig> chain_parsed;
  // The last refused config/chain value and why, for start()'s message when neither is set;
  // cleared by the next accepted one.
  std::string refused;
  guint64 generation = 0;  // bumped by every accepted config or chain value
};

// What the chain reports of itself for the `stats` property (the streaming engine's counters
// come from GstSiftTransform at depth >= 2); written by the streaming thread under the object
// lock, reset at start() and kept after stop().
struct _GstSiftChain {
  GstSiftTransform parent;

  /* streaming thread */
  // The merge and the tracker of a chain ending in `detect` (siftdetect's host steps): made
  // at its first catalogue, anew when the detect stage's tracker or capacity changes, and
  // dropped at start. Null while no catalogue came.
  starsift::gst::LinkedDetections* linked;

  /* properties (object lock) */
  GstSiftChainSettings settings;
  // The backend and the stage names of the chain that ran last ("median,median"), kept after
  // stop for the stats.
  std::string last_backend;
  std::string last_stages;
  std::shared_ptr<const starsift::ChainConfig> last_chain;  // the one last_stages names
  guint movers;  // tracks reported as movers in the last frame (a chain ending in detect)
};
