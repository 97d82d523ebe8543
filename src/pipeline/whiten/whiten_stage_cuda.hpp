// SPDX-License-Identifier: LGPL-2.1-or-later
// Temporal whitening on a CUDA device (src/cuda/whiten/ underneath).
//
// Two forms, as every CUDA stage: process() (host frames in and out through the stage's own
// stream and staging buffers, synchronous: depth 1 and tests) and enqueue() (device frames,
// queued on the caller's stream, nothing waited for). The history, sigma and the shift stay
// on the device; a frame needs no host round trip: the host works out only what follows from
// the number of frames seen (slots, n, whether the weights are due), the device solves for
// the weights and estimates the shift itself.
//
// Frames may come on different streams (one per engine slot), in frame order: each frame
// waits on the event the previous frame recorded after its state update and records it
// again after its own (cudaStreamWaitEvent: no device-wide sync). Not capturable into a
// graph (the launch arguments change every frame).
//
// Stats: a frame's WhitenStats stay on the device; enqueue_result() queues their copy into
// the engine's result area after the frame, and process() copies them down with its frame
// (last_stats()).
#pragma once

#include <memory>

#include "pipeline/whiten/whiten_stage.hpp"

namespace starsift {

// The stage on CUDA device `device_id`. Throws Error when the device cannot be used.
std::unique_ptr<WhitenStage> make_whiten_stage_cuda(const WhitenParams& params, int device_id);

}  // namespace starsift
