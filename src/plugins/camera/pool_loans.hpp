// SPDX-License-Identifier: LGPL-2.1-or-later
// Buffers of a GstBufferPool lent to a camera's FrameStream: mapped for writing while the
// camera fills them, handed back as GstBuffers once a frame arrived in one. With the pool a
// starsift element proposes, every frame lands straight in page-locked frame memory.
#pragma once

#include <gst/gst.h>

#include "plugins/camera/frame_stream.hpp"

namespace starsift::gst {

enum class Lending {
  Lent,      // one more buffer is the stream's
  NoneFree,  // the pool has none free now: downstream holds them all
  Unusable,  // the pool's buffer is not one block of at least the frame's bytes, writable
};

// Lends one buffer of `pool` (active) to `stream`, without waiting; it must hold `min_bytes`.
Lending lend_pool_buffer(GstBufferPool* pool, gsize min_bytes, camera::FrameStream& stream);

// The buffer a frame arrived in (CameraFrame::owner), unmapped: the caller's reference.
GstBuffer* take_lent_buffer(void* owner);

}  // namespace starsift::gst
