// starsift-bench-detect: per-frame time of the CUDA detection stage's device form (what the
// streaming engine runs: background, filter, threshold, labels, per-object sums, catalogue),
// on 4096^2-class GRAY16 synthetic skies, beside the CPU reference on the same frames.
//
// Frames: a set of synthetic skies (siftskysrc's generator: stars with power-law fluxes, sky
// gradient, noise, movers) uploaded once and rotated beyond the L2. Every frame is timed by
// events around its enqueue() and enqueue_result() on one stream; the median and p90 are
// reported, and the objects found.
//
// Usage: starsift-bench-detect [--sizes 4096] [--frames 100] [--set 6]
//                              [--background mesh,none] [--json out.json]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
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
    } else if (a == "--json") {
      o.json_path = value();
    } else {
      throw starsift::Error("unknown option " + a, "--sizes --frames --set --background --json");
    }
  }
  return o;
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
    const starsift::FrameShape shape{size, size, starsift::PixelFormat::Gray16, sp.bit_depth};
    const std::size_t row = static_cast<std::size_t>(size) * 2;
    std::vector<std::vector<std::uint16_t>> host(
        o.set, std::vector<std::uint16_t>(static_cast<std::size_t>(size) * size));
    std::vector<cuda::DeviceImage> frames(o.set);
    starsift::SkyTruth truth;
    for (int k = 0; k < o.set; ++k) {
      const starsift::ImageView v{reinterpret_cast<std::byte*>(host[k].data()), size, size,
                                  static_cast<std::ptrdiff_t>(row), starsift::PixelFormat::Gray16};
      sky.render(static_cast<std::uint64_t>(k), v, truth);
      frames[k].allocate(row, size);
      cuda::check(cudaMemcpy2D(frames[k].data(), frames[k].pitch(), host[k].data(), row, row, size,
                               cudaMemcpyHostToDevice),
                  "upload");
    }
    for (const starsift::DetectBackground bg : o.backgrounds) {
      starsift::DetectParams p;
      p.background = bg;
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
        const starsift::ImageView d_out{out.data(), size, size,
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
          "%d^2 background %s: %.3f ms median, %.3f p90 (%.1f Gpix/s), %u objects, "
          "%u overflow; CPU reference %.1f ms\n",
          size, std::string(starsift::to_string(bg)).c_str(), median, percentile(ms, 0.9),
          static_cast<double>(size) * size / median / 1e6, header.count, header.overflow, cpu_ms);
      Json run = Json::object();
      run.set("size", size);
      run.set("background", std::string(starsift::to_string(bg)));
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
