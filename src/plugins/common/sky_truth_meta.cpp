// SPDX-License-Identifier: LGPL-2.1-or-later
#include "plugins/common/sky_truth_meta.hpp"

#include <new>

#include "plugins/common/meta_registry.hpp"

namespace {

constexpr const char* kApiName = "GstSiftSkyTruthMetaAPI";
constexpr const char* kImplementationName = "GstSiftSkyTruthMeta";

// GStreamer allocates the meta's memory; the C++ member lives from init to free.
gboolean sky_truth_meta_init(GstMeta* meta, gpointer, GstBuffer*) {
  new (&reinterpret_cast<GstSiftSkyTruthMeta*>(meta)->truth) starsift::SkyTruth();
  return TRUE;
}

void sky_truth_meta_free(GstMeta* meta, GstBuffer*) {
  reinterpret_cast<GstSiftSkyTruthMeta*>(meta)->truth.~SkyTruth();
}

// Whole copies keep the truth; anything else (a region, a scale) would make it false.
gboolean sky_truth_meta_transform(GstBuffer* dest, GstMeta* meta, GstBuffer*, GQuark type,
                                  gpointer data) {
  if (!GST_META_TRANSFORM_IS_COPY(type)) return FALSE;
  const auto* copy = static_cast<const GstMetaTransformCopy*>(data);
  if (copy != nullptr && copy->region) return FALSE;
  const auto* source = reinterpret_cast<const GstSiftSkyTruthMeta*>(meta);
  return gst_buffer_add_sift_sky_truth_meta(dest, source->truth) != nullptr;
}

}  // namespace

GType gst_sift_sky_truth_meta_api_get_type(void) {
  static gsize type_id = 0;
  return starsift::gst::meta_api_type(&type_id, kApiName);
}

const GstMetaInfo* gst_sift_sky_truth_meta_get_info(void) {
  static const GstMetaInfo* info = nullptr;
  return starsift::gst::meta_info(&info, GST_SIFT_SKY_TRUTH_META_API_TYPE, kImplementationName,
                                  sizeof(GstSiftSkyTruthMeta), sky_truth_meta_init,
                                  sky_truth_meta_free, sky_truth_meta_transform);
}

GstSiftSkyTruthMeta* gst_buffer_get_sift_sky_truth_meta(GstBuffer* buffer) {
  return reinterpret_cast<GstSiftSkyTruthMeta*>(
      gst_buffer_get_meta(buffer, GST_SIFT_SKY_TRUTH_META_API_TYPE));
}

GstSiftSkyTruthMeta* gst_buffer_add_sift_sky_truth_meta(GstBuffer* buffer,
                                                        const starsift::SkyTruth& truth) {
  auto* meta = reinterpret_cast<GstSiftSkyTruthMeta*>(
      gst_buffer_add_meta(buffer, GST_SIFT_SKY_TRUTH_META_INFO, nullptr));
  if (meta != nullptr) meta->truth = truth;
  return meta;
}
