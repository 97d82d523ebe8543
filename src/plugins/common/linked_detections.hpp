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
#include "pipeline/detect/overlay_draw.hpp"
#include "pipeline/detect/params.hpp"
#include "pipeline/engine/streaming_chain.hpp"

namespace starsift::gst {

// What an element keeps from frame to frame for detection's host steps: the linker (its tracker
// keeping each track's last positions for the overlay's tails) and the buffers the tracks meta
// and the overlay reuse, so that no frame allocates.
struct LinkedDetections {
  explicit LinkedDetections(const DetectParams& params);

  // False when `params` need a new linker: another tracker or catalogue capacity (the merge's
  // switch and rule apply live, through DetectionLinker::set_merge()).
  bool fits(const DetectParams& params) const noexcept;

  // Merges and tracks `catalogue` (the frame taken at the buffer's PTS) with the merge of
  // `link`, then puts the result on `buffer`: edit_linked_frame() for `output`, the
  // detection's own (nothing when the frame is another stage's), and attach_linked_results().
  // A frame the tracker refuses is reported as a warning on `element` and published untracked.
  void publish(GstElement* element, GstBuffer* buffer, const FinishedFrame& frame,
               const FrameResult& catalogue, const DetectLinkParams& link,
               std::optional<DetectOutput> output);

  DetectionLinker linker;
  int max_objects;                     // the capacity the linker reserved
  std::vector<std::byte> tracks_area;  // the tracks meta's records
  std::vector<TrackPoint> tail;        // one mover's tail while the overlay is drawn
};

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
