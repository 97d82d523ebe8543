// SPDX-License-Identifier: LGPL-2.1-or-later
// GstSiftSkyTruthMeta: the truth of a synthetic sky frame (SkyTruth: frame index, the field's
// shift, every mover's position, velocity, flux and SNR) riding on the buffer that holds the
// frame. siftskysrc adds it; an element measuring detection or whitening quality reads it.
//
// The meta has no tags, so filters that keep the frame's geometry (siftmedian, siftchain,
// videoconvert) copy it to their output; a transform that moves pixels (scaling, cropping,
// a partial copy) drops it, because the positions would no longer be true.
#pragma once

#include <gst/gst.h>

#include "pipeline/sky/sky_truth.hpp"

struct GstSiftSkyTruthMeta {
  GstMeta meta;
  starsift::SkyTruth truth;  // constructed in the meta's init, destroyed in its free
};

// The API type ("GstSiftSkyTruthMetaAPI") and the implementation ("GstSiftSkyTruthMeta").
// Safe to call from two copies of this code in one process (the plugin and a program that
// links this file to read the meta): the second finds what the first registered.
GType gst_sift_sky_truth_meta_api_get_type(void);
#define GST_SIFT_SKY_TRUTH_META_API_TYPE (gst_sift_sky_truth_meta_api_get_type())
const GstMetaInfo* gst_sift_sky_truth_meta_get_info(void);
#define GST_SIFT_SKY_TRUTH_META_INFO (gst_sift_sky_truth_meta_get_info())

// The buffer's truth meta, or NULL when it has none.
GstSiftSkyTruthMeta* gst_buffer_get_sift_sky_truth_meta(GstBuffer* buffer);

// Adds a truth meta holding a copy of `truth` to a writable `buffer`.
GstSiftSkyTruthMeta* gst_buffer_add_sift_sky_truth_meta(GstBuffer* buffer,
                                                        const starsift::SkyTruth& truth);
