// SPDX-License-Identifier: LGPL-2.1-or-later
// A frame's catalogue after the host's steps (pipeline/detect/detection_linker.hpp), put on
// its buffer: the same for siftdetect and for a siftchain whose chain ends in `detect`.
#pragma once

#include <gst/gst.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "pipeline/detect/detection_linker.hpp"
#include "pipeline/detect/params.hpp"
#include "pipeline/engine/streaming_chain.hpp"

namespace starsift::gst {

// The frame's catalogue result (its records as detected), or null when it has none.
const FrameResult* frame_catalogue(const FinishedFrame& frame) noexcept;

// The catalogue meta GstSiftTransform attached from `catalogue` (as detected) takes the
// linker's records, fewer or as many, each with its track id; then a "tracks" meta (stage
// name "tracker", the catalogue's stage + 1) holds the movers. `tracks_area` is reused from
// frame to frame.
void attach_linked_results(GstBuffer* buffer, const FrameResult& catalogue,
                           const DetectionLinker& linker, std::vector<std::byte>& tracks_area);

// The host's changes to the frame written when detection wrote it (`output`, the frame's
// shape in `frame.output`): with output=labels the ids renumbered like the merged catalogue;
// with output=overlay the ellipses and the movers' tails drawn (`tail`: scratch of
// kOverlayTail points). Other outputs are left alone. A buffer that is not of that shape,
// shared, or cannot be mapped is left as detected, with a warning on `element`.
void edit_linked_frame(GstElement* element, GstBuffer* buffer, const FinishedFrame& frame,
                       std::optional<DetectOutput> output, const DetectionLinker& linker,
                       std::span<TrackPoint> tail);

}  // namespace starsift::gst
