// SPDX-License-Identifier: LGPL-2.1-or-later
// What the GPU benchmarks record about a run, the same way in each: the device, the date, a
// timing, a pixel's samples, and whether the CUDA context survived a failure.
#pragma once

#include <cuda_runtime_api.h>

#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include "bench/json.hpp"
#include "bench/timing.hpp"
#include "pipeline/image.hpp"

namespace starsift::bench {

// "2026-11-28T07:42:00Z".
std::string utc_now();

// 12080 -> "12.8".
std::string cuda_version(int version);

struct Device {
  cudaDeviceProp prop{};
  // { "name", "index", "compute_capability", "multiprocessors", "l2_bytes", "memory_bytes",
  //   "driver_cuda_version", "runtime_version", "driver_release"? }
  Json json;
};

// Throws Error when CUDA cannot describe the device.
Device describe_device(int index);

// The method's first fields, as every kernel benchmark times: frames rotated beyond the L2,
// CUDA events around each repetition, the median per call; `plan`'s reps and target.
Json rotating_method(const TimingPlan& plan);

// Makes device `index` current and describes it, naming it and its L2 on stderr; empty, with
// why after `tool`'s name on stderr, when the device cannot be used.
std::optional<Device> open_device(int index, std::string_view tool);

// { "ms_median", "ms_min", "ms_reps", "calls_per_rep", "launch", "capture_error"? }
Json timing_json(const Timing& t);

// The samples of the pixel at (x, y) of a device view (its first `bytes` bytes), as numbers;
// null when they cannot be read.
Json pixel_json(ConstImageView v, int x, int y, int bytes);

// Writes `out` to `path`, or to stdout when `path` is empty, and says on stderr where it went;
// false, said on stderr after `tool`'s name, when the file cannot be written.
bool write_json(const Json& out, const std::string& path, std::string_view tool);

// How a kernel benchmark's run ends, the same way in each: a run that stopped early (`aborted`
// not empty, why) recorded in `out` and said on stderr, `out` written (write_json()), then the
// exit status: 1 when the JSON could not be written or the run stopped early, 3 when `failures`
// cases failed (said on stderr as "<tool>: <failures> <failed>"), else 0.
int finish_run(Json& out, const std::string& path, std::string_view tool,
               const std::string& aborted, int failures, std::string_view failed);

// A benchmark's main(): run(argc, argv)'s status, or 1 with an exception's message after
// `tool`'s name on stderr.
template <class Run>
int guarded_main(std::string_view tool, Run&& run, int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << tool << ": " << e.what() << "\n";
    return 1;
  }
}

// After a failure: empty when the CUDA context is still usable, else why not (a sticky error
// ruins it, and every later measurement would fail).
std::string context_lost();

}  // namespace starsift::bench
