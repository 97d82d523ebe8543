// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bench/cpu_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <fstream>
#include <iostream>

namespace starsift::bench {

namespace {

std::string impl_list(const CpuBenchTool& tool) {
  std::string list;
  for (const std::string& impl : tool.impls) list += (list.empty() ? "" : "|") + impl;
  return list;
}

}  // namespace

void usage(const CpuBenchTool& tool, const std::string& why) {
  std::cerr << tool.name << ": " << why << "\nusage: " << tool.name
            << " --input FILE --width W --height H --format " << tool.formats << " "
            << tool.own_options << " [--threads N] [--reps N] [--target-ms MS] [--impl "
            << impl_list(tool) << "] [--output FILE]\n";
  std::exit(2);
}

CpuBenchOptions parse_cpu_bench_options(const CpuBenchTool& tool, int argc, char** argv,
                                        const OwnOption& own) {
  CpuBenchOptions o;
  o.impl = tool.impls.front();
  for (int i = 1; i < argc; ++i) {
    const std::string key = argv[i];
    if (i + 1 >= argc) usage(tool, "option " + key + " needs a value");
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
    else if (key == "--threads")
      o.threads = std::stoi(value);
    else if (key == "--reps")
      o.reps = std::stoi(value);
    else if (key == "--target-ms")
      o.target_ms = std::stod(value);
    else if (key == "--impl")
      o.impl = value;
    else if (!own(key, value))
      usage(tool, "unknown option " + key);
  }
  if (o.input.empty() || o.width <= 0 || o.height <= 0)
    usage(tool, "--input, --width, --height are required");
  if (std::find(tool.impls.begin(), tool.impls.end(), o.impl) == tool.impls.end())
    usage(tool, "--impl is " + impl_list(tool) + ", not " + o.impl);
  if (o.threads < 1 || o.reps < 1) usage(tool, "--threads and --reps are at least 1");
  return o;
}

CpuBenchFrames read_frame(const CpuBenchTool& tool, const CpuBenchOptions& o) {
  const std::size_t row = static_cast<std::size_t>(o.width) * bytes_per_pixel(o.format);
  CpuBenchFrames f;
  f.in_bytes.resize(row * o.height);
  f.out_bytes.resize(row * o.height);
  std::ifstream file(o.input, std::ios::binary);
  if (!file.read(reinterpret_cast<char*>(f.in_bytes.data()),
                 static_cast<std::streamsize>(f.in_bytes.size())))
    usage(tool, "cannot read " + std::to_string(f.in_bytes.size()) + " bytes from " + o.input);
  f.in = {f.in_bytes.data(), o.width, o.height, static_cast<std::ptrdiff_t>(row), o.format};
  f.out = {f.out_bytes.data(), o.width, o.height, static_cast<std::ptrdiff_t>(row), o.format};
  return f;
}

void write_output(const CpuBenchOptions& o, const CpuBenchFrames& f) {
  if (o.output.empty()) return;
  std::ofstream(o.output, std::ios::binary)
      .write(reinterpret_cast<const char*>(f.out_bytes.data()),
             static_cast<std::streamsize>(f.out_bytes.size()));
}

CpuTiming time_calls(const std::function<void()>& call, int reps, double target_ms) {
  using Clock = std::chrono::steady_clock;
  const auto ms_since = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  call();
  auto t0 = Clock::now();
  call();
  const double estimate = ms_since(t0);
  CpuTiming t;
  t.calls_per_rep = std::max(1, static_cast<int>(target_ms / std::max(estimate, 1e-3)));
  const auto wall0 = Clock::now();
  const std::clock_t cpu0 = std::clock();
  for (int r = 0; r < reps; ++r) {
    t0 = Clock::now();
    for (int c = 0; c < t.calls_per_rep; ++c) call();
    t.ms_per_call.push_back(ms_since(t0) / t.calls_per_rep);
  }
  const double cpu_ms = 1e3 * static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
  t.cpu_per_wall = cpu_ms / ms_since(wall0);
  std::vector<double> sorted = t.ms_per_call;
  std::sort(sorted.begin(), sorted.end());
  t.ms_median = sorted[sorted.size() / 2];
  return t;
}

Json cpu_bench_json(const CpuBenchTool& tool, const CpuBenchOptions& o, const Json& fields,
                    const CpuTiming& timing) {
  Json reps = Json::array();
  for (double ms : timing.ms_per_call) reps.push(ms);
  Json j = Json::object();
  j.set("tool", tool.name)
      .set("impl", o.impl)
      .set("width", o.width)
      .set("height", o.height)
      .set("format", to_string(o.format))
      .update(fields)
      .set("threads", o.threads)
      .set("calls_per_rep", timing.calls_per_rep)
      .set("ms_per_call", reps)
      .set("ms_median", timing.ms_median)
      .set("mpix_per_s", o.width * static_cast<double>(o.height) / (timing.ms_median * 1e3))
      .set("cpu_per_wall", timing.cpu_per_wall);
  return j;
}

int run_cpu_bench(const CpuBenchTool& tool, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::cerr << tool.name << ": " << e.what() << "\n";
    return 2;
  }
}

}  // namespace starsift::bench
