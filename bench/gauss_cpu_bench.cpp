// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift-bench-gauss-cpu: times the CPU Gaussian blur on one raw frame read from a file, on
// a pool of a given number of threads, and writes one JSON object. bench/gauss_cpu.py runs it
// beside OpenCV's cv::GaussianBlur on the same frame and threads.
//
//   starsift-bench-gauss-cpu --input FILE --width W --height H
//       --format GRAY8|GRAY16_LE|GRAY32F|RGBA --sigma S [--border reflect-101]
//       [--threads 2] [--reps 7] [--target-ms 200]
//       [--impl stage|direct|recursive|reference] [--isa best|avx2|baseline] [--output FILE]
//
// --impl: `stage` is what the CPU GaussStage runs (gauss_stage.hpp): the direct sums
// (GaussCpu) below GaussParams::kRecursiveFromSigma, the recursion (GaussIir) from there,
// here on the benchmark's pool rather than the process's shared one so that --threads holds;
// `direct` and `recursive` force one of the two, `reference` is gauss_reference. The radius
// is the automatic one, ceil(4 sigma); sigma is the same along both axes. --isa: the vectors
// the direct sums use (GaussCpuIsa), the widest this CPU has by default.
// The options, the frame, the timing and the JSON are those of every CPU benchmark
// (cpu_bench.hpp).
#include <iostream>
#include <memory>
#include <string>

#include "bench/cpu_bench.hpp"
#include "pipeline/gauss/gauss_cpu.hpp"
#include "pipeline/gauss/gauss_iir.hpp"
#include "pipeline/gauss/gauss_stage.hpp"
#include "pipeline/gauss/reference.hpp"

using namespace starsift;

int main(int argc, char** argv) {
  const bench::CpuBenchTool tool{
      "starsift-bench-gauss-cpu",
      "--sigma S [--border reflect-101|replicate|constant] [--isa best|avx2|baseline]",
      {"stage", "direct", "recursive", "reference"},
      "GRAY8|GRAY16_LE|GRAY32F|RGBA"};
  return bench::run_cpu_bench(tool, [&] {
    GaussParams params;
    params.border = BorderMode::Reflect101;  // as cv::BORDER_REFLECT_101, OpenCV's default
    bool have_sigma = false;
    GaussCpuIsa isa = GaussCpuIsa::Best;
    const bench::CpuBenchOptions o = bench::parse_cpu_bench_options(
        tool, argc, argv, [&](const std::string& key, const std::string& value) {
          if (key == "--sigma") {
            params.sigma_x = params.sigma_y = std::stod(value);
            have_sigma = true;
          } else if (key == "--border") {
            params.border = parse_border_mode(value);
          } else if (key == "--isa") {
            if (value == "best")
              isa = GaussCpuIsa::Best;
            else if (value == "avx2")
              isa = GaussCpuIsa::Avx2;
            else if (value == "baseline")
              isa = GaussCpuIsa::Baseline;
            else
              bench::usage(tool, "--isa is best, avx2 or baseline, not " + value);
          } else {
            return false;
          }
          return true;
        });
    if (!have_sigma) bench::usage(tool, "--sigma is required");
    params.validate_for(o.format);

    // The path the stage takes for these parameters, asked of the stage itself.
    const bool stage_recursive = make_gauss_stage(params, BackendChoice{})->recursive();
    const std::string path =
        o.impl == "stage" ? (stage_recursive ? "recursive" : "direct") : o.impl;

    bench::CpuBenchFrames frames = bench::read_frame(tool, o);
    ThreadPool pool(static_cast<unsigned>(o.threads));
    GaussCpu direct;
    GaussIir recursive;
    const bench::CpuTiming timing = bench::time_calls(
        [&] {
          if (path == "direct")
            direct.run(params, frames.in, frames.out, pool, isa);
          else if (path == "recursive")
            recursive.run(params, frames.in, frames.out, pool);
          else
            gauss_reference(params, frames.in, frames.out, pool);
        },
        o.reps, o.target_ms);
    bench::write_output(o, frames);

    bench::Json fields = bench::Json::object();
    fields.set("path", path)
        .set("isa", path == "direct" ? std::string(gauss_cpu_isa_name(isa)) : std::string("scalar"))
        .set("sigma", params.sigma_x)
        .set("radius", params.effective_radius_x())
        .set("border", to_string(params.border));
    std::cout << bench::cpu_bench_json(tool, o, fields, timing) << "\n";
    return 0;
  });
}
