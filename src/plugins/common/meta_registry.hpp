// SPDX-License-Identifier: LGPL-2.1-or-later
// Registering a GstMeta's API type and implementation once per process. Two copies of a
// meta's code may live in one process (the plugin, and a program that links the meta's source
// to read it from buffers): whichever registers first wins and the other finds it by name.
#pragma once

#include <gst/gst.h>

namespace starsift::gst {

// The API type `api_name` (no tags: whole buffer copies keep the meta).
inline GType meta_api_type(gsize* once, const char* api_name) {
  if (g_once_init_enter(once)) {
    GType type = g_type_from_name(api_name);
    if (type == 0) {
      static const gchar* tags[] = {nullptr};
      type = gst_meta_api_type_register(api_name, tags);
    }
    g_once_init_leave(once, type);
  }
  return static_cast<GType>(*once);
}

// The implementation `name` of `api` with its functions.
inline const GstMetaInfo* meta_info(const GstMetaInfo** once, GType api, const char* name,
                                    gsize size, GstMetaInitFunction init, GstMetaFreeFunction free,
                                    GstMetaTransformFunction transform) {
  if (g_once_init_enter(once)) {
    const GstMetaInfo* registered = gst_meta_get_info(name);
    if (registered == nullptr)
      registered = gst_meta_register(api, name, size, init, free, transform);
    g_once_init_leave(once, registered);
  }
  return *once;
}

}  // namespace starsift::gst
