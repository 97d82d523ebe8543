// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift-bench-median-cpu: times the CPU median (median_cpu, or the reference) on one raw
// frame read from a file, on a pool of a given number of threads, and writes one JSON object.
// bench/median_cpu.py runs it beside OpenCV's cv::medianBlur on the same frame and threads.
//
//   starsift-bench-median-cpu --input FILE --width W --height H --format GRAY8|GRAY16_LE
//       --size K [--border replicate] [--threads 2] [--reps 7] [--target-ms 200]
//       [--impl fast|reference] [--isa best|baseline] [--output FILE]
//
// The options, the frame, the timing and the JSON are those of every CPU benchmark
// (cpu_bench.hpp).
#include <iostream>
#include <string>

#include "bench/cpu_bench.hpp"
#include "pipeline/median/median_cpu.hpp"
#include "pipeline/median/reference.hpp"

using namespace starsift;

int main(int argc, char** argv) {
  const bench::CpuBenchTool tool{
      "starsift-bench-median-cpu",
      "--size K [--border replicate|reflect-101|constant] [--isa best|baseline]",
      {"fast", "reference"}};
  return bench::run_cpu_bench(tool, [&] {
    MedianParams params;
    params.border = BorderMode::Replicate;  // OpenCV's medianBlur border
    std::string isa_name = "best";
    const bench::CpuBenchOptions o = bench::parse_cpu_bench_options(
        tool, argc, argv, [&](const std::string& key, const std::string& value) {
          if (key == "--size")
            params.size = std::stoi(value);
          else if (key == "--border")
            params.border = parse_border_mode(value);
          else if (key == "--isa")
            isa_name = value;
          else
            return false;
          return true;
        });
    if (isa_name != "best" && isa_name != "baseline")
      bench::usage(tool, "--isa is best or baseline");
    params.validate_for(o.format);

    bench::CpuBenchFrames frames = bench::read_frame(tool, o);
    ThreadPool pool(static_cast<unsigned>(o.threads));
    const MedianCpuIsa isa = isa_name == "best" ? MedianCpuIsa::Best : MedianCpuIsa::Baseline;
    const bench::CpuTiming timing = bench::time_calls(
        [&] {
          if (o.impl == "fast")
            median_cpu(params, frames.in, frames.out, pool, isa);
          else
            median_reference(params, frames.in, frames.out, pool);
        },
        o.reps, o.target_ms);
    bench::write_output(o, frames);

    bench::Json fields = bench::Json::object();
    fields
        .set("isa", o.impl == "fast" && median_cpu_vectorised(params, o.format)
                        ? std::string(median_cpu_isa_name(isa))
                        : std::string("scalar"))
        .set("size", params.size)
        .set("border", to_string(params.border));
    std::cout << bench::cpu_bench_json(tool, o, fields, timing) << "\n";
    return 0;
  });
}
