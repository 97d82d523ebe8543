// siftchain: a YAML chain of starsift filters as one GStreamer element (a GstSiftTransform).
#pragma once

#include <gst/gst.h>

#include <memory>
#include <string>
#include <vector>

#include "pipeline/chain/chain_config.hpp"
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
  int depth = 1;           // `depth`: frames in flight (1: synchronous); read at start
};

// What the `stats` property reports; written by the streaming thread after each frame under
// the object lock, reset at start() and kept after stop().
struct GstSiftChainStats {
  guint64 frames = 0;            // frames filtered since start(), across chain changes
  std::string backend;           // active backend of the chain that ran the last frame
  std::string stages;            // its stage names, comma-separated: "median,median"
  std::vector<double> stage_ms;  // the last frame's time per stage, in chain order
  double upload_ms = 0.0;        // CUDA: the last frame's copy to the GPU (0 on the CPU)
  double download_ms = 0.0;      // CUDA: the last frame's copy back (0 on the CPU)
  int depth = 1;                 // frames in flight at most (the `depth` it started with)
  int in_flight = 0;             // frames taken in and not yet pushed out
  guint64 dropped = 0;           // frames in flight that a flush, stop or error discarded
  guint64 zero_copy = 0;         // depth >= 2: inputs the engine took without a copy
  guint64 copied = 0;            // depth >= 2: inputs copied once into the engine
  guint64 held_outputs = 0;      // depth >= 2: results written straight into the output buffer
  guint64 qos_dropped = 0;       // inputs QoS dropped as too late (never filtered)
};

// Streaming state: built at start, dropped at stop. Defined in siftchain.cpp.
struct GstSiftChainState;

struct _GstSiftChain {
  GstSiftTransform parent;

  /* properties (object lock) */
  GstSiftChainSettings settings;
  GstSiftChainStats stats;

  /* streaming thread only */
  GstSiftChainState* state;
};
