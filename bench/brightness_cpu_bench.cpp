// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift-bench-brightness-cpu: times the brightness correction's fast CPU path
// (BrightnessCpu, or the reference) on one raw frame read from a file, on a pool of a given
// number of threads, and writes one JSON object. bench/brightness_cpu.py runs it beside
// OpenCV doing the same work on the same frame and threads.
//
//   starsift-bench-brightness-cpu --input FILE --width W --height H
//       --format GRAY8|GRAY16_LE|RGBA|... [--bit-depth B] [--mode local|clahe] [--sigma S]
//       [--strength K] [--alpha A] [--stretch none|percentile|fixed] [--stretch-min V]
//       [--stretch-max V] [--threads 2] [--reps 7] [--target-ms 200]
//       [--impl fast|reference] [--output FILE]
//
// The options, the frame, the timing and the JSON are those of every CPU benchmark
// (cpu_bench.hpp).
#include <iostream>
#include <string>

#include "bench/cpu_bench.hpp"
#include "pipeline/brightness/brightness_cpu.hpp"
#include "pipeline/brightness/luminance_blur.hpp"
#include "pipeline/brightness/reference.hpp"

using namespace starsift;

int main(int argc, char** argv) {
  const bench::CpuBenchTool tool{
      "starsift-bench-brightness-cpu",
      "[--bit-depth B] [--mode local|clahe] [--sigma S] [--strength K] [--alpha A] "
      "[--stretch none|fixed|percentile] [--stretch-min V] [--stretch-max V]",
      {"fast", "reference"},
      "GRAY8|GRAY16_LE|GRAY32F|RGBA|BGRA|RGBx|BGRx"};
  return bench::run_cpu_bench(tool, [&] {
    BrightnessParams params;
    int bit_depth = 0;
    const bench::CpuBenchOptions o = bench::parse_cpu_bench_options(
        tool, argc, argv, [&](const std::string& key, const std::string& value) {
          if (key == "--bit-depth")
            bit_depth = std::stoi(value);
          else if (key == "--mode")
            params.mode = parse_brightness_mode(value);
          else if (key == "--sigma")
            params.sigma = std::stod(value);
          else if (key == "--strength")
            params.strength = std::stod(value);
          else if (key == "--alpha")
            params.alpha = std::stod(value);
          else if (key == "--stretch")
            params.stretch = parse_brightness_stretch(value);
          else if (key == "--stretch-min")
            params.stretch_min = std::stod(value);
          else if (key == "--stretch-max")
            params.stretch_max = std::stod(value);
          else
            return false;
          return true;
        });
    FrameShape shape;
    shape.width = o.width;
    shape.height = o.height;
    shape.format = o.format;
    shape.bit_depth = bit_depth > 0 ? bit_depth : default_bit_depth(o.format);
    params.validate_for(shape);

    bench::CpuBenchFrames frames = bench::read_frame(tool, o);
    ThreadPool pool(static_cast<unsigned>(o.threads));
    BrightnessCpu fast;
    const bench::CpuTiming timing = bench::time_calls(
        [&] {
          if (o.impl == "fast")
            fast.run(params, shape, frames.in, frames.out, pool);
          else
            brightness_reference(params, shape, frames.in, frames.out, pool);
        },
        o.reps, o.target_ms);
    bench::write_output(o, frames);

    // The small plane LuminanceBlur works on (luminance_blur.hpp), for a peer doing the same.
    const int factor = LuminanceBlur::downsample_factor(params.sigma);
    const int small_width = LuminanceBlur::small_samples(shape.width, factor);
    const int small_height = LuminanceBlur::small_samples(shape.height, factor);
    const auto spacing = [&](int pixels, int samples) {
      return factor == 1 || samples < 2 ? 1.0 : (pixels - 1.0) / (samples - 1.0);
    };
    bench::Json fields = bench::Json::object();
    fields.set("bit_depth", shape.bit_depth)
        .set("mode", to_string(params.mode))
        .set("sigma", params.sigma)
        .set("strength", params.strength)
        .set("alpha", params.alpha)
        .set("stretch", to_string(params.stretch))
        .set("downsample_factor", factor)
        .set("small_width", small_width)
        .set("small_height", small_height)
        .set("small_sigma_x",
             LuminanceBlur::small_sigma(params.sigma, spacing(shape.width, small_width)))
        .set("small_sigma_y",
             LuminanceBlur::small_sigma(params.sigma, spacing(shape.height, small_height)));
    std::cout << bench::cpu_bench_json(tool, o, fields, timing) << "\n";
    return 0;
  });
}
