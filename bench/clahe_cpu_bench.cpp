// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift-bench-clahe-cpu: times CLAHE on the CPU (ClaheCpu, or the reference) on one raw
// frame read from a file, on a pool of a given number of threads, and writes one JSON object.
// bench/clahe_cpu.py runs it beside OpenCV's cv::CLAHE on the same frame and threads.
//
//   starsift-bench-clahe-cpu --input FILE --width W --height H --format GRAY8|GRAY16_LE
//       [--bit-depth B] [--tiles-x 8] [--tiles-y 8] [--clip 2] [--threads 2] [--reps 7]
//       [--target-ms 200] [--impl fast|reference] [--output FILE]
//
// The options, the frame, the timing and the JSON are those of every CPU benchmark
// (cpu_bench.hpp).
#include <iostream>
#include <string>

#include "bench/cpu_bench.hpp"
#include "pipeline/brightness/clahe.hpp"

using namespace starsift;

int main(int argc, char** argv) {
  const bench::CpuBenchTool tool{"starsift-bench-clahe-cpu",
                                 "[--bit-depth B] [--tiles-x N] [--tiles-y N] [--clip C]",
                                 {"fast", "reference"}};
  return bench::run_cpu_bench(tool, [&] {
    BrightnessParams params;
    params.mode = BrightnessMode::Clahe;
    int bit_depth = 0;
    const bench::CpuBenchOptions o = bench::parse_cpu_bench_options(
        tool, argc, argv, [&](const std::string& key, const std::string& value) {
          if (key == "--bit-depth")
            bit_depth = std::stoi(value);
          else if (key == "--tiles-x")
            params.tiles_x = std::stoi(value);
          else if (key == "--tiles-y")
            params.tiles_y = std::stoi(value);
          else if (key == "--clip")
            params.clip_limit = std::stod(value);
          else
            return false;
          return true;
        });
    if (bit_depth == 0) bit_depth = o.format == PixelFormat::Gray8 ? 8 : 16;

    bench::CpuBenchFrames frames = bench::read_frame(tool, o);
    ThreadPool pool(static_cast<unsigned>(o.threads));
    ClaheCpu clahe;
    const bench::CpuTiming timing = bench::time_calls(
        [&] {
          if (o.impl == "fast")
            clahe.run(params, bit_depth, frames.in, frames.out, pool);
          else
            clahe_reference(params, bit_depth, frames.in, frames.out, pool);
        },
        o.reps, o.target_ms);
    bench::write_output(o, frames);

    bench::Json fields = bench::Json::object();
    fields.set("bit_depth", bit_depth)
        .set("tiles_x", params.tiles_x)
        .set("tiles_y", params.tiles_y)
        .set("clip_limit", params.clip_limit);
    std::cout << bench::cpu_bench_json(tool, o, fields, timing) << "\n";
    return 0;
  });
}
