// SPDX-License-Identifier: LGPL-2.1-or-later
// Frames and a push/pull for the detection element tests (siftdetect, and siftchain ending in
// detect): a synthetic sky of bright movers, a trail broken in two, and the catalogue read
// back from an output buffer.
#pragma once

#include <gst/gst.h>

#include <vector>

#include "element_support.hpp"
#include "pipeline/detect/catalogue.hpp"
#include "support/blob_frame.hpp"

namespace starsift::test {

// The frame interval the detection element tests stamp their buffers with (30 frames/s).
inline constexpr GstClockTime kFrame = GST_SECOND / 30;

// Frames of a synthetic sky with 3 bright movers (SNR 25-40, 1-2 px/frame) and no stars,
// GRAY16.
std::vector<TestImage> sky_frames(int count, int width, int height);

// A bright trail from (30, 60) to (220, 130) on a noisy flat sky, with a 12 px gap in its
// middle (a star's clipping, a dip of the noise): detection finds two pieces. With `star`, a
// round star below them too, numbered after the pieces.
TestImage broken_trail_frame(int w, int h, bool star = false);

// A GRAY16 frame of round Gaussian stars on a flat sky: draw_blobs() with `sky` as the floor,
// rounded.
TestImage star_frame(int w, int h, double sky, double noise, std::uint32_t seed,
                     const std::vector<Blob>& stars);

// Pushes `in` and pulls its output buffer (the caller unrefs it) with the catalogue on it.
struct Detected {
  GstBuffer* buffer;
  std::vector<DetectedObject> objects;
};
Detected push_and_pull(GstHarness* harness, GstBuffer* in);

}  // namespace starsift::test
