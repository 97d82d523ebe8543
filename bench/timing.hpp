// SPDX-License-Identifier: LGPL-2.1-or-later
// How the benchmark times one operation: CUDA events around many calls that rotate through a
// set of frames larger than the L2, after warm-up, repeated, the median reported.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace starsift::bench {

struct TimingPlan {
  double target_ms = 100.0;  // GPU time per repetition; sets the calls per repetition
  int reps = 5;              // repetitions; the median of their per-call times is reported
  // A call slower than this is timed once (one repetition of one call): the budget of a case.
  double slow_call_ms = 1000.0;
  int max_graph_calls = 1024;  // calls captured into one CUDA graph at most
};

struct Timing {
  double ms_median = 0.0;       // per call
  double ms_min = 0.0;          // per call, fastest repetition
  std::vector<double> ms_reps;  // per call, each repetition
  int calls = 0;                // calls per repetition
  bool graph = false;  // the calls of a repetition were one CUDA graph launch (no host overhead)
  std::string capture_error;  // why the calls could not be captured into a graph, if they could not
  std::string error;          // not empty: the measurement failed, the numbers mean nothing
};

// "<what>: <error name> (<error string>)".
std::string cuda_error(std::string_view what, cudaError_t status);

// Enqueues one call on the stream, reading and writing the buffers of frame `frame`.
// Returns nullptr, or what went wrong (valid until the next call).
using Launch = std::function<const char*(int frame)>;

// Times `launch` over `frames` frames (round robin) on `stream`:
// 1. one cold call (module loading, first-touch) and one timed call, estimating the cost;
//    when cheap, one timed pass over every frame refines the estimate and warms each frame;
// 2. calls per repetition: target_ms / estimate. When that covers every frame at least once,
//    a whole number of passes over the frames (at most max_graph_calls calls) is captured
//    into a CUDA graph (in `capture` mode) and launched as often as the repetition needs, so
//    the host's launch rate never limits small frames; otherwise (slow calls) they are
//    launched one by one, the rotation continuing across repetitions;
// 3. events around each repetition; the median over repetitions.
// Capture failure (a call that cannot be captured) falls back to launching one by one.
Timing measure(cudaStream_t stream, int frames, const TimingPlan& plan, const Launch& launch,
               cudaStreamCaptureMode capture = cudaStreamCaptureModeThreadLocal);

}  // namespace starsift::bench
