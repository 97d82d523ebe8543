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
// Timing as starsift-bench-median-cpu's: one untimed call (first touch of the output and the
// path's buffers), one timed call to estimate the cost, then --reps repetitions of
// max(1, target-ms / estimate) calls each, steady_clock around each repetition; per-call
// milliseconds of every repetition and their median are written.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "bench/json.hpp"
#include "pipeline/brightness/brightness_cpu.hpp"
#include "pipeline/brightness/luminance_blur.hpp"
#include "pipeline/brightness/reference.hpp"
#include "pipeline/error.hpp"

using namespace starsift;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string input, output, impl = "fast";
  FrameShape shape;
  int threads = 2, reps = 7;
  double target_ms = 200;
  BrightnessParams params;
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "starsift-bench-brightness-cpu: " << why
            << "\nusage: starsift-bench-brightness-cpu --input FILE --width W --height H "
               "--format GRAY8|GRAY16_LE|GRAY32F|RGBA|BGRA|RGBx|BGRx [--bit-depth B] "
               "[--mode local|clahe] [--sigma S] [--strength K] [--alpha A] "
               "[--stretch none|fixed|percentile] [--stretch-min V] [--stretch-max V] "
               "[--threads N] [--reps N] [--target-ms MS] [--impl fast|reference] "
               "[--output FILE]\n";
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  int bit_depth = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (i + 1 >= argc) usage("option " + key + " needs a value");
    const std::string value = argv[++i];
    if (key == "--input")
      o.input = value;
    else if (key == "--output")
      o.output = value;
    else if (key == "--width")
      o.shape.width = std::stoi(value);
    else if (key == "--height")
      o.shape.height = std::stoi(value);
    else if (key == "--format")
      o.shape.format = parse_pixel_format(value);
    else if (key == "--bit-depth")
      bit_depth = std::stoi(value);
    else if (key == "--mode")
      o.params.mode = parse_brightness_mode(value);
    else if (key == "--sigma")
      o.params.sigma = std::stod(value);
    else if (key == "--strength")
      o.params.strength = std::stod(value);
    else if (key == "--alpha")
      o.params.alpha = std::stod(value);
    else if (key == "--stretch")
      o.params.stretch = parse_brightness_stretch(value);
    else if (key == "--stretch-min")
      o.params.stretch_min = std::stod(value);
    else if (key == "--stretch-max")
      o.params.stretch_max = std::stod(value);
    else if (key == "--threads")
      o.threads = std::stoi(value);
    else if (key == "--reps")
      o.reps = std::stoi(value);
    else if (key == "--target-ms")
      o.target_ms = std::stod(value);
    else if (key == "--impl")
      o.impl = value;
    else
      usage("unknown option " + key);
  }
  if (o.input.empty() || o.shape.width <= 0 || o.shape.height <= 0)
    usage("--input, --width, --height are required");
  if (o.impl != "fast" && o.impl != "reference") usage("--impl is fast or reference");
  if (o.threads < 1 || o.reps < 1) usage("--threads and --reps are at least 1");
  o.shape.bit_depth = bit_depth > 0 ? bit_depth : default_bit_depth(o.shape.format);
  o.params.validate_for(o.shape);
  return o;
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  const std::size_t row = static_cast<std::size_t>(o.shape.width) * bytes_per_pixel(o.shape.format);
  std::vector<std::byte> in(row * o.shape.height), out(row * o.shape.height);
  std::ifstream file(o.input, std::ios::binary);
  if (!file.read(reinterpret_cast<char*>(in.data()), static_cast<std::streamsize>(in.size())))
    usage("cannot read " + std::to_string(in.size()) + " bytes from " + o.input);
  const ConstImageView src{in.data(), o.shape.width, o.shape.height,
                           static_cast<std::ptrdiff_t>(row), o.shape.format};
  const ImageView dst{out.data(), o.shape.width, o.shape.height, static_cast<std::ptrdiff_t>(row),
                      o.shape.format};
  ThreadPool pool(static_cast<unsigned>(o.threads));
  BrightnessCpu fast;
  const auto call = [&] {
    if (o.impl == "fast")
      fast.run(o.params, o.shape, src, dst, pool);
    else
      brightness_reference(o.params, o.shape, src, dst, pool);
  };
  const auto ms_since = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };

  call();
  auto t0 = Clock::now();
  call();
  const double estimate = ms_since(t0);
  const int calls = std::max(1, static_cast<int>(o.target_ms / std::max(estimate, 1e-3)));
  std::vector<double> per_call;
  for (int r = 0; r < o.reps; ++r) {
    t0 = Clock::now();
    for (int c = 0; c < calls; ++c) call();
    per_call.push_back(ms_since(t0) / calls);
  }
  std::vector<double> sorted = per_call;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];

  if (!o.output.empty()) {
    std::ofstream(o.output, std::ios::binary)
        .write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  }
  // The small plane LuminanceBlur works on (luminance_blur.hpp), for a peer doing the same.
  const int factor = LuminanceBlur::downsample_factor(o.params.sigma);
  const int small_width = LuminanceBlur::small_samples(o.shape.width, factor);
  const int small_height = LuminanceBlur::small_samples(o.shape.height, factor);
  const auto spacing = [&](int pixels, int samples) {
    return factor == 1 || samples < 2 ? 1.0 : (pixels - 1.0) / (samples - 1.0);
  };
  bench::Json reps = bench::Json::array();
  for (double ms : per_call) reps.push(ms);
  bench::Json j = bench::Json::object();
  j.set("tool", "starsift-bench-brightness-cpu")
      .set("impl", o.impl)
      .set("width", o.shape.width)
      .set("height", o.shape.height)
      .set("format", to_string(o.shape.format))
      .set("bit_depth", o.shape.bit_depth)
      .set("mode", to_string(o.params.mode))
      .set("sigma", o.params.sigma)
      .set("strength", o.params.strength)
      .set("alpha", o.params.alpha)
      .set("stretch", to_string(o.params.stretch))
      .set("downsample_factor", factor)
      .set("small_width", small_width)
      .set("small_height", small_height)
      .set("small_sigma_x",
           LuminanceBlur::small_sigma(o.params.sigma, spacing(o.shape.width, small_width)))
      .set("small_sigma_y",
           LuminanceBlur::small_sigma(o.params.sigma, spacing(o.shape.height, small_height)))
      .set("threads", o.threads)
      .set("calls_per_rep", calls)
      .set("ms_per_call", reps)
      .set("ms_median", median)
      .set("mpix_per_s", o.shape.width * static_cast<double>(o.shape.height) / (median * 1e3));
  std::cout << j << "\n";
  return 0;
} catch (const Error& e) {
  std::cerr << "starsift-bench-brightness-cpu: " << e.what() << "\n";
  return 2;
} catch (const std::exception& e) {
  std::cerr << "starsift-bench-brightness-cpu: " << e.what() << "\n";
  return 2;
}
