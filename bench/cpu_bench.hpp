// SPDX-License-Identifier: LGPL-2.1-or-later
// What the CPU filter benchmarks (starsift-bench-median-cpu, starsift-bench-gauss-cpu, ...)
// share: the options every one takes, the raw frame they read, the timing loop and the JSON
// object they write. Each benchmark times one filter on one frame on a pool of --threads
// threads; a Python script beside it (bench/*_cpu.py) times OpenCV on the same frame and
// threads, the same way.
//
// Timing: one untimed call (first touch of the output and of the filter's buffers), one timed
// call to estimate the cost, then --reps repetitions of max(1, target-ms / estimate) calls
// each, steady_clock around each repetition; the per-call milliseconds of every repetition
// and their median are written, and the process's CPU time over the repetitions divided by
// their wall time (cpu_per_wall: about --threads when every thread had a core to itself, less
// when the machine was busy).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "bench/json.hpp"
#include "pipeline/image.hpp"
#include "pipeline/pixel_format.hpp"

namespace starsift::bench {

// The options every CPU benchmark takes.
struct CpuBenchOptions {
  std::string input;   // --input: the raw frame, packed rows
  std::string output;  // --output: where the last call's output frame goes (optional)
  std::string impl;    // --impl: one of CpuBenchTool::impls, the first by default
  int width = 0, height = 0;
  PixelFormat format = PixelFormat::Gray8;
  int threads = 2, reps = 7;
  double target_ms = 200;
};

// One benchmark: its name, its own options for the usage line and the implementations
// --impl chooses between (the first is the default).
struct CpuBenchTool {
  std::string name;
  std::string own_options;  // e.g. "--size K [--border MODE]"
  std::vector<std::string> impls;
  std::string formats = "GRAY8|GRAY16_LE";  // for the usage line
};

// Handles one of the benchmark's own options: false when `key` is not one of them.
using OwnOption = std::function<bool(const std::string& key, const std::string& value)>;

// Prints why and the usage line on stderr, exits with 2.
[[noreturn]] void usage(const CpuBenchTool& tool, const std::string& why);

// Parses "--key value" pairs: the common options here, the others through `own`. Exits
// through usage() on an unknown option, a missing value or a common option out of range;
// --input, --width and --height are required.
CpuBenchOptions parse_cpu_bench_options(const CpuBenchTool& tool, int argc, char** argv,
                                        const OwnOption& own);

// The input frame read from --input (packed rows of width x bytes per pixel) and an output
// frame of the same shape, with their views.
struct CpuBenchFrames {
  std::vector<std::byte> in_bytes, out_bytes;
  ConstImageView in;
  ImageView out;
};
// Exits through usage() when the file holds fewer bytes than the frame.
CpuBenchFrames read_frame(const CpuBenchTool& tool, const CpuBenchOptions& options);
// Writes the output frame to --output, when given.
void write_output(const CpuBenchOptions& options, const CpuBenchFrames& frames);

struct CpuTiming {
  int calls_per_rep = 0;
  std::vector<double> ms_per_call;  // one per repetition
  double ms_median = 0;
  double cpu_per_wall = 0;  // process CPU seconds / wall seconds over the repetitions
};
// Times `call` as the header says.
CpuTiming time_calls(const std::function<void()>& call, int reps, double target_ms);

// The JSON object every CPU benchmark writes: tool, impl, width, height, format, then the
// benchmark's own `fields` (an object), then threads, calls_per_rep, ms_per_call, ms_median,
// mpix_per_s and cpu_per_wall.
Json cpu_bench_json(const CpuBenchTool& tool, const CpuBenchOptions& options, const Json& fields,
                    const CpuTiming& timing);

// Runs a benchmark's main body; an exception (a bad parameter, a failed call) is printed with
// the tool's name and ends the run with exit status 2.
int run_cpu_bench(const CpuBenchTool& tool, const std::function<int()>& body);

}  // namespace starsift::bench
