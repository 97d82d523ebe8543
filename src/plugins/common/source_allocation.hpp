// SPDX-License-Identifier: LGPL-2.1-or-later
// The allocation a starsift source decides: downstream's pool when it offers one (siftchain's
// and siftmedian's page-locked frame memory), as GstBaseSrc does, after making sure its
// buffers hold a whole frame of the query's caps; otherwise a video pool of its own. The
// caller's parent class then configures it.
#pragma once

#include <gst/gst.h>

namespace starsift::gst {

// FALSE when the query's caps are not video caps.
gboolean decide_source_allocation(GstQuery* query);

}  // namespace starsift::gst
