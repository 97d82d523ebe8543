// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift-bench-clahe-cpu: times CLAHE on the CPU (ClaheCpu, or the reference) on one raw
// frame read from a file, on a pool of a given number of threads, and writes one JSON object.
// bench/clahe_cpu.py runs it beside OpenCV's cv::CLAHE on the same frame and threads.
//
//   starsift-bench-clahe-cpu --input FILE --width W --height H --format GRAY8|GRAY16_LE
//       [--bit-depth B] [--tiles-x 8] [--tiles-y 8] [--clip 2] [--threads 2] [--reps 7]
//       [--target-ms 200] [--impl fast|reference] [--output FILE]
//
// Timing: one untimed call (first touch of the output and of ClaheCpu's buffers), one timed
// call to estimate the cost, then --reps repetitions of max(1, target-ms / estimate) calls
// each, steady_clock around each repetition; per-call milliseconds of every repetition and
// their median are written.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "bench/json.hpp"
#include "pipeline/brightness/clahe.hpp"
#include "pipeline/error.hpp"

using namespace starsift;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string input, output, impl = "fast";
  int width = 0, height = 0, bit_depth = 0, threads = 2, reps = 7;
  double target_ms = 200;
  PixelFormat format = PixelFormat::Gray8;
  BrightnessParams params;
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "starsift-bench-clahe-cpu: " << why
            << "\nusage: starsift-bench-clahe-cpu --input FILE --width W --height H --format "
               "GRAY8|GRAY16_LE [--bit-depth B] [--tiles-x N] [--tiles-y N] [--clip C] "
               "[--threads N] [--reps N] [--target-ms MS] [--impl fast|reference] "
               "[--output FILE]\n";
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  o.params.mode = BrightnessMode::Clahe;
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (i + 1 >= argc) usage("option " + key + " needs a value");
    const std::string value = argv[++i];
    if (key == "--input")
      o.input = value;
    else if (key == "--output")
      o.output = value;
    else if (key == "--width")
      o.width = std::stoi(value);
    else if (key == "--height")
      o.height = std::stoi(value);
    else if (key == "--format")
      o.format = parse_pixel_format(value);
    else if (key == "--bit-depth")
      o.bit_depth = std::stoi(value);
    else if (key == "--tiles-x")
      o.params.tiles_x = std::stoi(value);
    else if (key == "--tiles-y")
      o.params.tiles_y = std::stoi(value);
    else if (key == "--clip")
      o.params.clip_limit = std::stod(value);
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
  if (o.input.empty() || o.width <= 0 || o.height <= 0)
    usage("--input, --width, --height are required");
  if (o.impl != "fast" && o.impl != "reference") usage("--impl is fast or reference");
  if (o.threads < 1 || o.reps < 1) usage("--threads and --reps are at least 1");
  if (o.bit_depth == 0) o.bit_depth = o.format == PixelFormat::Gray8 ? 8 : 16;
  return o;
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  const std::size_t row = static_cast<std::size_t>(o.width) * bytes_per_pixel(o.format);
  std::vector<std::byte> in(row * o.height), out(row * o.height);
  std::ifstream file(o.input, std::ios::binary);
  if (!file.read(reinterpret_cast<char*>(in.data()), static_cast<std::streamsize>(in.size())))
    usage("cannot read " + std::to_string(in.size()) + " bytes from " + o.input);
  const ConstImageView src{in.data(), o.width, o.height, static_cast<std::ptrdiff_t>(row),
                           o.format};
  const ImageView dst{out.data(), o.width, o.height, static_cast<std::ptrdiff_t>(row), o.format};
  ThreadPool pool(static_cast<unsigned>(o.threads));
  ClaheCpu clahe;
  const auto call = [&] {
    if (o.impl == "fast")
      clahe.run(o.params, o.bit_depth, src, dst, pool);
    else
      clahe_reference(o.params, o.bit_depth, src, dst, pool);
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
  bench::Json reps = bench::Json::array();
  for (double ms : per_call) reps.push(ms);
  bench::Json j = bench::Json::object();
  j.set("tool", "starsift-bench-clahe-cpu")
      .set("impl", o.impl)
      .set("width", o.width)
      .set("height", o.height)
      .set("format", to_string(o.format))
      .set("bit_depth", o.bit_depth)
      .set("tiles_x", o.params.tiles_x)
      .set("tiles_y", o.params.tiles_y)
      .set("clip_limit", o.params.clip_limit)
      .set("threads", o.threads)
      .set("calls_per_rep", calls)
      .set("ms_per_call", reps)
      .set("ms_median", median)
      .set("mpix_per_s", o.width * static_cast<double>(o.height) / (median * 1e3));
  std::cout << j << "\n";
  return 0;
} catch (const Error& e) {
  std::cerr << "starsift-bench-clahe-cpu: " << e.what() << "\n";
  return 2;
}
