// The starsift GStreamer plugin: registers its elements, nothing else.
#include <gst/gst.h>

#include "plugins/siftchain.hpp"
#include "plugins/siftdetect.hpp"
#include "plugins/siftmedian.hpp"
#include "plugins/siftskysrc.hpp"
#include "plugins/siftwhiten.hpp"

static gboolean plugin_init(GstPlugin* plugin) {
  gboolean registered = FALSE;
  registered |= GST_ELEMENT_REGISTER(siftmedian, plugin);
  registered |= GST_ELEMENT_REGISTER(siftchain, plugin);
  registered |= GST_ELEMENT_REGISTER(siftskysrc, plugin);
  registered |= GST_ELEMENT_REGISTER(siftwhiten, plugin);
  registered |= GST_ELEMENT_REGISTER(siftdetect, plugin);
  return registered;
}

GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, starsift,
                  "GPU frame processing for camera and telescope streams (CUDA, with a CPU "
                  "fallback)",
                  plugin_init, VERSION, STARSIFT_PLUGIN_LICENSE, PACKAGE, STARSIFT_PLUGIN_ORIGIN)
