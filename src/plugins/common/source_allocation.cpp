// SPDX-License-Identifier: LGPL-2.1-or-later
#include "plugins/common/source_allocation.hpp"

#include <gst/video/video.h>

namespace starsift::gst {

gboolean decide_source_allocation(GstQuery* query) {
  GstCaps* caps = nullptr;
  gst_query_parse_allocation(query, &caps, nullptr);
  GstVideoInfo info;
  if (caps == nullptr || !gst_video_info_from_caps(&info, caps)) return FALSE;

  GstBufferPool* pool = nullptr;
  guint size = static_cast<guint>(GST_VIDEO_INFO_SIZE(&info));
  guint min = 0;
  guint max = 0;
  const bool downstream_pool = gst_query_get_n_allocation_pools(query) > 0;
  if (downstream_pool) {
    gst_query_parse_nth_allocation_pool(query, 0, &pool, &size, &min, &max);
    size = MAX(size, static_cast<guint>(GST_VIDEO_INFO_SIZE(&info)));
  }
  if (pool == nullptr) pool = gst_video_buffer_pool_new();

  GstStructure* config = gst_buffer_pool_get_config(pool);
  gst_buffer_pool_config_set_params(config, caps, size, min, max);
  if (gst_query_find_allocation_meta(query, GST_VIDEO_META_API_TYPE, nullptr)) {
    gst_buffer_pool_config_add_option(config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  }
  gst_buffer_pool_set_config(pool, config);
  if (downstream_pool) {
    gst_query_set_nth_allocation_pool(query, 0, pool, size, min, max);
  } else {
    gst_query_add_allocation_pool(query, pool, size, min, max);
  }
  gst_object_unref(pool);
  return TRUE;
}

}  // namespace starsift::gst
