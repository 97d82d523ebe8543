// SPDX-License-Identifier: LGPL-2.1-or-later
// starsift-bench-detect: per-frame time of the CUDA detection stage's device form (what the
// streaming engine runs: background, filter, threshold, labels, per-object sums, catalogue),
// on 4096^2-class GRAY16 synthetic skies, beside the CPU reference on the same frames.
//
// Frames: a set of synthetic skies (siftskysrc's generator: stars with power-law fluxes, sky
// gradient, noise, movers) uploaded once and rotated beyond the L2. Every frame is timed by
// events around its enqueue() and enqueue_result() on one stream; the median and p90 are
// reported, and the objects found.
//
// With --input significance the frames are what siftwhiten writes by default instead: its
// significance, 32768 + 1024 z in GRAY16, the scale on the frame's shape, so that detection's
// default background (auto) estimates none: the shipped whiten -> detect path's detection.
// z is white noise of unit sigma plus 50 Gaussian blobs per Mpix (sigma 1.2 px, peaks 3..30:
// movers and star residuals).
//
// --line-lengths runs each case with the line channel of those lengths too (0: off).
//
// Usage: starsift-bench-detect [--sizes 4096] [--frames 100] [--set 6]
//                              [--input sky|significance] [--background mesh,none,auto]
//                              [--line-lengths 0,15,31] [--json out.json]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bench/json.hpp"
#include "bench/list_args.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_buffer.hpp"
#include "pipeline/backend.hpp"
#include "pipeline/detect/catalogue.hpp"
#include "pipeline/detect/detect_stage.hpp"
#include "pipeline/error.hpp"
#include "pipeline/sky/sky_generator.hpp"
#include "pipeline/thread_pool.hpp"

namespace {

using starsift::bench::Json;
namespace cuda = starsift::cuda;

struct Options {
  std::vector<int> sizes{4096};
  int frames = 100;
  int set = 6;
  std::vector<starsift::DetectBackground> backgrounds{starsift::DetectBackground::Mesh};
  std::vector<int> line_lengths{0};
  bool significance = false;  // --input significance
  std::string json_path;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw starsift::Error("option " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--sizes") {
      o.sizes = starsift::bench::parse_ints(value());
    } else if (a == "--frames") {
      o.frames = std::stoi(value());
    } else if (a == "--set") {
      o.set = std::stoi(value());
    } else if (a == "--background") {
      o.backgrounds.clear();
      for (const std::string& s : starsift::bench::split_list(value())) {
        o.backgrounds.push_back(starsift::parse_detect_background(s));
      }
    } else if (a == "--input") {
      const std::string input = value();
      if (input != "sky" && input != "significance") {
        throw starsift::Error("--input " + input, "sky, significance");
      }
      o.significance = input == "significance";
    } else if (a == "--line-lengths") {
      o.line_lengths = starsift::bench::parse_ints(value());
    } else if (a == "--json") {
      o.json_path = value();
    } else {
      throw starsift::Error("unknown option " + a,
                            "--sizes --frames --set --input --background --line-lengths --json");
    }
  }
  return o;
}

// Whitening's significance output for a frame: 32768 + 1024 z, z unit white noise plus blobs.
constexpr starsift::SignificanceScale kSignificance{32768.0, 1024.0};
void render_significance(std::vector<std::uint16_t>& frame, int size, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  std::vector<float> z(frame.size());
  for (float& v : z) v = noise(rng);
  std::uniform_real_distribution<double> where(4.0, size - 4.0), peak(3.0, 30.0);
  const int blobs = static_cast<int>(50.0 * size * size / 1e6);
  for (int b = 0; b < blobs; ++b) {
    const double cx = where(rng), cy = where(rng), a = peak(rng);
    for (int y = static_cast<int>(cy) - 4; y <= static_cast<int>(cy) + 4; ++y) {
      for (int x = static_cast<int>(cx) - 4; x <= static_cast<int>(cx) + 4; ++x) {
        const double r2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
        z[static_cast<std::size_t>(y) * size + x] += static_cast<float>(a * std::exp(-r2 / 2.88));
      }
    }
  }
  for (std::size_t i = 0; i < frame.size(); ++i) {
    const double v = kSignificance.offset + kSignificance.gain * z[i];
    frame[i] = static_cast<std::uint16_t>(std::clamp(std::nearbyint(v), 0.0, 65535.0));
  }
}

// Each background with each line length.
std::vector<std::pair<starsift::DetectBackground, int>> cases(const Options& o) {
  std::vector<std::pair<starsift::DetectBackground, int>> all;
  for (const starsift::DetectBackground bg : o.backgrounds) {
    for (const int length : o.line_lengths) all.emplace_back(bg, length);
  }
  return all;
}

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * (v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  const starsift::BackendChoice gpu = starsift::resolve_backend(starsift::Backend::Cuda, 0);
  Json runs = Json::array();
  for (const int size : o.sizes) {
    starsift::SkyParams sp;
    sp.width = size;
    sp.height = size;
    sp.movers = 20;
    starsift::SkyGenerator sky(sp);
    starsift::FrameShape shape{size, size, starsift::PixelFormat::Gray16, sp.bit_depth};
    if (o.significance) shape = {size, size, starsift::PixelFormat::Gray16, 16, kSignificance};
    const std::size_t row = static_cast<std::size_t>(size) * 2;
    std::vector<std::vector<std::uint16_t>> host(
        o.set, std::vector<std::uint16_t>(static_cast<std::size_t>(size) * size));
    std::vector<cuda::DeviceImage> frames(o.set);
    starsift::SkyTruth truth;
    for (int k = 0; k < o.set; ++k) {
      const starsift::ImageView v{reinterpret_cast<std::byte*>(host[k].data()), size, size,
                                  static_cast<std::ptrdiff_t>(row), starsift::PixelFormat::Gray16};
      if (o.significance) {
        render_significance(host[k], size, static_cast<std::uint64_t>(k) + 1);
      } else {
        sky.render(static_cast<std::uint64_t>(k), v, truth);
      }
      frames[k].allocate(row, size);
      cuda::check(cudaMemcpy2D(frames[k].data(), frames[k].pitch(), host[k].data(), row, row, size,
                               cudaMemcpyHostToDevice),
                  "upload");
    }
    for (const auto& [bg, line_length] : cases(o)) {
      starsift::DetectParams p;
      p.background = bg;
      p.line_length = line_length;
      auto stage = starsift::make_detect_stage(p, gpu);
      stage->configure_device(shape);
      cuda::DeviceImage out(row, size);
      cuda::DeviceImage result(stage->result_layout()->bytes(), 1);
      cuda::Stream stream;
      cuda::Event start, stop;
      std::vector<double> ms;
      for (int f = -5; f < o.frames; ++f) {
        const int k = (f + o.set * 10) % o.set;
        const starsift::ConstImageView in{frames[k].data(), size, size,
                                          static_cast<std::ptrdiff_t>(frames[k].pitch()),
                                          shape.format};
        // As the engines hand it: a stage that keeps its frame gets the input as `out`.
        const starsift::ImageView d_out =
            stage->keeps_frame()
                ? starsift::kept_frame_out(in)
                : starsift::ImageView{out.data(), size, size,
                                      static_cast<std::ptrdiff_t>(out.pitch()), shape.format};
        cuda::check(cudaEventRecord(start.get(), stream.get()), "record");
        stage->enqueue(in, d_out, stream.get());
        stage->enqueue_result({result.data(), stage->result_layout()->bytes()}, stream.get());
        cuda::check(cudaEventRecord(stop.get(), stream.get()), "record");
        cuda::check(cudaEventSynchronize(stop.get()), "sync");
        float t = 0.0f;
        cuda::check(cudaEventElapsedTime(&t, start.get(), stop.get()), "elapsed");
        if (f >= 0) ms.push_back(t);
      }
      starsift::ResultHeader header;
      cuda::check(cudaMemcpy(&header, result.data(), sizeof header, cudaMemcpyDeviceToHost),
                  "header");
      // The CPU reference on one frame, for scale.
      auto cpu = starsift::make_detect_stage(p, {starsift::Backend::Cpu, 0, "bench"});
      cpu->configure(shape);
      std::vector<std::uint16_t> cpu_out(static_cast<std::size_t>(size) * size);
      const starsift::ConstImageView hin{reinterpret_cast<const std::byte*>(host[0].data()), size,
                                         size, static_cast<std::ptrdiff_t>(row), shape.format};
      const starsift::ImageView hout{reinterpret_cast<std::byte*>(cpu_out.data()), size, size,
                                     static_cast<std::ptrdiff_t>(row), shape.format};
      const auto t0 = std::chrono::steady_clock::now();
      cpu->process(hin, hout);
      const double cpu_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      const double median = percentile(ms, 0.5);
      std::printf(
          "%d^2 %s, background %s, line-length %d: %.3f ms median, %.3f p90 (%.1f Gpix/s), "
          "%u objects, %u overflow; CPU reference %.1f ms\n",
          size, o.significance ? "significance" : "sky",
          std::string(starsift::to_string(bg)).c_str(), line_length, median, percentile(ms, 0.9),
          static_cast<double>(size) * size / median / 1e6, header.count, header.overflow, cpu_ms);
      Json run = Json::object();
      run.set("size", size);
      run.set("input", std::string(o.significance ? "significance" : "sky"));
      run.set("background", std::string(starsift::to_string(bg)));
      run.set("line_length", line_length);
      run.set("ms_median", median);
      run.set("ms_p90", percentile(ms, 0.9));
      run.set("objects", static_cast<double>(header.count));
      run.set("overflow", static_cast<double>(header.overflow));
      run.set("cpu_reference_ms", cpu_ms);
      runs.push(run);
    }
  }
  if (!o.json_path.empty()) {
    Json doc = Json::object();
    doc.set("benchmark", std::string("starsift-bench-detect"));
    doc.set("runs", runs);
    std::ofstream(o.json_path) << doc << "\n";
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "starsift-bench-detect: %s\n", e.what());
  return 1;
}
