// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift-bench-stream: end-to-end frames/s of the streaming engine (pinned slot ring, a
// stream per slot) beside the machine's pinned transfer bound, measured in the same run.
//
// The source models a camera driver DMA-ing into pinned memory: every slot's input is
// filled once before timing, and afterwards frames are submitted from the slot without the
// host touching the pixels (a CPU cannot fill 4096^2 frames at PCIe rate).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "bench/json.hpp"
#include "bench/list_args.hpp"
#include "bench/transfer_bound.hpp"
#include "cuda/cuda_check.hpp"
#include "pipeline/engine/streaming_chain.hpp"
#include "pipeline/error.hpp"
#include "pipeline/median/median_stage.hpp"

namespace {

using starsift::bench::measure_transfers;
using starsift::bench::percentile;
using starsift::bench::TransferBound;
using Clock = std::chrono::steady_clock;

struct Options {
  int width = 4096;
  int height = 4096;
  starsift::PixelFormat format = starsift::PixelFormat::Gray16;
  std::vector<int> sizes{3};
  std::vector<int> depths{1, 2, 3, 4, 6};
  int frames = 400;
  std::vector<std::string> graphs{"auto"};  // GraphPolicy per run: auto, always, never
  std::vector<int> timing{16};  // per run: time one frame in N (0: none, 1: every frame)
  std::string json_path;
};

starsift::GraphPolicy parse_graph_policy(const std::string& s) {
  if (s == "auto") return starsift::GraphPolicy::Auto;
  if (s == "always") return starsift::GraphPolicy::Always;
  if (s == "never") return starsift::GraphPolicy::Never;
  throw starsift::Error("--graphs " + s, "auto, always, never (comma-separated)");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw starsift::Error("option " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--width")
      o.width = std::stoi(value());
    else if (a == "--height")
      o.height = std::stoi(value());
    else if (a == "--format")
      o.format = starsift::parse_pixel_format(value());
    else if (a == "--sizes")
      o.sizes = starsift::bench::parse_ints(value());
    else if (a == "--depths")
      o.depths = starsift::bench::parse_ints(value());
    else if (a == "--frames")
      o.frames = std::stoi(value());
    else if (a == "--graphs")
      o.graphs = starsift::bench::split_list(value());
    else if (a == "--timing")
      o.timing = starsift::bench::parse_ints(value());
    else if (a == "--json")
      o.json_path = value();
    else
      throw starsift::Error(
          "unknown option " + a,
          "--width --height --format --sizes --depths --frames --graphs --timing --json");
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  const starsift::BackendChoice gpu = starsift::resolve_backend(starsift::Backend::Cuda, 0);
  const starsift::FrameShape shape{o.width, o.height, o.format,
                                   starsift::default_bit_depth(o.format)};
  const std::size_t frame_bytes =
      static_cast<std::size_t>(o.width) * o.height * starsift::bytes_per_pixel(o.format);
  const TransferBound bound = measure_transfers(frame_bytes);
  // A frame goes in and comes out: the bound on frames/s with both directions at once.
  const double bound_fps = bound.frames_per_s(frame_bytes);
  std::fprintf(stderr,
               "pinned transfers, %zu-byte frames: H2D %.1f GB/s, D2H %.1f GB/s, both %.1f GB/s -> "
               "%.0f frames/s\n",
               frame_bytes, bound.h2d, bound.d2h, bound.both, bound_fps);

  using starsift::bench::Json;
  Json out = Json::object();
  out.set("benchmark", "streaming chain")
      .set("device", gpu.reason)
      .set("width", o.width)
      .set("height", o.height)
      .set("format", std::string(starsift::to_string(o.format)))
      .set("source", "pre-filled pinned slots, not touched while timing (camera DMA model)")
      .set("transfer_bound", Json::object()
                                 .set("h2d_gb_per_s", bound.h2d)
                                 .set("d2h_gb_per_s", bound.d2h)
                                 .set("both_gb_per_s", bound.both)
                                 .set("frames_per_s", bound_fps));
  Json runs = Json::array();
  for (int timing : o.timing)
    for (const std::string& graphs : o.graphs)
      for (int depth : o.depths) {
        std::vector<std::unique_ptr<starsift::FilterStage>> stages;
        std::string chain;
        for (int size : o.sizes) {
          starsift::MedianParams p;
          p.size = size;
          stages.push_back(starsift::make_median_stage(p, gpu));
          chain += (chain.empty() ? "median " : " > median ") + std::to_string(size);
        }
        auto engine = starsift::make_streaming_chain(std::move(stages), gpu, depth);
        engine->set_graph_policy(parse_graph_policy(graphs));
        engine->set_stage_timing_interval(timing);
        engine->configure(shape);
        // Fill every slot once (the "camera" wrote them); then submit, collect, repeat.
        for (int i = 0; i < depth; ++i) {
          starsift::ImageView slot = engine->next_input();
          for (int y = 0; y < slot.height; ++y)
            std::memset(slot.row(y), (i * 37 + y) & 0xff, slot.row_bytes());
          engine->submit(starsift::const_view(slot), 0);
        }
        while (engine->in_flight()) {
          engine->wait_oldest();
          engine->pop();
        }
        std::vector<Clock::time_point> submitted(static_cast<std::size_t>(o.frames));
        std::vector<double> latency_ms;
        latency_ms.reserve(static_cast<std::size_t>(o.frames));
        const auto t0 = Clock::now();
        for (int i = 0; i < o.frames; ++i) {
          if (engine->in_flight() == depth) {
            const auto done = engine->wait_oldest();
            latency_ms.push_back(
                std::chrono::duration<double, std::milli>(Clock::now() - submitted[done.tag])
                    .count());
            engine->pop();
          }
          submitted[i] = Clock::now();
          engine->submit(starsift::const_view(engine->next_input()), static_cast<std::uint64_t>(i));
        }
        while (engine->in_flight()) {
          const auto done = engine->wait_oldest();
          latency_ms.push_back(
              std::chrono::duration<double, std::milli>(Clock::now() - submitted[done.tag])
                  .count());
          engine->pop();
        }
        const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        const double fps = o.frames / seconds;
        const double med = percentile(latency_ms, 0.5), p99 = percentile(latency_ms, 0.99);
        std::fprintf(stderr,
                     "%s depth %d timing 1/%d graphs %s (%s): %.0f frames/s (%.0f %% of the "
                     "transfer bound), "
                     "latency median %.2f ms, p99 %.2f ms, zero-copy %llu/%llu\n",
                     chain.c_str(), depth, timing, graphs.c_str(),
                     engine->counters().graphed ? "graphed" : "one by one", fps,
                     100.0 * fps / bound_fps, med, p99,
                     static_cast<unsigned long long>(engine->counters().zero_copy),
                     static_cast<unsigned long long>(engine->counters().submitted));
        runs.push(Json::object()
                      .set("chain", chain)
                      .set("depth", depth)
                      .set("graphs", graphs)
                      .set("stage_timing_interval", timing)
                      .set("graphed", engine->counters().graphed)
                      .set("frames", o.frames)
                      .set("frames_per_s", fps)
                      .set("fraction_of_transfer_bound", fps / bound_fps)
                      .set("latency_ms_median", med)
                      .set("latency_ms_p99", p99)
                      .set("gb_per_s_in_plus_out", fps * 2.0 * frame_bytes / 1e9));
      }
  out.set("runs", std::move(runs));
  if (o.json_path.empty()) {
    std::cout << out << "\n";
  } else {
    std::ofstream f(o.json_path);
    f << out << "\n";
    if (!f) throw starsift::Error("cannot write " + o.json_path);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "starsift-bench-stream: %s\n", e.what());
  return 1;
}
