// SPDX-License-Identifier: LGPL-2.1-or-later
// The starsift GStreamer plugin: registers its elements, nothing else.
#include <gst/gst.h>

#include "plugins/siftbrightness.hpp"
#include "plugins/siftchain.hpp"
#include "plugins/siftdetect.hpp"
#include "plugins/siftfitssrc.hpp"
#include "plugins/siftgauss.hpp"
#include "plugins/siftmedian.hpp"
#include "plugins/siftskysrc.hpp"
#include "plugins/siftwhiten.hpp"
#if STARSIFT_HAVE_ARAVIS
#include "plugins/siftcamsrc.hpp"
#endif

static gboolean plugin_init(GstPlugin* plugin) {
  gboolean registered = FALSE;
  registered |= GST_ELEMENT_REGISTER(siftmedian, plugin);
  registered |= GST_ELEMENT_REGISTER(siftgauss, plugin);
  registered |= GST_ELEMENT_REGISTER(siftbrightness, plugin);
  registered |= GST_ELEMENT_REGISTER(siftchain, plugin);
  registered |= GST_ELEMENT_REGISTER(siftskysrc, plugin);
  registered |= GST_ELEMENT_REGISTER(siftfitssrc, plugin);
  registered |= GST_ELEMENT_REGISTER(siftwhiten, plugin);
  registered |= GST_ELEMENT_REGISTER(siftdetect, plugin);
#if STARSIFT_HAVE_ARAVIS
  registered |= GST_ELEMENT_REGISTER(siftcamsrc, plugin);
#endif
  return registered;
}

// The plugin is LGPL-2.1-or-later (LICENSE), as GStreamer's own plugins are; "LGPL" is the string
// GStreamer's plugin registry knows for it.
GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, starsift,
                  "GPU frame processing for camera and telescope streams (CUDA, with a CPU "
                  "fallback)",
                  plugin_init, VERSION, "LGPL", PACKAGE, STARSIFT_PLUGIN_ORIGIN)
