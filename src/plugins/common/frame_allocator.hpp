// SPDX-License-Identifier: LGPL-2.1-or-later
// A GstAllocator of starsift frame memory: page-locked when a GPU is usable, so a source
// that takes the pool an element proposes writes frames straight into memory the GPU can
// DMA from (the streaming engine then reads them in place).
#pragma once

#include <gst/gst.h>

namespace starsift::gst {

inline constexpr const char* kFrameMemoryType = "StarsiftFrameMemory";

// The process-wide allocator (a new reference).
GstAllocator* frame_allocator();

// True when `memory` came from frame_allocator() and is page-locked.
bool is_pinned_frame_memory(GstMemory* memory);

}  // namespace starsift::gst
